"""The `docker` backend: the kernel as the main process of a locked-down container.

Each sandbox takes a pre-started container from the warm pool (pool.py) and talks to its kernel
over the engine's attach stream: requests go to the kernel's stdin, and its stdout (protocol)
and stderr (diagnostics) come back multiplexed in 8-byte-header frames, split here. No `docker
exec` per run: a round trip is one line each way through a socket that stays open. When a run
overruns or the kernel dies, the container is removed and a fresh one taken from the pool.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import threading
from pathlib import Path

import requests
from docker.errors import DockerException
from docker.models.containers import Container

from tui_agent.sandbox.base import SandboxError, ensure_workspace
from tui_agent.sandbox.engine import IMAGE
from tui_agent.sandbox.folders.hosted import hosted_folder
from tui_agent.sandbox.folders.owner import sandbox_owner
from tui_agent.sandbox.folders.workspaces import fresh_workspace
from tui_agent.sandbox.image import KERNEL_PATH
from tui_agent.sandbox.limits import ADDRESS_SPACE_ENV, Limits
from tui_agent.sandbox.pool import Attached, ContainerPool, ContainerSpec, shared_pool
from tui_agent.sandbox.process import (
    EXIT_TIMEOUT,
    KERNEL_FILE,
    MAX_RESULT_BYTES,
    Connection,
    KernelSandbox,
    signal_reason,
)
from tui_agent.sandbox.quota import SandboxQuota

STDERR_FRAME = 2


class DockerSandbox(KernelSandbox):
    """Runs code in a container: no network unless asked, capped memory, CPU and processes,
    read-only root, private /tmp, `workspace` at /workspace (capped by a quota where quota.py
    can make one), the host's files for it read-only at /toolcode (folders/hosted.py), a non-root
    user, no capabilities.
    """

    name = "docker"
    isolated = True

    def __init__(
        self,
        *,
        workspace: Path,
        network: bool = False,
        limits: Limits | None = None,
        cpus: float = 1.0,
        image: str = IMAGE,
        pool: ContainerPool | None = None,
    ) -> None:
        self.limits = limits or Limits()
        self.workspace = ensure_workspace(workspace)
        self.hosted = hosted_folder(self.workspace)
        self.spec = ContainerSpec(
            workspace=str(self.workspace),
            kernel=str(KERNEL_FILE),
            command=kernel_argv(self.limits),
            hosted=str(self.hosted.host),
            image=image,
            network=network,
            memory_mb=self.limits.memory_mb,
            cpus=cpus,
            pids=self.limits.processes,
            tmp_size_mb=self.limits.tmp_size_mb,
            user=":".join(str(part) for part in sandbox_owner(self.workspace)),
            quota_mb=self.limits.workspace_quota_mb,
            env=tuple(ADDRESS_SPACE_ENV.items()),
        )
        self.launcher: DockerLauncher = DockerLauncher(self.spec, pool)
        super().__init__(self.launcher)

    @property
    def container_id(self) -> str | None:
        """The id of the container running now, if any."""
        return self.launcher.container_id


def prewarm(
    *,
    workspace: Path,
    network: bool = False,
    limits: Limits | None = None,
    pool: ContainerPool | None = None,
) -> None:
    """Keep containers ready for sandboxes opened with these options, so that their sessions,
    resets and restarts start warm."""
    sandbox = DockerSandbox(workspace=workspace, network=network, limits=limits, pool=pool)
    (pool or shared_pool()).prewarm(sandbox.spec)


_spares: dict[str, Path] = {}
_spares_lock = threading.Lock()


def prewarm_fresh(
    *, network: bool = False, limits: Limits | None = None, pool: ContainerPool | None = None
) -> None:
    """Keep a fresh workspace ready, with a started container on it, for the next session
    opened with these options and no workspace of the user's (`take_fresh`): sessions have
    a workspace each, so a container can only be warm for the next one if its folder is made
    ahead. The TUI calls this when its new-session form opens."""
    key = _spare_key(network, limits)
    with _spares_lock:
        if key in _spares:
            return
        workspace = fresh_workspace()
        _spares[key] = workspace
    prewarm(workspace=workspace, network=network, limits=limits, pool=pool)


def take_fresh(*, network: bool = False, limits: Limits | None = None) -> Path | None:
    """The fresh workspace `prewarm_fresh` readied for these options, if any (taken once)."""
    with _spares_lock:
        return _spares.pop(_spare_key(network, limits), None)


def _spare_key(network: bool, limits: Limits | None) -> str:
    return f"{network} {(limits or Limits()).model_dump_json()}"


@atexit.register
def _remove_spares() -> None:
    """Delete the readied workspaces no session took (registered before any pool, so it runs
    after the pools have removed their containers)."""
    with _spares_lock:
        left = list(_spares.values())
        _spares.clear()
    for workspace in left:
        with contextlib.suppress(OSError):
            workspace.rmdir()


def kernel_argv(limits: Limits) -> tuple[str, ...]:
    """The container's command: the mounted kernel with these limits.

    The process count is left to the container's pids cgroup: RLIMIT_NPROC counts every process
    of the uid on the whole machine, so one sandbox's fork bomb would starve the others.
    """
    config = {
        "limits": {**limits.kernel_config(), "processes": None},
        "max_result_bytes": MAX_RESULT_BYTES,
    }
    return ("python3", "-B", KERNEL_PATH, json.dumps(config, separators=(",", ":")))


class DockerLauncher:
    """Takes containers from the pool and speaks to their kernel over the attach socket.

    Holds the workspace's quota from the first start to `close`, so that restarts keep it.
    """

    def __init__(self, spec: ContainerSpec, pool: ContainerPool | None = None) -> None:
        self.spec = spec
        self._pool = pool
        self._quota = SandboxQuota(Path(spec.workspace), spec.quota_mb, spec.owner)
        self._attached: Attached | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._splitter: asyncio.Task[None] | None = None

    @property
    def container_id(self) -> str | None:
        """The id of the current container, if any."""
        return self._attached.container.id if self._attached else None

    async def spawn(self) -> Connection:
        if self._pool is None:
            self._pool = await asyncio.to_thread(shared_pool)
        await self._quota.take()
        attached = await self._pool.acquire(self.spec)
        self._attached = attached
        try:
            source, self._writer = await asyncio.open_connection(sock=attached.sock)
        except OSError as exc:
            await self.stop()
            raise SandboxError(f"cannot talk to the sandbox container: {exc}") from exc
        responses = asyncio.StreamReader()
        diagnostics = asyncio.StreamReader()
        self._splitter = asyncio.create_task(demultiplex(source, responses, diagnostics))
        return Connection(self._writer, responses, diagnostics)

    async def started(self) -> None:
        """Nothing to do: the container's cgroup already holds every process."""

    async def stop(self) -> None:
        attached, self._attached = self._attached, None
        writer, self._writer = self._writer, None
        splitter, self._splitter = self._splitter, None
        if writer is not None:
            writer.close()
        if splitter is not None:
            splitter.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await splitter
        if attached is not None and self._pool is not None:
            await self._pool.discard(attached)

    async def exit_reason(self) -> str:
        if self._attached is None:
            return "kernel not started"
        container = self._attached.container
        return await asyncio.to_thread(_exit_reason, container, self.spec.memory_mb)

    async def close(self) -> None:
        await self.stop()
        await self._quota.release()


async def demultiplex(
    source: asyncio.StreamReader, stdout: asyncio.StreamReader, stderr: asyncio.StreamReader
) -> None:
    """Split the engine's attach stream (8-byte header: stream, 0, 0, 0, size) into two."""
    try:
        while True:
            header = await source.readexactly(8)
            size = int.from_bytes(header[4:8], "big")
            payload = await source.readexactly(size) if size else b""
            (stderr if header[0] == STDERR_FRAME else stdout).feed_data(payload)
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        stdout.feed_eof()
        stderr.feed_eof()


def _exit_reason(container: Container, memory_mb: int) -> str:
    """Why the container's kernel is gone, from the engine's record of its end."""
    try:
        container.wait(timeout=EXIT_TIMEOUT)
        container.reload()
    except (DockerException, requests.RequestException):
        return "kernel closed its protocol pipe and stopped answering"
    state = container.attrs.get("State", {})
    if state.get("Running"):
        return "kernel closed its protocol pipe and stopped answering"
    if state.get("OOMKilled"):
        return f"kernel died (out of memory: the sandbox's {memory_mb} MiB limit)"
    code = int(state.get("ExitCode", 0))
    if code > 128:
        return signal_reason(code - 128)
    return f"kernel exited with code {code}"
