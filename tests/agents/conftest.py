"""Fixtures for the CodeAct agent: the scripted model server, a real sandbox, a real store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from codeact_support import MODEL, sandbox_backend
from support.scripted_model import ScriptedModel

from tui_agent.config import Settings


@pytest.fixture
def backend() -> str:
    return sandbox_backend()


@pytest.fixture
def server() -> Iterator[ScriptedModel]:
    with ScriptedModel() as scripted:
        yield scripted


@pytest.fixture
def settings(tmp_path: Path, server: ScriptedModel, backend: str) -> Settings:
    """Settings reaching the scripted server, with the chosen sandbox and a temporary store."""
    return Settings(
        model=server.model(MODEL),
        api_base=server.api_base,
        db=tmp_path / "sessions.db",
        sandbox=backend,  # type: ignore[arg-type]
        workspace=tmp_path / "workspace",
    )
