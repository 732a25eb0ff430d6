"""The app driven by keys against a real SQLite file: home, session screens, replay, palette.

Sessions are recorded by a real SessionRecorder over small test agents; assertions look at the
messages the app posted and at what the store holds afterwards.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, TypeVar, cast

import pytest
from session_factory import (
    agent_of,
    codeact_payloads,
    record,
    scrape_payloads,
    started,
    wait_until,
)
from textual.message import Message
from textual.notifications import Notify
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Markdown, Static

from tui_agent.events import Event, FeedbackSubmitted, Log, SessionEnded, Thought, ThoughtDelta
from tui_agent.formatting import format_cost, format_duration
from tui_agent.session import SessionState
from tui_agent.store import SessionNotFound, Store
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.messages import (
    EventsReceived,
    FeedbackRecorded,
    LiveSessionCancelled,
    ReplayMoved,
    SessionDeleted,
    SessionOpened,
    SessionRequested,
)
from tui_agent.tui.screens.confirm import CancelRunModal, ConfirmModal, QuitModal
from tui_agent.tui.screens.feedback import FeedbackModal
from tui_agent.tui.screens.home import HomeScreen
from tui_agent.tui.screens.replay import ReplayScreen
from tui_agent.tui.screens.session import SessionScreen
from tui_agent.tui.widgets.items_table import ItemsTable
from tui_agent.tui.widgets.sessions_table import SessionsTable
from tui_agent.tui.widgets.stream_pane import WINDOW, StreamPane

M = TypeVar("M", bound=Message)
SIZE = (100, 30)


def posted(messages: list[Message], kind: type[M]) -> list[M]:
    """Messages of `kind`, once each (a bubbling message is seen at every node)."""
    unique = {id(m): m for m in messages if isinstance(m, kind)}
    return list(unique.values())


async def stored_events(db_path: Path, session_id: str) -> list[Any]:
    async with await Store.open(db_path) as store:
        return await store.events(session_id)


@pytest.fixture
async def two_sessions(db_path: Path) -> tuple[SessionState, SessionState]:
    """A codeact session, then a scrape session (listed first: newest first)."""
    codeact = await record(db_path, started(), codeact_payloads())
    scrape = await record(db_path, started("Scrape desks", "scrape"), scrape_payloads())
    return codeact, scrape


async def wait_for_home(pilot: Pilot[Any]) -> HomeScreen:
    """The home screen, once it is the active screen."""
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, HomeScreen))
    screen = pilot.app.screen
    assert isinstance(screen, HomeScreen)
    return screen


async def home_ready(pilot: Pilot[Any]) -> HomeScreen:
    """The home screen once it lists the stored sessions."""
    screen = await wait_for_home(pilot)
    await wait_until(pilot, lambda: bool(screen.summaries))
    return screen


async def test_enter_opens_the_highlighted_session_as_stored(
    db_path: Path, two_sessions: tuple[SessionState, SessionState]
) -> None:
    codeact, scrape = two_sessions
    messages: list[Message] = []
    app = TuiAgentApp(db_path)
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        home = await home_ready(pilot)
        assert [s.session_id for s in home.summaries] == [scrape.session_id, codeact.session_id]
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: bool(posted(messages, SessionOpened)))
        [requested] = posted(messages, SessionRequested)
        assert (requested.session_id, requested.mode) == (codeact.session_id, "stored")
        [opened] = posted(messages, SessionOpened)
        assert (opened.session_id, opened.mode) == (codeact.session_id, "stored")
        screen = app.screen
        assert isinstance(screen, SessionScreen) and not isinstance(screen, ReplayScreen)
        assert screen.state == codeact
        pane = screen.query_one(StreamPane)
        assert pane.card_count == len(codeact.timeline)
        assert screen.query_one(ItemsTable).display
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))


async def test_slash_filters_the_list_and_escape_clears_it(
    db_path: Path, two_sessions: tuple[SessionState, SessionState]
) -> None:
    codeact, _ = two_sessions
    app = TuiAgentApp(db_path)
    async with app.run_test(size=SIZE) as pilot:
        home = await home_ready(pilot)
        await pilot.press("slash", *"compound")
        table = home.query_one(SessionsTable)
        await wait_until(pilot, lambda: table.row_count == 1)
        assert table.selected_id == codeact.session_id
        await pilot.press("enter")  # leaves the filter for the table
        await wait_until(pilot, lambda: table.has_focus)
        await pilot.press("escape")
        await wait_until(pilot, lambda: table.row_count == 2)
        await pilot.press("slash", *"no such words")
        await wait_until(pilot, lambda: not table.display)
        assert "No session matches" in str(home.query_one("#empty").render())


async def test_delete_asks_first_and_removes_the_session(
    db_path: Path, two_sessions: tuple[SessionState, SessionState]
) -> None:
    codeact, scrape = two_sessions
    messages: list[Message] = []
    app = TuiAgentApp(db_path)
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        home = await home_ready(pilot)
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("n")
        await wait_until(pilot, lambda: app.screen is home)
        assert posted(messages, SessionDeleted) == []
        assert len(await stored_events(db_path, scrape.session_id)) == scrape.event_count

        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("ctrl+y")
        await wait_until(pilot, lambda: len(home.summaries) == 1)
        [deleted] = posted(messages, SessionDeleted)
        assert deleted.session_id == scrape.session_id
    async with await Store.open(db_path) as store:
        assert [s.session_id for s in await store.list_sessions()] == [codeact.session_id]
        with pytest.raises(SessionNotFound):
            await store.events(scrape.session_id)


async def test_escape_on_a_live_session_cancels_the_agent_once_confirmed(db_path: Path) -> None:
    messages: list[Message] = []
    hold = asyncio.Event()  # never set: the agent would wait forever
    payloads = codeact_payloads()[:5]
    app = TuiAgentApp(db_path)
    app.start_session(started(), agent_of(payloads, hold))
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen))
        screen = app.screen
        assert isinstance(screen, SessionScreen) and screen.mode == "live"
        await wait_until(pilot, lambda: screen.state.event_count == 1 + len(payloads))
        assert screen.state.status == "running"
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, CancelRunModal))
        await pilot.press("ctrl+y")
        await wait_until(pilot, lambda: screen.state.status == "cancelled")
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        await app.workers.wait_for_complete()
        [cancelled] = posted(messages, LiveSessionCancelled)
        assert cancelled.session_id == screen.session_id
        home = app.screen
        assert isinstance(home, HomeScreen)
        await wait_until(pilot, lambda: [s.status for s in home.summaries] == ["cancelled"])
    events = await stored_events(db_path, screen.session_id)
    assert len(events) == 1 + len(payloads) + 1
    assert isinstance(events[-1], SessionEnded)
    assert (events[-1].status, events[-1].stopped_reason) == ("cancelled", "cancelled")


async def test_quitting_during_a_live_session_records_it_cancelled(db_path: Path) -> None:
    hold = asyncio.Event()
    app = TuiAgentApp(db_path)
    app.start_session(started(), agent_of(codeact_payloads()[:2], hold))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen))
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await wait_until(pilot, lambda: screen.state.event_count == 3)
        await pilot.press("ctrl+q")  # work runs: it asks first
        await wait_until(pilot, lambda: isinstance(app.screen, QuitModal))
        await pilot.press("ctrl+y")
        await wait_until(pilot, lambda: not app.is_running)
    events = await stored_events(db_path, screen.session_id)
    assert isinstance(events[-1], SessionEnded) and events[-1].status == "cancelled"


async def test_a_burst_of_events_reaches_the_screen_as_one_frame(db_path: Path) -> None:
    """Events recorded faster than a frame are handed over together, in order, and the
    screen folds them (as display copies) into a state of its own, the same as the recorder's."""
    messages: list[Message] = []
    hold = asyncio.Event()
    burst = [Log(message=f"line {i}") for i in range(50)]
    app = TuiAgentApp(db_path)
    app.start_session(started(), agent_of(burst, hold))
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen))
        screen = app.screen
        assert isinstance(screen, SessionScreen) and screen.live is not None
        assert screen.state is not screen.live.recorder.state
        frames = lambda: posted(messages, EventsReceived)  # noqa: E731
        await wait_until(pilot, lambda: sum(len(m.events) for m in frames()) == 51)
        delivered = [event.seq for m in frames() for event in m.events]
        assert delivered == list(range(1, 52))
        await wait_until(pilot, lambda: screen.shown_seq == 51)
        assert screen.state.summary() == screen.live.recorder.state.summary()
        before = len(frames())
        for index in range(20):  # in one go, as a recorder's emit_many tells its listeners
            screen.post_event(Log(message=f"late {index}", seq=100 + index))
        await wait_until(pilot, lambda: sum(len(m.events) for m in frames()) == 71)
        assert len(frames()) - before <= 2  # the first now, the other 19 with the next frame
        hold.set()


async def test_live_cards_update_in_place_until_the_final_answer(db_path: Path) -> None:
    release = asyncio.Event()
    payloads = codeact_payloads()
    app = TuiAgentApp(db_path)
    app.start_session(started(), agent_of(payloads[:6], release))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen))
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        pane = screen.query_one(StreamPane)
        await wait_until(pilot, lambda: screen.state.event_count == 7 and pane.card_count == 1)
        step_card = pane.query("StepCard").first()
        await wait_until(pilot, lambda: step_card.has_class("-running"))
        assert screen.state.steps[1].running

        # The rest arrives from a second agent run: the same recorder keeps recording.
        remaining = agent_of(payloads[6:])
        live = screen.live
        assert live is not None
        for event in [e async for e in remaining]:
            await live.recorder.emit(event)
        await wait_until(pilot, lambda: screen.state.final_answer is not None)
        await wait_until(pilot, lambda: pane.card_count == 3)
        assert pane.query("StepCard").first() is step_card  # updated, not replaced
        assert not step_card.has_class("-running")
        assert "0.04s" in str(step_card.border_subtitle)
        table = screen.query_one(ItemsTable)
        await wait_until(pilot, lambda: table.display)
        release.set()
        await app.workers.wait_for_complete()
        await wait_until(pilot, lambda: screen.state.status == "completed")
    events = await stored_events(db_path, screen.session_id)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert isinstance(events[-1], SessionEnded) and events[-1].status == "completed"


async def test_replay_keys_step_seek_and_play(
    db_path: Path, two_sessions: tuple[SessionState, SessionState]
) -> None:
    codeact, _ = two_sessions
    total = codeact.event_count
    messages: list[Message] = []
    app = TuiAgentApp(db_path, replay_session=codeact.session_id[:6])
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen))
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        pane = screen.query_one(StreamPane)

        def positions() -> list[tuple[int, float, bool]]:
            return [(m.position, m.speed, m.playing) for m in posted(messages, ReplayMoved)]

        await wait_until(pilot, lambda: positions() == [(0, 1.0, False)])
        await pilot.press("right", "right", "right", "left")
        await wait_until(pilot, lambda: len(positions()) == 5)
        assert [p for p, _, _ in positions()] == [0, 1, 2, 3, 2]
        assert screen.state.event_count == 2 and pane.card_count == 1
        await pilot.press("end")
        await wait_until(pilot, lambda: positions()[-1][0] == total)
        assert screen.state == codeact
        await pilot.press("home", "plus", "plus", "minus")
        await wait_until(pilot, lambda: len(positions()) == 10)
        assert positions()[-4:] == [
            (0, 1.0, False),
            (0, 2.0, False),
            (0, 4.0, False),
            (0, 2.0, False),
        ]
        assert pane.card_count == 0

        for _ in range(5):
            await pilot.press("plus")  # up to 64x: the recorded gaps are short then
        await pilot.press("space")
        await wait_until(pilot, lambda: positions()[-1] == (total, 64.0, False))
        assert any(playing for _, _, playing in positions())
        assert screen.state == codeact
        assert pane.card_count == len(codeact.timeline)
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))


async def test_replay_of_events_from_a_file_needs_no_stored_session(
    db_path: Path, two_sessions: tuple[SessionState, SessionState]
) -> None:
    codeact, _ = two_sessions
    events = await stored_events(db_path, codeact.session_id)
    other_db = db_path.with_name("empty.db")
    app = TuiAgentApp(other_db, replay_events=events)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen))
        await pilot.press("end")
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        await wait_until(pilot, lambda: screen.replay.at_end)
        assert screen.state == codeact
        await pilot.press("escape")
        home = await wait_for_home(pilot)
        assert home.summaries == []
        assert "tui-agent replay sessions/" in str(home.query_one("#empty").render())


async def test_command_palette_replays_a_session_by_title(
    db_path: Path, two_sessions: tuple[SessionState, SessionState]
) -> None:
    codeact, _ = two_sessions
    messages: list[Message] = []
    app = TuiAgentApp(db_path)
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        await home_ready(pilot)
        await pilot.press("ctrl+p", *"replay compound")
        await pilot.pause(0.3)  # let the palette search
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen))
        [requested] = posted(messages, SessionRequested)
        assert (requested.session_id, requested.mode) == (codeact.session_id, "replay")


async def test_command_palette_offers_the_screen_bindings(
    db_path: Path, two_sessions: tuple[SessionState, SessionState]
) -> None:
    codeact, _ = two_sessions
    messages: list[Message] = []
    app = TuiAgentApp(db_path, replay_session=codeact.session_id)
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen))
        await pilot.press("ctrl+p", *"jump to the last")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: any(m.position == codeact.event_count for m in posted(messages, ReplayMoved)),
        )


async def test_unknown_session_id_is_one_clear_notice(db_path: Path) -> None:
    await record(db_path, started(), codeact_payloads()[:1])
    messages: list[Message] = []
    app = TuiAgentApp(db_path, open_session="ffffffff")
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        home = await wait_for_home(pilot)
        await wait_until(pilot, lambda: bool(posted(messages, Notify)))
        [notice] = posted(messages, Notify)
        assert notice.notification.severity == "error"
        assert "ffffffff" in notice.notification.message
        assert app.screen is home


async def test_a_file_that_is_not_a_database_exits_with_its_message(tmp_path: Path) -> None:
    bad = tmp_path / "not.db"
    bad.write_text("this is not SQLite\n" * 100)
    app = TuiAgentApp(bad)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.return_code is not None)
    assert app.return_code == 1
    assert bad.read_text().startswith("this is not SQLite")


async def pick_issue(pilot: Pilot[Any], downs: int) -> None:
    """In the open feedback modal: choose the issue `downs` entries below the prompt."""
    await pilot.press("enter", *["down"] * downs, "enter")


async def test_feedback_on_two_fields_is_recorded_as_one_event(
    db_path: Path, two_sessions: tuple[SessionState, SessionState]
) -> None:
    codeact, _ = two_sessions
    messages: list[Message] = []
    app = TuiAgentApp(db_path, open_session=codeact.session_id)
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen))
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        table = screen.query_one(ItemsTable)
        await pilot.press("tab")  # stream pane -> items table
        await wait_until(pilot, lambda: table.has_focus_within)
        await pilot.press("right")  # title -> price
        await wait_until(pilot, lambda: table.focused_field == "price")
        await pilot.press("f")
        await wait_until(pilot, lambda: isinstance(app.screen, FeedbackModal))
        await pick_issue(pilot, 1)  # missing
        await pilot.press("ctrl+n")  # keep it, pick another field
        await wait_until(pilot, lambda: app.screen is screen and len(screen.pending_feedback) == 1)
        assert posted(messages, FeedbackRecorded) == []

        await pilot.press("right", "right")  # -> seller.name
        await wait_until(pilot, lambda: table.focused_field == "seller.name")
        await pilot.press("f")
        await wait_until(pilot, lambda: isinstance(app.screen, FeedbackModal))
        await pick_issue(pilot, 2)  # wrong
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: bool(posted(messages, FeedbackRecorded)))
        [recorded] = posted(messages, FeedbackRecorded)
        assert screen.pending_feedback == []
        await wait_until(pilot, lambda: screen.state.feedback == recorded.event.feedback)
    events = await stored_events(db_path, codeact.session_id)
    feedback_events = [e for e in events if isinstance(e, FeedbackSubmitted)]
    assert feedback_events == [recorded.event]
    assert [(f.field, f.issue) for f in recorded.event.feedback] == [
        ("price", "missing"),
        ("seller.name", "wrong"),
    ]
    assert recorded.event.seq == codeact.last_seq + 1


async def test_escape_in_the_feedback_modal_keeps_nothing(
    db_path: Path, two_sessions: tuple[SessionState, SessionState]
) -> None:
    codeact, _ = two_sessions
    app = TuiAgentApp(db_path, open_session=codeact.session_id)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen))
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await pilot.press("tab")
        await wait_until(pilot, lambda: screen.query_one(ItemsTable).has_focus_within)
        await pilot.press("f")
        await wait_until(pilot, lambda: isinstance(app.screen, FeedbackModal))
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen)
        assert screen.pending_feedback == []
    events = await stored_events(db_path, codeact.session_id)
    assert len(events) == codeact.event_count


async def test_long_timelines_mount_the_newest_cards_and_e_shows_earlier(db_path: Path) -> None:
    logs = [Log(message=f"line {i}") for i in range(WINDOW + 12)]
    state = await record(db_path, started(), logs)
    app = TuiAgentApp(db_path, open_session=state.session_id)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen))
        pane = app.screen.query_one(StreamPane)
        await wait_until(pilot, lambda: pane.card_count == WINDOW)
        assert pane.first_index == 12
        assert "12 earlier entries not shown" in str(pane.query_one(".earlier").render())
        await pilot.press("e")
        await wait_until(pilot, lambda: pane.card_count == WINDOW + 12)
        assert pane.first_index == 0
        assert not pane.query_one(".earlier").display


async def test_a_streamed_thought_grows_in_place_then_takes_the_final_text(db_path: Path) -> None:
    """Plain words show as text; the first markup makes the view Markdown, which then grows
    in place (a view per frame would remount the card's thought every frame)."""
    gates = [asyncio.Event() for _ in range(4)]
    parts: list[list[Event]] = [
        [ThoughtDelta(step=1, text="Let me ")],
        [ThoughtDelta(step=1, text="**think**")],
        [ThoughtDelta(step=1, text=" it")],
        [Thought(step=1, text="Let me **think** it over.")],
    ]

    async def agent() -> AsyncIterator[Event]:
        for gate, events in zip(gates, parts, strict=True):
            await gate.wait()
            for event in events:
                yield event

    def shown(view: Widget) -> str:
        return view.source if isinstance(view, Markdown) else str(cast(Static, view).content)

    app = TuiAgentApp(db_path)
    app.start_session(started(), agent())
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen))
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        views = []
        texts = ["Let me", "Let me **think**", "Let me **think** it", "Let me **think** it over."]
        for gate, text in zip(gates, texts, strict=True):
            gate.set()
            await wait_until(pilot, lambda: bool(screen.query(".thought")))
            await wait_until(pilot, lambda: shown(screen.query_one(".thought")) == text)  # noqa: B023
            views.append(screen.query_one(".thought"))
        assert isinstance(views[0], Static)
        assert isinstance(views[1], Markdown) and views[1] is views[2] is views[3]
        await app.workers.wait_for_complete()


@pytest.mark.parametrize(
    ("cost", "complete", "shown"),
    [(0.0123, True, "$0.0123"), (0.0123, False, "$0.0123+?"), (None, False, "—")],
)
def test_cost_reads_known_partly_known_and_unknown(
    cost: float | None, complete: bool, shown: str
) -> None:
    assert format_cost(cost, complete) == shown


@pytest.mark.parametrize(("seconds", "shown"), [(0.4, "0s"), (83, "1:23"), (3723, "1:02:03")])
def test_durations_read_as_clock_times(seconds: float, shown: str) -> None:
    assert format_duration(seconds) == shown


async def test_escape_from_the_items_table_goes_home(
    db_path: Path, two_sessions: tuple[SessionState, SessionState]
) -> None:
    """The table's header restyle may land after the screen is gone: it must not crash."""
    app = TuiAgentApp(db_path)
    async with app.run_test(size=SIZE) as pilot:
        await home_ready(pilot)
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen))
        table = app.screen.query_one(ItemsTable)
        await pilot.press("tab")
        await wait_until(pilot, lambda: table.has_focus_within)
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        await pilot.pause()
        assert app.is_running and app.return_code is None
