"""Sandbox tests run against every backend registered in `choose.BACKENDS`.

A backend that is missing here is skipped with its reason, except under CI (CI=true), where a
missing backend fails its tests instead.
"""

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from support.requirements import require_backend

from tui_agent.sandbox.base import Sandbox
from tui_agent.sandbox.choose import BACKENDS
from tui_agent.sandbox.limits import Limits

TEST_LIMITS = Limits(memory_mb=512, processes=64, file_size_mb=16, cpu_seconds=30, tmp_size_mb=32)
MARKS = {"docker": [pytest.mark.docker]}
RLIMIT_BACKENDS = ("local", "bubblewrap")
"""Backends whose limits are the kernel's rlimits (docker's are the container's cgroups)."""
Opener = Callable[..., AbstractAsyncContextManager[Sandbox]]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture
def test_limits() -> Limits:
    return TEST_LIMITS


@pytest.fixture
def open_backend(workspace: Path) -> Opener:
    """`async with open_backend(name, **options)`: a started sandbox with the test limits."""

    @asynccontextmanager
    async def opener(name: str, **options: Any) -> AsyncIterator[Sandbox]:
        require_backend(name)
        options.setdefault("limits", TEST_LIMITS)
        async with BACKENDS[name](workspace=workspace, **options) as sandbox:
            yield sandbox

    return opener


@pytest.fixture(params=[pytest.param(name, marks=MARKS.get(name, [])) for name in sorted(BACKENDS)])
async def sandbox(request: pytest.FixtureRequest, open_backend: Opener) -> AsyncIterator[Sandbox]:
    async with open_backend(request.param) as started:
        yield started


@pytest.fixture(params=RLIMIT_BACKENDS)
def rlimit_backend(request: pytest.FixtureRequest) -> str:
    """The name of each backend whose limits are the kernel's own rlimits."""
    return request.param
