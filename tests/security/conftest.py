"""Security tests, run against each isolating backend (docker and bubblewrap).

A backend that does not work here is skipped with its reason, except under CI (CI=true),
where it fails instead; so is the workspace quota. Every sandbox starts with FAKE_API_KEY set
in the host environment.
"""

import textwrap
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from support.requirements import require, require_backend

from tui_agent.sandbox.base import Sandbox
from tui_agent.sandbox.choose import BACKENDS
from tui_agent.sandbox.limits import Limits
from tui_agent.sandbox.quota import quota_status
from tui_agent.sandbox.wire import ExecuteRequest, ExecuteResult

LIMITS = Limits(
    memory_mb=256,
    processes=64,
    file_size_mb=8,
    cpu_seconds=20,
    tmp_size_mb=16,
    workspace_quota_mb=24,
)
ISOLATING = (pytest.param("docker", marks=pytest.mark.docker), "bubblewrap")


@pytest.fixture
def host_secret(monkeypatch: pytest.MonkeyPatch) -> str:
    """A fake API key in the host environment, as a user's real one would be."""
    secret = f"sk-fake-{uuid.uuid4().hex}"
    monkeypatch.setenv("FAKE_API_KEY", secret)
    return secret


@pytest.fixture
def limits() -> Limits:
    """The limits every sandbox here runs with."""
    return LIMITS


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture(params=ISOLATING)
def backend(request: pytest.FixtureRequest) -> str:
    """The name of each isolating backend, when it works here."""
    require_backend(request.param)
    return request.param


@pytest.fixture
def quota_here() -> None:
    """The workspace quota works here (else skip, or under CI fail)."""
    ok, reason = quota_status()
    require(ok, "the workspace quota", reason)


@pytest.fixture
async def sandbox(backend: str, workspace: Path, host_secret: str) -> AsyncIterator[Sandbox]:
    async with BACKENDS[backend](workspace=workspace, network=False, limits=LIMITS) as box:
        yield box


Run = Callable[..., Awaitable[ExecuteResult]]


@pytest.fixture
def run(sandbox: Sandbox) -> Run:
    """`await run(code, **fields)`: execute dedented `code` (10 s timeout unless given)."""

    async def execute(code: str, **fields: Any) -> ExecuteResult:
        fields.setdefault("timeout", 10)
        return await sandbox.execute(ExecuteRequest(code=textwrap.dedent(code), **fields))

    return execute


@pytest.fixture
def assert_usable(run: Run) -> Callable[[], Awaitable[None]]:
    """`await assert_usable()`: the sandbox still runs code after what the test did to it."""

    async def check() -> None:
        after = await run("1 + 1")
        assert after.success and after.result == 2, after.error
        assert not after.state_lost

    return check
