"""Fixtures of the TUI tests (the session builders are in session_factory.py)."""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path

import pytest


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "sessions.db"


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterable[None]:
    """Local time is UTC (the home table shows local start times)."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture(autouse=True)
def new_session_form_opens_on_code() -> Iterable[None]:
    """The form remembers the last kind started (a class attribute): each test starts fresh."""
    from tui_agent.tui.screens.new_session import NewSessionModal

    NewSessionModal.last_kind = "code"
    yield
    NewSessionModal.last_kind = "code"
