"""The Sandbox protocol every backend implements, and the one error type they raise."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Protocol, Self, runtime_checkable

from tui_agent.errors import UserError
from tui_agent.sandbox.wire import ExecuteRequest, ExecuteResult


class SandboxError(UserError):
    """A sandbox that cannot be used; the message is one line saying why and what to do."""


@dataclass(frozen=True)
class BackendCheck:
    """Whether one backend works on this machine, and why (not)."""

    name: str
    ok: bool
    reason: str


def ensure_workspace(path: Path) -> Path:
    """`path` as an absolute, existing folder (created if missing) for a sandbox's /workspace."""
    path = Path(path).expanduser().resolve()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SandboxError(f"workspace {path} cannot be used: {exc.strerror or exc}") from exc
    return path


@runtime_checkable
class Sandbox(Protocol):
    """A place to run code whose globals persist between runs, like a notebook kernel."""

    name: str
    isolated: bool

    async def start(self) -> None:
        """Bring the sandbox up; raises SandboxError when it cannot start."""

    async def execute(self, request: ExecuteRequest) -> ExecuteResult:
        """Run one request; faults (timeout, crash) come back as results, never as hangs."""

    async def reset(self) -> None:
        """Forget all globals (a fresh interpreter)."""

    async def close(self) -> None:
        """Stop the sandbox and everything it started."""

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...
