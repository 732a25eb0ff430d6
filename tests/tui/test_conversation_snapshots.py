"""Snapshots of conversations at 80x24 and 120x36: the message line of a session waiting for
you, a message queued while the agent works, restoring progress, and the home screen with a
fork's lineage and a waiting session.

The live screens are fed fixed events through the real recorder and a real Conversation (the
agent stream is a test one, as in test_snapshots.py: what is shown is under test, not the
agent); the clock is pinned to the session's start.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from session_factory import at_fixed_times, store_events, wait_until
from textual.pilot import Pilot

from tui_agent.agents.launch import Launch
from tui_agent.agents.requests import CodeRequest
from tui_agent.agents.step_loop import Conversation
from tui_agent.events import (
    CodeProposed,
    Event,
    ExecutionFinished,
    ExecutionStarted,
    FinalAnswer,
    ForkOrigin,
    LLMCall,
    LogLine,
    SessionEnded,
    SessionResumed,
    SessionStarted,
    StateRestoreRun,
    Thought,
    TurnEnded,
    UserMessage,
)
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.screens.session import SessionScreen
from tui_agent.tui.widgets.stream_pane import StreamPane

pytestmark = pytest.mark.usefixtures("utc")
SIZES = pytest.mark.parametrize("size", [(80, 24), (120, 36)], ids=["80x24", "120x36"])
PARENT = "c0de5a000001"
FORK = "f0e4c0000002"
TASK = "Set x to 41 and keep notes"


def started(parent: ForkOrigin | None = None) -> SessionStarted:
    return SessionStarted(kind="code", title=TASK, model="gpt-4o-mini", parent=parent)


def first_turn() -> list[Event]:
    """Turn 1 (a run and an answer) and turn 2's message."""
    return [
        Thought(step=1, text="Set x, then say so."),
        LLMCall(model="gpt-4o-mini", prompt_tokens=800, completion_tokens=60, cost=0.0004, step=1),
        CodeProposed(step=1, code="x = 41\nprint('set')"),
        ExecutionStarted(step=1, backend="docker", isolated=True),
        ExecutionFinished(
            step=1, success=True, duration=0.05, logs=[LogLine(stream="stdout", text="set")]
        ),
        Thought(step=2, text="It is set."),
        FinalAnswer(step=2, text="x is 41."),
        TurnEnded(turn=1, status="completed"),
        UserMessage(turn=2, text="What is x + 1?"),
    ]


def second_turn() -> list[Event]:
    return [
        Thought(step=3, text="Add one."),
        LLMCall(model="local-llama", prompt_tokens=900, completion_tokens=40, cost=None, step=3),
        CodeProposed(step=3, code="print(x + 1)"),
        ExecutionStarted(step=3, backend="docker", isolated=True),
    ]


class PinnedClock:
    """The session's start (once known) plus `offset` seconds."""

    def __init__(self, offset: float) -> None:
        self.base = 0.0
        self.offset = offset

    def __call__(self) -> float:
        return self.base + self.offset


async def waiting_agent(conversation: Conversation) -> AsyncIterator[Event]:
    """Two turns, then it waits for the user (until the conversation ends)."""
    for event in [*first_turn(), *second_turn()]:
        yield event
    yield ExecutionFinished(
        step=3, success=True, duration=0.05, logs=[LogLine(stream="stdout", text="42")]
    )
    yield FinalAnswer(step=4, text="x + 1 is 42.")
    yield TurnEnded(turn=2, status="completed")
    await conversation.next_message()


async def working_agent(conversation: Conversation, hold: asyncio.Event) -> AsyncIterator[Event]:
    """Turn 2's code runs (held) and the user says something meanwhile: it is queued."""
    for event in [*first_turn(), *second_turn()]:
        yield event

    async def run() -> None:
        await hold.wait()

    conversation.running(asyncio.ensure_future(run()))  # a run goes on, as the step loop says
    conversation.say("and print it in French too")
    await hold.wait()


async def restoring_agent(hold: asyncio.Event) -> AsyncIterator[Event]:
    """A fork of turn 1 restoring its state: run 4 of 7 done, the fifth held."""
    for event in first_turn()[:-1]:
        yield event
    yield SessionResumed(restore="state", runs=7)
    for done in range(1, 5):
        yield StateRestoreRun(step=1, done=done, total=7, ok=True, duration=0.05)
    await hold.wait()


def live_app(
    tmp_path: Path, agent: AsyncIterator[Event], conversation: Conversation, clock: PinnedClock
) -> TuiAgentApp:
    app = TuiAgentApp(tmp_path / "sessions.db", clock=clock)
    app.start_launch(
        Launch(
            request=CodeRequest(task=TASK),
            started=started(),
            events=agent,
            session_id=PARENT,
            conversation=conversation,
        )
    )
    return app


def shown_when(clock: PinnedClock, ready: Any) -> Any:
    """A run_before: the live screen pinned to its start, then `ready(screen)` awaited."""

    async def run_before(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, SessionScreen))
        screen = pilot.app.screen
        assert isinstance(screen, SessionScreen)
        await wait_until(pilot, lambda: screen.state.started_at > 0)
        clock.base = screen.state.started_at
        await wait_until(pilot, lambda: ready(screen))
        await wait_until(pilot, lambda: screen.shown_seq == screen.state.last_seq)
        screen.refresh_status()
        pane = screen.query_one(StreamPane)
        for _ in range(2):  # laid out, then settled at the end (it follows the newest card)
            await pilot.pause()
            await wait_until(pilot, lambda: pane.scroll_y == pane.max_scroll_y)

    return run_before


@SIZES
def test_waiting_for_you_with_the_message_line(
    snap_compare: Any, tmp_path: Path, size: tuple[int, int]
) -> None:
    conversation = Conversation()
    clock = PinnedClock(12.0)
    app = live_app(tmp_path, waiting_agent(conversation), conversation, clock)
    ready = shown_when(clock, lambda screen: screen.state.status == "waiting")
    assert snap_compare(app, terminal_size=size, run_before=ready)


@SIZES
def test_a_message_queued_while_the_agent_works(
    snap_compare: Any, tmp_path: Path, size: tuple[int, int]
) -> None:
    conversation = Conversation()
    clock = PinnedClock(9.0)
    app = live_app(tmp_path, working_agent(conversation, asyncio.Event()), conversation, clock)

    def queued_shown(screen: SessionScreen) -> bool:
        return bool(conversation.queued) and screen.query_one("#queued").display

    assert snap_compare(app, terminal_size=size, run_before=shown_when(clock, queued_shown))


@SIZES
def test_restoring_progress(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    conversation = Conversation()
    clock = PinnedClock(5.0)
    app = live_app(tmp_path, restoring_agent(asyncio.Event()), conversation, clock)

    def restoring(screen: SessionScreen) -> bool:
        return screen.state.restoring is not None and screen.state.restoring.done == 4

    assert snap_compare(app, terminal_size=size, run_before=shown_when(clock, restoring))


@pytest.fixture
def lineage(db_path: Path) -> Path:
    """A finished session, a fork of it at step 1 waiting for you."""
    parent = at_fixed_times(PARENT, started(), first_turn()[:-1], SessionEnded(status="completed"))
    fork = at_fixed_times(
        FORK,
        started(ForkOrigin(session_id=PARENT, at_step=1)),
        [
            *first_turn()[:5],
            SessionResumed(restore="state", runs=1),
            TurnEnded(turn=1, status="completed"),
        ],
        None,
        start=parent[-1].ts + 60,
    )
    for events in (parent, fork):
        asyncio.run(store_events(db_path, events))
    return db_path


@SIZES
def test_home_shows_a_fork_and_a_session_waiting(
    snap_compare: Any, lineage: Path, size: tuple[int, int]
) -> None:
    assert snap_compare(TuiAgentApp(lineage), terminal_size=size)
