"""The batch screen in use: Enter opens an item's session (or says why there is none), `f`
shows the failures, a batch driven in the app updates its screen as items end, a batch is
replayed on its own screen, and the home screen lists item sessions under their batch."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, TypeVar

from batch_factory import RECIPE_ITEMS, SITE, Outcome, batch_sessions, plan_of
from session_factory import T0, fixed_sessions, store_events, wait_until
from textual.message import Message
from textual.notifications import Notify
from textual.pilot import Pilot

from tui_agent.batch.inputs import BatchStart
from tui_agent.batch.plan import child_id
from tui_agent.batch.runner import BatchOptions
from tui_agent.batch.worker import ItemJob, ItemOutcome
from tui_agent.config import Settings
from tui_agent.events import BatchOrigin, SessionEnded, SessionStarted, dump_event
from tui_agent.store import Store
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.batch.items import BatchItemsTable
from tui_agent.tui.batch.replay import BatchReplayScreen
from tui_agent.tui.batch.screen import BatchScreen
from tui_agent.tui.screens.home import HomeScreen
from tui_agent.tui.screens.session import SessionScreen
from tui_agent.tui.widgets.sessions_table import SessionsTable

BATCH = "ba7c40000001"
SIZE = (100, 30)
M = TypeVar("M", bound=Message)


def posted(messages: list[Message], kind: type[M]) -> list[M]:
    return list({id(m): m for m in messages if isinstance(m, kind)}.values())


async def stored(db_path: Path, *sessions: list[Any]) -> None:
    for events in sessions:
        await store_events(db_path, events)


async def batch_screen(pilot: Pilot[Any]) -> BatchScreen:
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, BatchScreen))
    screen = pilot.app.screen
    assert isinstance(screen, BatchScreen)

    def shown() -> bool:
        tables = screen.query(BatchItemsTable)
        return bool(tables) and tables.first().row_count > 0

    await wait_until(pilot, shown)
    return screen


async def test_enter_opens_an_items_session_and_says_why_an_item_has_none(db_path: Path) -> None:
    await stored(db_path, *batch_sessions(BATCH, RECIPE_ITEMS))
    messages: list[Message] = []
    app = TuiAgentApp(db_path, open_session=BATCH)
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        screen = await batch_screen(pilot)
        await pilot.press("down", "enter")  # item 2
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen))
        assert app.screen.session_id == child_id(BATCH, 1)
        assert app.screen.state.batch_of == BatchOrigin(session_id=BATCH, item=1)
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen)
        await pilot.press("down", "enter")  # item 3: refused before its session started
        await wait_until(pilot, lambda: bool(posted(messages, Notify)))
        [notice] = posted(messages, Notify)
        assert "Item 3 has no session: url: cannot reach" in notice.notification.message
        assert app.screen is screen


async def test_f_shows_the_failures_only_then_every_item(db_path: Path) -> None:
    await stored(db_path, *batch_sessions(BATCH, RECIPE_ITEMS))
    app = TuiAgentApp(db_path, open_session=BATCH)
    async with app.run_test(size=SIZE) as pilot:
        screen = await batch_screen(pilot)
        table = screen.query_one(BatchItemsTable)
        assert table.row_count == 6
        await pilot.press("f")
        await wait_until(pilot, lambda: table.row_count == 2)
        assert table.selected == 2  # item 3, the first failure
        assert "cannot reach" in str(screen.query_one("#batch-detail").render())
        await pilot.press("f")
        await wait_until(pilot, lambda: table.row_count == 6)


async def test_r_on_a_batch_replays_it_on_the_batch_screen(db_path: Path) -> None:
    await stored(db_path, *batch_sessions(BATCH, RECIPE_ITEMS))
    app = TuiAgentApp(db_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        table = app.screen.query_one(SessionsTable)
        await wait_until(pilot, lambda: table.row_count == 1)  # its items are under it
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, BatchReplayScreen))
        screen = app.screen
        assert isinstance(screen, BatchReplayScreen)
        await pilot.press("right", "right", "right")  # started, queued, item 1 started
        await wait_until(pilot, lambda: screen.batch_state.count("started") == 1)
        assert screen.batch_state.done == 0
        await pilot.press("end")
        await wait_until(pilot, lambda: screen.state.status == "partial")
        assert (screen.batch_state.done, len(screen.batch_state.failures)) == (6, 2)


async def test_home_lists_items_under_their_batch_and_space_expands_it(db_path: Path) -> None:
    under_way = [(RECIPE_ITEMS[0][0], Outcome()), (RECIPE_ITEMS[1][0], Outcome("started"))]
    await stored(
        db_path,
        *fixed_sessions(),
        *batch_sessions(BATCH, RECIPE_ITEMS, start=T0 + 9000),
        *batch_sessions("ba7c40000002", under_way, ended=False, start=T0 + 10800),
    )
    app = TuiAgentApp(db_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        home = app.screen
        assert isinstance(home, HomeScreen)
        table = home.query_one(SessionsTable)
        await wait_until(pilot, lambda: table.row_count == 5)
        titles = [str(table.get_row_at(n)[1]) for n in range(table.row_count)]
        assert titles[0].startswith("▸ 1/2 ▶1 recipe: 2 items")
        assert titles[1].startswith("▸ 6/6 ✗2 recipe: 6 items")
        await pilot.press("down", "space")
        await wait_until(pilot, lambda: table.row_count == 10)
        items = [str(table.get_row_at(n)[1]) for n in range(2, 7)]
        assert items[0] == f"  ├ #1 {SITE}/panel"
        assert items[-1] == "  └ #6 127.0.0.1:8765/panel?page=5"  # no room for http://
        await pilot.press("down", "down", "enter")  # item 2's session
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen))
        assert app.screen.session_id == child_id(BATCH, 1)
        await pilot.press("escape")
        await wait_until(
            pilot, lambda: app.screen is home and table.selected_id == child_id(BATCH, 1)
        )
        await pilot.press("space")  # on an item: its batch folds, the cursor on it
        await wait_until(pilot, lambda: table.row_count == 5 and table.selected_id == BATCH)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, BatchScreen))


class HeldEngine:
    """An engine whose items end once `release` is set: the first as refused (no session),
    the others each with a stored session of their own."""

    name = "held:2"
    slots = 2

    def __init__(self) -> None:
        self.release = asyncio.Event()

    async def start(self) -> None:
        return None

    async def run(self, job: ItemJob) -> ItemOutcome:
        await self.release.wait()
        if job.item == 0:
            return ItemOutcome(child=job.child, lines=[], status="refused", line="no page")
        origin = BatchOrigin(session_id=job.batch, item=job.item)
        events = [
            SessionStarted(kind="scrape", title="recipe on a page", batch=origin),
            SessionEnded(status="completed"),
        ]
        lines = [
            dump_event(e.model_copy(update={"session_id": job.child, "seq": n, "ts": T0 + n}))
            for n, e in enumerate(events, start=1)
        ]
        return ItemOutcome(child=job.child, lines=lines, status="completed", seconds=1.0)

    async def close(self) -> None:
        return None


async def test_a_batch_driven_in_the_app_updates_its_screen_as_items_end(
    db_path: Path, tmp_path: Path
) -> None:
    settings = Settings(db=db_path, workspace=tmp_path / "ws", sandbox="local")
    engine = HeldEngine()
    plan = plan_of("recipe", [f"{SITE}/panel?page={n}" for n in range(1, 4)])
    app = TuiAgentApp(db_path, settings=settings)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        app.start_batch(BatchStart(plan, engine, BatchOptions()))
        screen = await batch_screen(pilot)
        await wait_until(pilot, lambda: screen.batch_state.count("started") == 2)
        assert screen.running and screen.batch_state.count("queued") == 1
        engine.release.set()
        await wait_until(pilot, lambda: screen.state.status == "partial")
        assert screen.batch_state.done == 3 and len(screen.batch_state.failures) == 1
        await pilot.press("escape")  # it ended: back without asking
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        table = app.screen.query_one(SessionsTable)
        await wait_until(pilot, lambda: table.row_count == 1)
    async with await Store.open(db_path) as store:
        summaries = await store.list_sessions()
    batch_id = screen.session_id
    assert sorted(s.session_id for s in summaries if s.batch == batch_id) == sorted(
        child_id(batch_id, n) for n in (1, 2)
    )
