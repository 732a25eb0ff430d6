"""Snapshots of batches at 80x24 and 120x36: the batch screen of a batch under way and of one
that ended with failures, an eval batch's checks, a batch replayed, and the home screen
grouping a batch's item sessions under it (one batch expanded, one not).

The batches are recorded at fixed times (batch_factory.py); local time is UTC.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from batch_factory import EVAL_ITEMS, RECIPE_ITEMS, Outcome, batch_sessions
from session_factory import T0, fixed_sessions, store_events, wait_until
from textual.pilot import Pilot

from tui_agent.events import Event
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.batch.replay import BatchReplayScreen
from tui_agent.tui.batch.screen import BatchScreen
from tui_agent.tui.screens.home import HomeScreen
from tui_agent.tui.widgets.sessions_table import SessionsTable

pytestmark = pytest.mark.usefixtures("utc")
SIZES = pytest.mark.parametrize("size", [(80, 24), (120, 36)], ids=["80x24", "120x36"])
FINISHED = "ba7c40000001"
RUNNING = "ba7c40000002"
EVAL = "e7a100000003"
UNDER_WAY = [
    *RECIPE_ITEMS[:3],
    (RECIPE_ITEMS[3][0], Outcome("started")),
    (RECIPE_ITEMS[4][0], Outcome("started")),
    (RECIPE_ITEMS[5][0], Outcome("queued")),
]
"""Two items finished, one failed, two running, one waiting."""


def stored(db_path: Path, *sessions: list[Event]) -> Path:
    for events in sessions:
        asyncio.run(store_events(db_path, events))
    return db_path


async def batch_shown(pilot: Pilot[Any]) -> None:
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, BatchScreen))
    screen = pilot.app.screen
    await wait_until(pilot, lambda: screen.state.event_count > 0)
    await pilot.pause()


@SIZES
def test_a_batch_under_way(snap_compare: Any, db_path: Path, size: tuple[int, int]) -> None:
    db = stored(db_path, *batch_sessions(RUNNING, UNDER_WAY, ended=False))
    app = TuiAgentApp(db, open_session=RUNNING)
    assert snap_compare(app, terminal_size=size, run_before=batch_shown)


@SIZES
def test_a_batch_that_ended_with_failures(
    snap_compare: Any, db_path: Path, size: tuple[int, int]
) -> None:
    db = stored(db_path, *batch_sessions(FINISHED, RECIPE_ITEMS))
    app = TuiAgentApp(db, open_session=FINISHED)

    async def on_a_failure(pilot: Pilot[Any]) -> None:
        await batch_shown(pilot)
        await pilot.press("down", "down")  # the line under the table says why item 3 failed

    assert snap_compare(app, terminal_size=size, run_before=on_a_failure)


def test_an_eval_batch_says_which_answers_passed(snap_compare: Any, db_path: Path) -> None:
    db = stored(db_path, *batch_sessions(EVAL, EVAL_ITEMS, of="eval"))
    app = TuiAgentApp(db, open_session=EVAL)
    assert snap_compare(app, terminal_size=(100, 16), run_before=batch_shown)


@SIZES
def test_home_lists_item_sessions_under_their_batch(
    snap_compare: Any, db_path: Path, size: tuple[int, int]
) -> None:
    db = stored(
        db_path,
        *fixed_sessions(),
        *batch_sessions(FINISHED, RECIPE_ITEMS, start=T0 + 9000),
        *batch_sessions(RUNNING, UNDER_WAY, ended=False, start=T0 + 10800),
    )
    app = TuiAgentApp(db)

    async def expanded(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, HomeScreen))
        table = pilot.app.screen.query_one(SessionsTable)
        await wait_until(pilot, lambda: table.row_count == 5)
        await pilot.press("down", "space")  # the finished batch, newest but one
        await wait_until(pilot, lambda: table.row_count == 10)  # its 5 stored items
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=expanded)


def test_a_batch_replayed_part_way(snap_compare: Any, db_path: Path) -> None:
    db = stored(db_path, *batch_sessions(FINISHED, RECIPE_ITEMS))
    app = TuiAgentApp(db, replay_session=FINISHED)

    async def stepped(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, BatchReplayScreen))
        screen = pilot.app.screen
        assert isinstance(screen, BatchReplayScreen)
        await pilot.press(*["right"] * 9)  # all six items started, item 3 failed
        await wait_until(pilot, lambda: screen.replay.position == 9)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=stepped)
