"""The Docker engine: reaching it, whether the sandbox image is there, and which containers are
ours (labelled with their owner's pid namespace, pid and start time, so that the containers of
a crashed owner can be told apart and removed)."""

from __future__ import annotations

import os
from pathlib import Path

import docker
import requests
from docker.errors import DockerException, ImageNotFound

from tui_agent.sandbox.base import SandboxError

IMAGE = "tui-agent-sandbox:latest"
RECIPE_LABEL = "tui-agent.recipe"
SANDBOX_LABEL = "tui-agent.sandbox"
OWNER_LABEL = "tui-agent.owner-pid"
OWNER_KEY_LABEL = "tui-agent.owner"

ENGINE_HINT = "start one with scripts/ensure-docker.sh (or `dockerd &` as root)"
IMAGE_HINT = "build it with `tui-agent sandbox build`"


def docker_client(timeout: float = 30.0) -> docker.DockerClient:
    """A client for the engine named by DOCKER_HOST (default: the local socket).

    Raises SandboxError with one line when the engine does not answer.
    """
    try:
        client = docker.from_env(timeout=int(max(1, timeout)))
        client.ping()
    except DockerException as exc:
        reason = f"docker engine not reachable: {first_line(exc)}; {ENGINE_HINT}"
        raise SandboxError(reason) from exc
    return client


def engine_status() -> tuple[bool, str]:
    """(ok, reason): whether a Docker engine answers, and which one."""
    try:
        client = docker_client(timeout=5)
    except SandboxError as exc:
        return False, str(exc)
    try:
        version = client.version().get("Version", "?")
    except DockerException as exc:
        return False, f"docker engine not usable: {first_line(exc)}"
    finally:
        client.close()
    return True, f"docker engine {version} answers at {client.api.base_url}"


def image_status(image: str = IMAGE) -> tuple[bool, str]:
    """(ok, reason): whether the engine answers and holds the sandbox image."""
    try:
        client = docker_client(timeout=5)
    except SandboxError as exc:
        return False, str(exc)
    try:
        found = client.images.get(image)
    except ImageNotFound:
        return False, f"image {image} not found; {IMAGE_HINT}"
    except DockerException as exc:
        return False, f"cannot inspect image {image}: {first_line(exc)}"
    finally:
        client.close()
    recipe = (found.labels or {}).get(RECIPE_LABEL, "unknown")
    size_mb = found.attrs.get("Size", 0) / 1e6
    return True, f"image {image} present ({size_mb:.0f} MB, recipe {recipe})"


def owner_key(pid: int | None = None) -> str | None:
    """'<pid namespace>:<pid>:<start time>' of a live process, or None when it is gone."""
    pid = os.getpid() if pid is None else pid
    try:
        namespace = os.readlink(f"/proc/{pid}/ns/pid")
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    start = stat.rsplit(")", 1)[1].split()[19]
    return f"{namespace}:{pid}:{start}"


def owner_labels() -> dict[str, str]:
    """The labels that tie a container to this process."""
    return {SANDBOX_LABEL: "1", OWNER_LABEL: str(os.getpid()), OWNER_KEY_LABEL: owner_key() or ""}


def cleanup_orphans(client: docker.DockerClient | None = None) -> int:
    """Remove sandbox containers whose owner process (in our pid namespace) is gone; return count.

    Containers of owners in other pid namespaces (another machine or container sharing the
    engine) are left alone.
    """
    own = client or docker_client()
    namespace = (owner_key() or "").rsplit(":", 2)[0]
    removed = 0
    try:
        listed = own.api.containers(all=True, filters={"label": SANDBOX_LABEL})
        for entry in listed:
            key = (entry.get("Labels") or {}).get(OWNER_KEY_LABEL, "")
            parts = key.rsplit(":", 2)
            if len(parts) != 3 or parts[0] != namespace or not parts[1].isdigit():
                continue
            if owner_key(int(parts[1])) != key and remove_container(own, entry["Id"]):
                removed += 1
    finally:
        if client is None:
            own.close()
    return removed


def remove_container(client: docker.DockerClient, container_id: str) -> bool:
    """Force-remove; False when it is already gone or going (or the engine has gone away)."""
    try:
        client.api.remove_container(container_id, force=True)
    except (DockerException, requests.RequestException):
        return False
    return True


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (its type when the message is empty)."""
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]
