"""Choosing a sandbox backend by name, and telling which backends work on this machine."""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tui_agent.config import load_settings
from tui_agent.sandbox.base import BackendCheck, Sandbox, SandboxError
from tui_agent.sandbox.bubblewrap import BubblewrapSandbox, bubblewrap_status
from tui_agent.sandbox.docker import DockerSandbox, prewarm_fresh, take_fresh
from tui_agent.sandbox.engine import image_status
from tui_agent.sandbox.folders.workspaces import fresh_workspace, session_workspace
from tui_agent.sandbox.limits import Limits, process_cap_note
from tui_agent.sandbox.local import LocalSandbox
from tui_agent.sandbox.quota import quota_status
from tui_agent.sandbox.wire import ExecuteRequest

SandboxFactory = Callable[..., Sandbox]
"""Builds an unstarted sandbox: `factory(*, workspace: Path, network: bool, limits: Limits)`."""

BACKENDS: dict[str, SandboxFactory] = {
    "docker": DockerSandbox,
    "bubblewrap": BubblewrapSandbox,
    "local": LocalSandbox,
}
"""Every backend by name."""

NAMES = ("auto", "docker", "bubblewrap", "local")
AUTO_ORDER = ("docker", "bubblewrap")
HOW_TO_GET_ONE = (
    "install bubblewrap (`apt-get install bubblewrap`), or start Docker and run "
    "`tui-agent sandbox build`; or pass `--sandbox local` to run without isolation"
)
TRIAL_TIMEOUT = 60.0


def backend_status(name: str) -> BackendCheck:
    """Whether backend `name` looks usable here, without starting a sandbox."""
    if name == "docker":
        ok, reason = image_status()
        reason = f"{reason}; {quota_status()[1]}" if ok else reason
    elif name == "bubblewrap":
        ok, reason = bubblewrap_status()
        reason = f"{reason}; {process_cap_note()}; {quota_status()[1]}" if ok else reason
    elif name == "local":
        ok, reason = True, f"a plain subprocess, NOT isolated; {process_cap_note()}"
    else:
        ok, reason = False, f"unknown backend; choose one of {', '.join(NAMES)}"
    if ok and name not in BACKENDS:
        ok, reason = False, f"the {name} backend is not part of this build"
    return BackendCheck(name, ok, reason)


def open_sandbox(
    name: str = "auto",
    *,
    workspace: Path | None = None,
    network: bool = False,
    limits: Limits | None = None,
) -> Sandbox:
    """An unstarted sandbox of backend `name` ("auto": docker, else bubblewrap), on the
    workspace the user named, or without one (None) on a fresh workspace of its own
    (folders/workspaces.py; for docker, the one `prewarm_fresh_workspace` readied, when it did).

    Without `limits`, the defaults with the configured workspace quota
    (`TUI_AGENT_WORKSPACE_QUOTA_MB`, `workspace_quota_mb` in config.toml).
    Raises SandboxError with one line saying what is missing and how to get it.
    """
    backend = choose_backend(name)
    limits = limits or default_limits()
    if workspace is not None:
        return BACKENDS[backend](
            workspace=session_workspace(workspace), network=network, limits=limits
        )
    spare = take_fresh(network=network, limits=limits) if backend == "docker" else None
    fresh = spare or fresh_workspace()
    try:
        return BACKENDS[backend](workspace=fresh, network=network, limits=limits)
    except BaseException:
        with contextlib.suppress(OSError):
            fresh.rmdir()
        raise


def default_limits() -> Limits:
    """The default limits with the configured workspace quota."""
    return Limits(workspace_quota_mb=load_settings().workspace_quota_mb)


def choose_backend(name: str) -> str:
    """The backend `name` stands for ("auto": docker, else bubblewrap), when it works here;
    else SandboxError saying what is missing and how to get it."""
    if name not in NAMES:
        raise SandboxError(f"unknown sandbox {name!r}; choose one of {', '.join(NAMES)}")
    if name == "auto":
        reasons = []
        for candidate in AUTO_ORDER:
            status = backend_status(candidate)
            if status.ok:
                return candidate
            reasons.append(f"{candidate}: {status.reason}")
        raise SandboxError(f"no isolated sandbox here ({'; '.join(reasons)}); {HOW_TO_GET_ONE}")
    if name not in BACKENDS:
        raise SandboxError(f"the {name} sandbox is not available: {backend_status(name).reason}")
    return name


def prewarm_fresh_workspace(name: str = "auto", *, network: bool = False) -> None:
    """Ready the next session's fresh workspace with a started container, when backend
    `name` is docker (or auto stands for docker here); nothing for other backends, which
    start in milliseconds."""
    with contextlib.suppress(SandboxError):
        if choose_backend(name) == "docker":
            prewarm_fresh(network=network, limits=default_limits())


def check_backends() -> list[BackendCheck]:
    """Every backend with whether it works here (a real run of `1 + 1`) and why (not).

    Safe to call from inside a running event loop: the trials run on their own loop in a thread.
    """
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, _trials()).result()


async def _trials() -> list[BackendCheck]:
    return [await _trial(name) for name in NAMES[1:]]


async def _trial(name: str) -> BackendCheck:
    status = backend_status(name)
    if not status.ok:
        return status
    with tempfile.TemporaryDirectory(prefix="tui-agent-check-") as folder:
        began = time.monotonic()
        try:
            async with BACKENDS[name](workspace=Path(folder), limits=default_limits()) as sandbox:
                started = time.monotonic() - began
                result = await sandbox.execute(ExecuteRequest(code="1 + 1", timeout=TRIAL_TIMEOUT))
        except SandboxError as exc:
            return BackendCheck(name, False, str(exc))
    if result.result != 2:
        why = result.error.message if result.error else f"it returned {result.result!r}"
        return BackendCheck(name, False, f"a trial run of 1 + 1 failed: {why}")
    return BackendCheck(name, True, f"{status.reason}; started in {started * 1000:.0f} ms")
