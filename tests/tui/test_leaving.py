"""Leaving a session screen at every point of a live session.

A real code session (the real CodeAct agent, the scripted model, bubblewrap) is left right
after the first event of each kind of each step — popped (what Escape does) or the app exited —
either from a listener on the session's recorder ("recorded": before the screen has it) or as
the screen takes the frame that carries it ("shown"). A scripted agent's session (every kind
of card, no sandbox: quick) is left 0 to 3 turns of the loop into the frame of each kind. (A
refinement left midway: test_refine_flow.py; a card mounted as its screen goes:
test_mount_guard.py.)

Nothing may raise (a MountError in a card, a NoMatches in a worker), and the session is
recorded whole: seqs without a gap, one SessionEnded and last; a popped session runs on to
its end, an exited one ends cancelled.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from session_factory import codeact_payloads, started, wait_until
from support.requirements import require_backend
from support.scripted_model import ScriptedModel, text
from support.sessions import scripted_settings
from test_app import stored_events, wait_for_home
from textual.message import Message
from textual.worker import Worker, WorkerState

from tui_agent.agents.launch import prepare
from tui_agent.agents.requests import CodeRequest
from tui_agent.config import Settings
from tui_agent.events import Error, Event, SessionEnded
from tui_agent.session import SessionState, fold
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.messages import EventsReceived
from tui_agent.tui.screens.session import SessionScreen

SIZE = (100, 30)
WAIT = 120.0
"""Seconds to wait for a session to get somewhere (a busy machine; never asserted)."""
LEAVES = ("pop", "exit")
MOMENTS = ("recorded", "shown")

CODE_TURNS = [
    {
        "thought": "List the orders with their prices, printing each as I go.",
        "action": "execute_code",
        "code": "rows = []\nfor n in range(3):\n    print('order', n, flush=True)\n"
        "    rows.append({'order': n, 'price': n * 2.5})\nrows",
    },
    {
        "thought": "Three orders are listed, with their prices.",
        "action": "provide_answer",
        "final_answer": "There are **3** orders; the dearest costs 5.0.",
    },
]
CODE_KINDS = [
    "SessionStarted",
    "ThoughtDelta",
    "Thought",
    "CodeProposed",
    "LLMCall",
    "ExecutionStarted",
    "ExecutionFinished",
    "ThoughtDelta",
    "Thought",
    "LLMCall",
    "FinalAnswer",
    "SessionEnded",
]
"""The code session's events in order, each run of streamed ThoughtDeltas as one (how the
reply is cut into deltas varies)."""
CODE_POINTS = [
    ("SessionStarted", None),
    ("ThoughtDelta", 1),
    ("Thought", 1),
    ("CodeProposed", 1),
    ("LLMCall", 1),
    ("ExecutionStarted", 1),
    ("ExecutionFinished", 1),
    ("ThoughtDelta", 2),
    ("Thought", 2),
    ("LLMCall", 2),
    ("FinalAnswer", 2),
    ("SessionEnded", None),
]
"""Where the code session is left: after the first event of each kind of each step."""
CODE_LEAVES = [
    (kind, step, LEAVES[i % 2], MOMENTS[i // 2 % 2]) for i, (kind, step) in enumerate(CODE_POINTS)
]
"""Each point left one way (popped or exited, as recorded or as shown), the ways in turn:
a real sandbox per case, so not every way at every point."""


class Leave:
    """Leaves the session's screen (`how`: pop or exit) at the first event `when` picks:
    once the recorder recorded it (`moment` "recorded": at once, from the recorder's listeners) or
    while the screen shows the frame that carries it ("shown": the app leaves as its next
    message, as it would on a key pressed then, between the frame's steps)."""

    def __init__(
        self,
        app: TuiAgentApp,
        how: str,
        when: Callable[[Event], bool],
        moment: str,
        ticks: int | None = None,
    ) -> None:
        self.app = app
        self.how = how
        self.when = when
        self.moment = moment
        self.ticks = ticks
        """Shown: leave after this many turns of the event loop into the frame (None: as
        the app's next message)."""
        self._tasks: set[asyncio.Task[None]] = set()
        self.left = asyncio.Event()
        self.at: Event | None = None

    def recorded(self, event: Event, _state: SessionState) -> None:
        """A recorder listener."""
        if self.moment == "recorded" and self._picks(event):
            self._leave()

    def dispatched(self, message: Message) -> None:
        """A message hook: called as each message is handed to its handler."""
        if self.moment != "shown" or not isinstance(message, EventsReceived):
            return
        if any(self._picks(event) for event in message.events):
            if self.ticks is None:
                self.app.call_later(self._leave)
            else:
                task = asyncio.get_running_loop().create_task(self._leave_after(self.ticks))
                self._tasks.add(task)

    async def _leave_after(self, ticks: int) -> None:
        for _ in range(ticks):
            await asyncio.sleep(0)
        self._leave()

    def _picks(self, event: Event) -> bool:
        if self.at is not None or not self.when(event):
            return False
        self.at = event
        return True

    def _leave(self) -> None:
        screen = self.app.screen
        assert isinstance(screen, SessionScreen)
        if self.how == "pop":
            screen.dismiss()
        else:
            self.app.exit()
        self.left.set()


def first_of(kind: str, step: int | None = None) -> Callable[[Event], bool]:
    """The first event of `kind` (of `step`, when given)."""
    return lambda event: type(event).__name__ == kind and getattr(event, "step", None) == step


def kinds_of(events: list[Event]) -> list[str]:
    """The events' kinds, each run of ThoughtDeltas as one."""
    kinds = [type(e).__name__ for e in events]
    return [k for i, k in enumerate(kinds) if not (k == "ThoughtDelta" and kinds[i - 1] == k)]


def worker_failures(messages: list[Message]) -> list[str]:
    """The workers (sessions, refinements) that ended with an error."""
    return [
        f"{m.worker.name}: {m.worker.error!r}"
        for m in messages
        if isinstance(m, Worker.StateChanged) and m.state == WorkerState.ERROR
    ]


async def live_and_left(
    app: TuiAgentApp, start: Callable[[], tuple[Any, Any]], leave: Leave
) -> tuple[str, list[str]]:
    """Run the app, start the session `start` makes and leave it as `leave` says; wait for a
    popped session to end. The session's id, and the workers that failed."""
    messages: list[Message] = []

    def hook(message: Message) -> None:
        messages.append(message)
        leave.dispatched(message)

    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await wait_for_home(pilot)
        started, agent = start()
        app.start_session(started, agent)
        screen = app.screen
        assert isinstance(screen, SessionScreen) and screen.live is not None
        live = screen.live
        live.recorder.listeners.append(leave.recorded)
        await asyncio.wait_for(leave.left.wait(), WAIT)
        if leave.how == "pop":
            await wait_until(pilot, lambda: not screen.is_attached)
            await wait_until(pilot, lambda: live.worker.is_finished, WAIT)
            await pilot.pause()
    return live.recorder.session_id, worker_failures(messages)


def recorded_whole(events: list[Event], kinds: list[str] | None = None) -> SessionState:
    """The state of a session recorded whole: seqs 1..n, no error, exactly one SessionEnded
    and last; completed, or cancelled. With `kinds`, the events are those (completed) or the
    first of them and then the SessionEnded (cancelled)."""
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert [i for i, e in enumerate(events) if isinstance(e, SessionEnded)] == [len(events) - 1]
    assert not [e.message for e in events if isinstance(e, Error)]
    state = fold(events)
    recorded = kinds_of(events)
    if state.status != "completed":
        assert (state.status, state.stopped_reason) == ("cancelled", "cancelled")
        if kinds is not None:
            assert recorded[:-1] == kinds[: len(recorded) - 1]
    elif kinds is not None:
        assert recorded == kinds
    return state


@pytest.fixture
def code_settings(tmp_path: Path, server: ScriptedModel) -> Settings:
    require_backend("bubblewrap")
    server.push(*[text(json.dumps(turn), chunk_size=24) for turn in CODE_TURNS])
    return scripted_settings(server, tmp_path, "bubblewrap")


@pytest.mark.parametrize(("kind", "step", "how", "moment"), CODE_LEAVES)
async def test_leaving_a_code_session_at_each_kind_of_event(
    code_settings: Settings, kind: str, step: int | None, how: str, moment: str
) -> None:
    app = TuiAgentApp(code_settings.db, settings=code_settings)
    leave = Leave(app, how, first_of(kind, step), moment)

    def start() -> tuple[Any, Any]:
        launch = prepare(CodeRequest(task="List the orders"), code_settings)
        return launch.started, launch.events

    session_id, failures = await live_and_left(app, start, leave)
    assert failures == []
    assert leave.at is not None
    state = recorded_whole(await stored_events(code_settings.db, session_id), CODE_KINDS)
    if how == "pop":  # the agent runs on without its screen
        assert state.status == "completed"


async def paced(events: list[Event], pace: float) -> AsyncIterator[Event]:
    """A scripted agent: `events`, `pace` seconds apart (a few to a frame)."""
    for event in events:
        await asyncio.sleep(pace)
        yield event


SCRIPTED_KINDS = sorted({type(e).__name__ for e in codeact_payloads()} | {"SessionEnded"})
SCRIPTED_LEAVES = [(kind, how, i % 4) for i, kind in enumerate(SCRIPTED_KINDS) for how in LEAVES]
"""Each kind popped and exited, 0 to 3 turns of the loop into its frame."""


@pytest.mark.parametrize(("kind", "how", "ticks"), SCRIPTED_LEAVES)
async def test_leaving_a_frame_while_it_is_shown(
    tmp_path: Path, kind: str, how: str, ticks: int
) -> None:
    """A scripted agent's session (every kind of card, no sandbox: quick), left `ticks` turns
    of the loop into showing the frame that carries the first event of `kind`."""
    settings = Settings(db=tmp_path / "sessions.db", sandbox="bubblewrap")
    app = TuiAgentApp(settings.db, settings=settings)
    leave = Leave(app, how, lambda event: type(event).__name__ == kind, "shown", ticks)

    def start() -> tuple[Any, Any]:
        return started(), paced(codeact_payloads(), 0.03)

    session_id, failures = await live_and_left(app, start, leave)
    assert failures == []
    assert leave.at is not None
    state = recorded_whole(await stored_events(settings.db, session_id))
    if how == "pop":
        assert state.status == "completed"
