"""Keys and work: a sentence typed on any screen starts no model, browser or sandbox work;
ctrl+c stops the step running (and says how to quit); ctrl+q asks first while work runs."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from artifact_factory import REFINED
from batch_factory import RECIPE_ITEMS, batch_sessions
from session_factory import agent_of, codeact_payloads, started, store_events
from session_factory import wait_until as wait
from test_app import posted, stored_events
from textual.message import Message
from textual.notifications import Notify
from textual.pilot import Pilot
from textual.worker import Worker

from tui_agent.config import Settings
from tui_agent.events import SessionEnded
from tui_agent.store import Store
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.batch.screen import BatchScreen
from tui_agent.tui.screens.confirm import ConfirmModal, QuitModal
from tui_agent.tui.screens.diff import DiffScreen
from tui_agent.tui.screens.home import HomeScreen
from tui_agent.tui.screens.session import SessionScreen

SESSION = REFINED
SIZE = (110, 36)
SENTENCE = (
    "are you sure yes refine it and accept the change go on fork continue delete run "
    "the quick brown fox jumps over the lazy dog"
)
"""Every letter, and every word a key of a screen once stood for."""
WORK_GROUPS = {"sessions", "refinement", "continue"}


def no_model(tmp_path: Path) -> Settings:
    return Settings(db=tmp_path / "sessions.db", workspace=tmp_path / "workspace", model=None)


async def type_sentence(pilot: Pilot[Any]) -> None:
    for word in SENTENCE.split():
        await pilot.press(*word, "space")
        await pilot.pause()


def work_started(messages: list[Message]) -> list[str]:
    """The groups of the workers that started work (a session, a refinement, a continue)."""
    return [
        f"{m.worker.group}: {m.worker.name}"
        for m in posted(messages, Worker.StateChanged)
        if m.worker.group in WORK_GROUPS
    ]


async def event_counts(db_path: Path) -> dict[str, int]:
    async with await Store.open(db_path) as store:
        return {s.session_id: s.event_count for s in await store.list_sessions()}


async def typed_on(
    db_path: Path, tmp_path: Path, *, open_first: tuple[str, ...] = (), session: bool = True
) -> tuple[list[Message], type]:
    """Open the stored session (or the home screen), press `open_first`, type the sentence;
    the messages seen and the type of the screen it ended on."""
    messages: list[Message] = []
    app = TuiAgentApp(
        db_path, open_session=SESSION if session else None, settings=no_model(tmp_path)
    )
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        kind = SessionScreen if session else HomeScreen
        await wait(pilot, lambda: isinstance(app.screen, kind))
        if not session:
            home = app.screen
            assert isinstance(home, HomeScreen)
            await wait(pilot, lambda: len(home.summaries) == 1)
        else:
            screen = app.screen
            assert isinstance(screen, SessionScreen)
            await wait(pilot, lambda: screen.state.event_count > 0)
        for key in open_first:
            await pilot.press(key)
            await pilot.pause()
        await type_sentence(pilot)
        await pilot.pause(0.2)
        return messages, type(app.screen)


@pytest.mark.parametrize(
    ("opened", "open_first", "session"),
    [
        ("home", (), False),
        ("session", (), True),
        ("items table", ("tab",), True),
        ("review", ("d",), True),
        ("refine again?", ("ctrl+r",), True),  # the y of "yes" must not confirm
    ],
)
async def test_a_sentence_typed_anywhere_starts_no_work(
    refined_db: Path, tmp_path: Path, opened: str, open_first: tuple[str, ...], session: bool
) -> None:
    before = await event_counts(refined_db)
    messages, shown = await typed_on(refined_db, tmp_path, open_first=open_first, session=session)
    assert work_started(messages) == [], f"typing on the {opened} screen started work"
    assert await event_counts(refined_db) == before, "typing recorded something"
    if opened == "review":
        assert shown is DiffScreen  # still deciding: no letter accepted the candidate


async def test_a_sentence_typed_on_a_batch_starts_no_work(db_path: Path) -> None:
    batch = "ba7c40000001"
    for events in batch_sessions(batch, RECIPE_ITEMS):
        await store_events(db_path, events)
    before = await event_counts(db_path)
    messages: list[Message] = []
    app = TuiAgentApp(db_path, open_session=batch)
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        await wait(pilot, lambda: isinstance(app.screen, BatchScreen))
        await pilot.pause(0.2)
        await type_sentence(pilot)
        await pilot.pause(0.2)
    assert work_started(messages) == []
    assert await event_counts(db_path) == before


async def test_ctrl_y_confirms_what_typing_cannot(refined_db: Path, tmp_path: Path) -> None:
    """The key that says yes to refining again is a ctrl key: the refinement then starts."""
    messages: list[Message] = []
    app = TuiAgentApp(refined_db, open_session=SESSION, settings=no_model(tmp_path))
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        await wait(pilot, lambda: isinstance(app.screen, SessionScreen))
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await wait(pilot, lambda: screen.state.event_count > 0)
        await pilot.press("ctrl+r")
        await wait(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("ctrl+y")
        await wait(pilot, lambda: bool(work_started(messages)))
        assert work_started(messages)[0].startswith("refinement: refine ")


def notices(messages: list[Message]) -> list[str]:
    return [m.notification.message for m in posted(messages, Notify)]


async def test_ctrl_c_stops_a_live_run_and_says_how_to_quit(db_path: Path) -> None:
    hold = asyncio.Event()  # never set: the agent would wait forever
    payloads = codeact_payloads()[:5]
    messages: list[Message] = []
    app = TuiAgentApp(db_path)
    app.start_session(started(), agent_of(payloads, hold))
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        await wait(pilot, lambda: isinstance(app.screen, SessionScreen))
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await wait(pilot, lambda: screen.state.event_count == 1 + len(payloads))
        await pilot.press("ctrl+c")
        await wait(pilot, lambda: screen.state.status == "cancelled")
        assert any("ctrl+q quits" in n for n in notices(messages))
        assert isinstance(app.screen, SessionScreen)  # stopped, not gone
        await pilot.press("ctrl+c")  # nothing runs now: it says how to quit
        await wait(pilot, lambda: any("Nothing runs here" in n for n in notices(messages)))
        assert app.is_running
    [session_id] = await event_counts(db_path)
    events = await stored_events(db_path, session_id)
    assert isinstance(events[-1], SessionEnded) and events[-1].status == "cancelled"


async def test_ctrl_q_asks_while_work_runs(db_path: Path) -> None:
    hold = asyncio.Event()
    app = TuiAgentApp(db_path)
    app.start_session(started(), agent_of(codeact_payloads()[:5], hold))
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: isinstance(app.screen, SessionScreen))
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await pilot.press("ctrl+q")
        await wait(pilot, lambda: isinstance(app.screen, QuitModal))
        assert "live: session " in str(app.screen.query_one(".question").render())
        await pilot.press("n")  # stay: the run goes on
        await wait(pilot, lambda: app.screen is screen)
        assert screen.running and app.is_running
        await pilot.press("ctrl+q")
        await wait(pilot, lambda: isinstance(app.screen, QuitModal))
        await pilot.press("ctrl+q")  # a second ctrl+q quits
        await wait(pilot, lambda: not app.is_running)
    [session_id] = await event_counts(db_path)
    events = await stored_events(db_path, session_id)
    assert isinstance(events[-1], SessionEnded) and events[-1].status == "cancelled"


async def test_ctrl_q_quits_at_once_with_nothing_running(db_path: Path) -> None:
    app = TuiAgentApp(db_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: isinstance(app.screen, HomeScreen))
        await pilot.press("ctrl+q")
        await wait(pilot, lambda: not app.is_running)
