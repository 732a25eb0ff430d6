"""Fixtures for the CodeAct agent: a real sandbox and a real store (the scripted model
server is the project-wide `server`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.requirements import sandbox_backend
from support.scripted_model import ScriptedModel
from support.sessions import scripted_settings

from tui_agent.config import Settings


@pytest.fixture
def backend() -> str:
    return sandbox_backend()


@pytest.fixture
def settings(tmp_path: Path, server: ScriptedModel, backend: str) -> Settings:
    """Settings reaching the scripted server, with the chosen sandbox and a temporary store."""
    return scripted_settings(server, tmp_path, backend)
