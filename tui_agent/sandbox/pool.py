"""Sandbox containers: how they run, a warm pool of pre-started ones, and orphan cleanup.

A container runs the kernel as its main process (under docker-init) with stdin open. The pool
attaches to it before starting it, so nothing the kernel says is lost and no log driver keeps a
copy; the attach socket is handed out with the container. When the owner dies, the socket
closes, the kernel reads end-of-file and the container stops.

Every container is labelled with its owner (engine.owner_labels). The pool removes all it made
on close (and at interpreter exit); containers left behind by a crashed owner are removed by
`engine.cleanup_orphans()`, which `shared_pool()` runs when first used.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import select
import socket
import ssl
import threading
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from pathlib import Path

import docker
from docker.errors import DockerException, ImageNotFound
from docker.models.containers import Container

from tui_agent.sandbox import quota
from tui_agent.sandbox.base import SandboxError
from tui_agent.sandbox.engine import (
    IMAGE,
    IMAGE_HINT,
    cleanup_orphans,
    docker_client,
    first_line,
    owner_labels,
    remove_container,
)
from tui_agent.sandbox.folders.hosted import HOSTED_PATH
from tui_agent.sandbox.image import KERNEL_PATH, SANDBOX_USER, WORKSPACE_PATH
from tui_agent.sandbox.quota import QuotaHold

ATTACH = {"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
READY_TIMEOUT = 30.0


@dataclass(frozen=True)
class ContainerSpec:
    """Everything that decides how a sandbox container runs; equal specs share warm containers."""

    workspace: str
    kernel: str
    command: tuple[str, ...]
    hosted: str = ""
    """The host's files for the sandbox, a folder mounted read-only (folders/hosted.py)."""
    image: str = IMAGE
    network: bool = False
    memory_mb: int = 1024
    cpus: float = 1.0
    pids: int = 128
    tmp_size_mb: int = 256
    user: str = SANDBOX_USER
    env: tuple[tuple[str, str], ...] = ()
    quota_mb: int = 0

    @property
    def owner(self) -> tuple[int, int]:
        """`user` as (uid, gid)."""
        uid, gid = self.user.split(":")
        return int(uid), int(gid)

    def hold_quota(self) -> QuotaHold | None:
        """A hold on the workspace's quota (see quota.py), for one container."""
        return quota.hold(Path(self.workspace), self.quota_mb, self.owner)

    def run_options(self) -> dict:
        """Keyword arguments for `client.containers.create`."""
        volumes = {
            self.workspace: {"bind": WORKSPACE_PATH, "mode": "rw"},
            self.kernel: {"bind": KERNEL_PATH, "mode": "ro"},
        }
        if self.hosted:
            volumes[self.hosted] = {"bind": HOSTED_PATH, "mode": "ro"}
        return {
            "image": self.image,
            "command": list(self.command),
            "stdin_open": True,
            "tty": False,
            "init": True,
            "network_mode": "bridge" if self.network else "none",
            # Without a network, names are looked up on the container's own loopback, not at
            # the host's resolver (whose address is outside the sandbox).
            "dns": [] if self.network else ["127.0.0.1"],
            "mem_limit": f"{self.memory_mb}m",
            "memswap_limit": f"{self.memory_mb}m",
            "nano_cpus": int(self.cpus * 1e9),
            "pids_limit": self.pids,
            "read_only": True,
            "tmpfs": {"/tmp": f"rw,nosuid,nodev,size={self.tmp_size_mb}m"},
            "volumes": volumes,
            "working_dir": WORKSPACE_PATH,
            "user": self.user,
            "environment": dict(self.env),
            "security_opt": ["no-new-privileges"],
            "cap_drop": ["ALL"],
            "hostname": "sandbox",
            "log_config": {"type": "none"},
            "labels": owner_labels(),
        }


@dataclass
class Attached:
    """A started container, the socket attached to its kernel's stdin, stdout and stderr, and
    its hold on the workspace's quota."""

    container: Container
    sock: socket.socket
    quota: QuotaHold | None = None

    def close_socket(self) -> None:
        """Close our end; the kernel then reads end-of-file."""
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()


@dataclass
class _Warm:
    ready: deque[Attached] = field(default_factory=deque)
    filling: bool = False
    evicted: bool = False


class ContainerPool:
    """Pre-started containers per spec, so that a new session does not wait for one.

    Containers are single-use: `acquire` hands one out, `discard` removes it. A spec is kept
    warm (`size` containers whose kernel has said it is ready) once it is asked for a second
    time or `prewarm`ed, so one-off sandboxes cost no spare container while a session's
    restarts and the next session on the same workspace start warm; only the `max_specs` most
    recently used specs are kept warm. Works from any event loop (or none): the engine is
    called from threads. `close` (also run at interpreter exit) removes every container made.
    """

    def __init__(
        self, size: int = 1, *, max_specs: int = 2, client: docker.DockerClient | None = None
    ) -> None:
        self.size = size
        self.max_specs = max_specs
        self._client = client
        self._lock = threading.Lock()
        self._warm: OrderedDict[ContainerSpec, _Warm] = OrderedDict()
        self._made: dict[str, Attached] = {}
        self._closed = False
        atexit.register(self.close)

    @property
    def client(self) -> docker.DockerClient:
        """The engine client, connected on first use."""
        if self._client is None:
            self._client = docker_client()
        return self._client

    @property
    def closed(self) -> bool:
        """Whether `close` ran."""
        return self._closed

    def prewarm(self, spec: ContainerSpec) -> None:
        """Keep `spec` warm from now on: start its containers in the background."""
        with self._lock:
            if self._closed:
                return
            evicted = self._touch(spec)
        self._remove_all(evicted)
        self._refill(spec)

    def warm_count(self, spec: ContainerSpec) -> int:
        """How many started containers wait for `spec` right now."""
        with self._lock:
            warm = self._warm.get(spec)
            return len(warm.ready) if warm else 0

    def container_ids(self) -> set[str]:
        """Ids of the containers this pool made and has not removed."""
        with self._lock:
            return set(self._made)

    async def acquire(self, spec: ContainerSpec) -> Attached:
        """A started, attached container for `spec`: a warm one when ready, else a new one."""
        with self._lock:
            if self._closed:
                raise SandboxError("the sandbox container pool is closed")
            seen = spec in self._warm
            evicted = self._touch(spec)
            warm = self._warm[spec]
            attached = warm.ready.popleft() if warm.ready else None
        if evicted:
            await asyncio.to_thread(self._remove_all, evicted)
        if attached is None:
            attached = await self._start_owned(spec)
        if seen:
            self._refill(spec)
        return attached

    async def _start_owned(self, spec: ContainerSpec) -> Attached:
        """A new container for the caller; when the caller is cancelled while it starts (in
        a thread, which cannot be stopped), it is removed once started, not left running with
        its quota hold until the pool closes."""
        starting = asyncio.ensure_future(asyncio.to_thread(self._start, spec))
        try:
            return await asyncio.shield(starting)
        except asyncio.CancelledError:
            starting.add_done_callback(self._discard_unclaimed)
            raise

    def _discard_unclaimed(self, starting: asyncio.Future[Attached]) -> None:
        if not starting.cancelled() and starting.exception() is None:
            attached = starting.result()
            threading.Thread(target=self._discard, args=(attached,), daemon=True).start()

    async def discard(self, attached: Attached) -> None:
        """Kill and remove a container handed out by `acquire`."""
        await asyncio.to_thread(self._discard, attached)

    def close(self) -> None:
        """Remove every container this pool made; later acquires fail."""
        with self._lock:
            self._closed = True
            made = list(self._made.values())
            self._made.clear()
            self._warm.clear()
        self._remove_all(made)
        atexit.unregister(self.close)

    def _touch(self, spec: ContainerSpec) -> list[Attached]:
        """Mark `spec` most recently used; evict the oldest specs beyond `max_specs`.

        Called with the lock held; returns the evicted warm containers, to be removed.
        """
        self._warm[spec] = self._warm.pop(spec) if spec in self._warm else _Warm()
        evicted: list[Attached] = []
        while len(self._warm) > self.max_specs:
            _, old = self._warm.popitem(last=False)
            old.evicted = True
            evicted += old.ready
            old.ready.clear()
        for attached in evicted:
            self._made.pop(attached.container.id, None)
        return evicted

    def _discard(self, attached: Attached) -> None:
        with self._lock:
            self._made.pop(attached.container.id, None)
        self._remove_all([attached])

    def _remove_all(self, made: list[Attached]) -> None:
        for attached in made:
            attached.close_socket()
            remove_container(self.client, attached.container.id)
            if attached.quota is not None:
                # A failed copy-back keeps the image, which the next process copies back.
                with contextlib.suppress(SandboxError):
                    attached.quota.release()

    def _start(self, spec: ContainerSpec) -> Attached:
        hold = spec.hold_quota()
        try:
            container = self.client.containers.create(**spec.run_options())
        except DockerException as exc:
            if hold is not None:
                hold.release()
            if isinstance(exc, ImageNotFound):
                raise SandboxError(f"image {spec.image} not found; {IMAGE_HINT}") from exc
            raise SandboxError(f"cannot create a sandbox container: {first_line(exc)}") from exc
        try:
            attached = Attached(container, _attach(self.client, container.id), hold)
        except (DockerException, SandboxError) as exc:
            remove_container(self.client, container.id)
            if hold is not None:
                hold.release()
            raise SandboxError(f"cannot attach to a sandbox container: {first_line(exc)}") from exc
        with self._lock:
            self._made[container.id] = attached
        try:
            container.start()
        except DockerException as exc:
            self._discard(attached)
            raise SandboxError(f"cannot start a sandbox container: {first_line(exc)}") from exc
        if self._closed:
            self._discard(attached)
            raise SandboxError("the sandbox container pool is closed")
        return attached

    def _refill(self, spec: ContainerSpec) -> None:
        with self._lock:
            warm = self._warm.get(spec)
            if self._closed or warm is None or warm.filling or len(warm.ready) >= self.size:
                return
            warm.filling = True
        threading.Thread(target=self._fill, args=(spec, warm), daemon=True).start()

    def _fill(self, spec: ContainerSpec, warm: _Warm) -> None:
        try:
            while True:
                with self._lock:
                    if self._closed or warm.evicted or len(warm.ready) >= self.size:
                        return
                try:
                    attached = self._start(spec)
                except SandboxError:
                    return  # acquire() starts one itself and reports the error
                if not _answers(attached, READY_TIMEOUT):
                    self._discard(attached)
                    return
                with self._lock:
                    keep = not (self._closed or warm.evicted)
                    if keep:
                        warm.ready.append(attached)
                if not keep:
                    self._discard(attached)
                    return
        finally:
            with self._lock:
                warm.filling = False


_shared: ContainerPool | None = None
_shared_lock = threading.Lock()


def shared_pool() -> ContainerPool:
    """The process-wide pool (created on first use, after removing orphaned containers)."""
    global _shared
    with _shared_lock:
        if _shared is None or _shared.closed:
            pool = ContainerPool()
            cleanup_orphans(pool.client)
            _shared = pool
        return _shared


def close_shared_pool() -> None:
    """Remove the shared pool's containers now (the app's exit path; atexit does it otherwise)."""
    with _shared_lock:
        pool = _shared
    if pool is not None:
        pool.close()


def _attach(client: docker.DockerClient, container_id: str) -> socket.socket:
    """A socket of our own on the engine's attach stream (stdin in, multiplexed output out)."""
    hijacked = client.api.attach_socket(container_id, params=dict(ATTACH))
    raw = getattr(hijacked, "_sock", hijacked)
    if not isinstance(raw, socket.socket) or isinstance(raw, ssl.SSLSocket):
        hijacked.close()
        raise SandboxError("the docker backend needs a local engine (a unix or plain tcp socket)")
    own = socket.socket(raw.family, raw.type, fileno=os.dup(raw.fileno()))
    hijacked.close()
    raw.close()
    return own


def _answers(attached: Attached, timeout: float) -> bool:
    """Wait until the kernel has said something (its ready line), without reading it."""
    readable, _, _ = select.select([attached.sock], [], [], timeout)
    return bool(readable)
