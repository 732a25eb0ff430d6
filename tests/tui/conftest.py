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
