"""Snapshots of the home, session (live and finished) and replay screens.

Sessions carry fixed ids and timestamps (session_factory.fixed_sessions), local time is UTC,
and the live screen's clock is pinned to 83 s after its session started.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from session_factory import (
    agent_of,
    codeact_payloads,
    fixed_sessions,
    started,
    store_events,
    wait_until,
)
from textual.pilot import Pilot

from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.screens.replay import ReplayScreen
from tui_agent.tui.screens.session import SessionScreen

pytestmark = pytest.mark.usefixtures("utc")


@pytest.fixture
def stored(db_path: Path) -> Path:
    """The database with the three fixed sessions."""
    for events in fixed_sessions():
        asyncio.run(store_events(db_path, events))
    return db_path


class PinnedClock:
    """Wall time pinned to `offset` seconds after `base` (set once the session started)."""

    def __init__(self, offset: float) -> None:
        self.base = 0.0
        self.offset = offset

    def __call__(self) -> float:
        return self.base + self.offset


def test_home_at_80x24(snap_compare: Any, stored: Path) -> None:
    assert snap_compare(TuiAgentApp(stored), terminal_size=(80, 24))


def test_home_wide_shows_items_and_tokens(snap_compare: Any, stored: Path) -> None:
    assert snap_compare(TuiAgentApp(stored), terminal_size=(130, 12))


def test_home_empty_says_what_to_do(
    snap_compare: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # the database path shows as ~/fresh.db
    assert snap_compare(TuiAgentApp(tmp_path / "fresh.db"), terminal_size=(80, 16))


def test_session_after_final_answer(snap_compare: Any, stored: Path) -> None:
    app = TuiAgentApp(stored, open_session="c0de000000a1")

    async def opened(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, SessionScreen))

    assert snap_compare(app, terminal_size=(100, 40), run_before=opened)


def test_session_live_mid_stream(snap_compare: Any, db_path: Path) -> None:
    clock = PinnedClock(83.0)
    app = TuiAgentApp(db_path, clock=clock)
    payloads = codeact_payloads()[:11]  # up to the second execution, still running
    app.start_session(
        started(), agent_of(payloads, hold=asyncio.Event()), session_id="11fe00000001"
    )

    async def mid_stream(pilot: Pilot[Any]) -> None:
        def received() -> bool:
            screen = pilot.app.screen
            return isinstance(screen, SessionScreen) and screen.shown_seq == 12

        await wait_until(pilot, received)
        screen = pilot.app.screen
        assert isinstance(screen, SessionScreen)
        clock.base = screen.state.started_at
        screen.refresh_status()

    assert snap_compare(app, terminal_size=(100, 32), run_before=mid_stream)


def test_replay_screen_part_way(snap_compare: Any, stored: Path) -> None:
    app = TuiAgentApp(stored, replay_session="c0de")

    async def stepped(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, ReplayScreen))
        await pilot.press(*["right"] * 10, "plus")
        screen = pilot.app.screen
        assert isinstance(screen, ReplayScreen)
        await wait_until(pilot, lambda: screen.replay.position == 10)

    assert snap_compare(app, terminal_size=(100, 32), run_before=stepped)
