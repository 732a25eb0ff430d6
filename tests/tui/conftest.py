"""Fixtures of the TUI tests (the session builders are in session_factory.py)."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, TextArea

RunBefore = Callable[[Pilot[Any]], Awaitable[None] | None]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "sessions.db"


@pytest.fixture
def refined_db(db_path: Path) -> Path:
    """A stored scrape session (id REFINED) whose feedback was refined: a candidate waits for
    review."""
    from artifact_factory import REFINED, refinement_of_price, scrape_started, scrape_with_artifacts
    from session_factory import at_fixed_times, store_events

    from tui_agent.events import SessionEnded

    payloads = scrape_with_artifacts() + refinement_of_price()
    events = at_fixed_times(REFINED, scrape_started(), payloads, SessionEnded(status="completed"))
    asyncio.run(store_events(db_path, events))
    return db_path


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


@pytest.fixture
def snap_compare(snap_compare: Callable[..., bool]) -> Callable[..., bool]:
    """pytest-textual-snapshot's `snap_compare`, with every text cursor steady in the
    screenshot: a blinking cursor is caught on or off by chance (a flake, not a change)."""

    def compare(app: Any, *args: Any, run_before: RunBefore | None = None, **kw: Any) -> bool:
        async def steady(pilot: Pilot[Any]) -> None:
            if run_before is not None:
                started = run_before(pilot)
                if inspect.isawaitable(started):
                    await started
            for screen in pilot.app.screen_stack:
                for widget in screen.query("Input, TextArea"):
                    if isinstance(widget, Input | TextArea):
                        widget.cursor_blink = False

        return snap_compare(app, *args, run_before=steady, **kw)

    return compare
