"""A code session live in the TUI: the scripted model server streams through litellm, code runs
in a real sandbox (docker, else bubblewrap; docker under CI and for the snapshots).

`HeldModel` is the scripted server pausing one reply after a given chunk, so "mid-stream" is a
fixed point. For the snapshots, `PinnedSandbox` wraps the real sandbox: it reports every run as
taking 0.05 s and holds its close until the app exits, so the screen after the final answer
(before the session ends) looks the same on every run; the clock is pinned as in
test_snapshots.py.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest
from session_factory import wait_until
from support.requirements import sandbox_backend
from support.scripted_model import Reply, ScriptedModel, _Handler, text
from support.sessions import scripted_settings
from textual.message import Message
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Markdown, Static

from tui_agent.agents.codeact import run_codeact
from tui_agent.agents.launch import prepare
from tui_agent.agents.requests import CodeRequest
from tui_agent.config import Settings
from tui_agent.events import (
    CodeProposed,
    Event,
    ExecutionFinished,
    ExecutionOutput,
    Log,
    SessionStarted,
    ThoughtDelta,
)
from tui_agent.formatting import session_title
from tui_agent.llm import LLM
from tui_agent.sandbox.base import Sandbox
from tui_agent.sandbox.choose import open_sandbox
from tui_agent.sandbox.process import LogCallback
from tui_agent.sandbox.wire import ExecuteRequest, ExecuteResult
from tui_agent.session import fold
from tui_agent.store import Store
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.messages import EventsReceived
from tui_agent.tui.screens.approval import ApprovalModal, ModalApprover
from tui_agent.tui.screens.confirm import CancelRunModal
from tui_agent.tui.screens.session import SessionScreen
from tui_agent.tui.widgets.step_card import StepCard
from tui_agent.tui.widgets.stream_pane import StreamPane

pytestmark = pytest.mark.usefixtures("utc")

TASK = (
    "Calculate compound interest at 15k premium, 6% interest compounded semi annually for 6 years"
)
SESSION_ID = "c0dea0000001"
CHUNK = 8
HOLD_AT = 6
"""The held reply pauses before its 6th chunk: 5 chunks of CHUNK characters have arrived."""
TURNS: list[dict[str, str]] = [
    {
        "thought": "I need to use the compound interest formula A = P(1 + r/n)^(nt), "
        "with the principal, the rate and the number of periods.",
        "action": "execute_code",
        "code": "principal = 15000\nrate = 0.06\n"
        "final_amount = principal * (1 + rate / n) ** (n * t)",
    },
    {
        "thought": "I got an error because I didn't define all variables. Let me fix this...",
        "action": "debug_error",
        "code": "n = 2\nt = 6\nfinal_amount = principal * (1 + rate / n) ** (n * t)\n"
        "print(f'Final Amount: ${final_amount:,.2f}')\n"
        "print(f'Compound Interest: ${final_amount - principal:,.2f}')",
    },
    {
        "thought": "Perfect! The calculation executed successfully and shows the final amount.",
        "action": "provide_answer",
        "final_answer": "With a $15,000 premium at 6% compounded semi-annually for 6 years you "
        "would earn **$6,386.41** in interest, a final amount of **$21,386.41**.",
    },
]
FIRST_REPLY = json.dumps(TURNS[0])
STREAMED = FIRST_REPLY[: (HOLD_AT - 1) * CHUNK]
PARTIAL_THOUGHT = STREAMED.removeprefix('{"thought": "')


class _HoldingHandler(_Handler):
    def _chunks(self, body: dict[str, Any], reply: Reply) -> Iterator[dict[str, Any]]:
        scripted = self.scripted
        assert isinstance(scripted, HeldModel)
        number = len(scripted.requests)
        for index, chunk in enumerate(super()._chunks(body, reply)):
            if number == scripted.hold_request and index == HOLD_AT:
                scripted.held.set()
                scripted.release.wait(60)
            yield chunk


class HeldModel(ScriptedModel):
    """The scripted model; request number `hold_request` pauses before chunk HOLD_AT until
    `release` is set."""

    handler_class = _HoldingHandler

    def __init__(self, replies: list[Reply], hold_request: int = 1) -> None:
        super().__init__(replies)
        self.hold_request = hold_request
        self.held = threading.Event()
        self.release = threading.Event()

    def stop(self) -> None:
        self.release.set()
        super().stop()


class PinnedSandbox:
    """The real sandbox; runs report 0.05 s, and `close` holds until the app's exit cancels it
    (at most HOLD seconds) before closing the real one, so the session stays live meanwhile."""

    HOLD = 60.0

    def __init__(self, real: Sandbox) -> None:
        self.real = real
        self.name = real.name
        self.isolated = real.isolated

    async def start(self) -> None:
        await self.real.start()

    async def execute(
        self, request: ExecuteRequest, on_logs: LogCallback | None = None
    ) -> ExecuteResult:
        result = await self.real.execute(request, on_logs=on_logs)  # type: ignore[call-arg]
        return result.model_copy(update={"duration": 0.05})

    async def reset(self) -> None:
        await self.real.reset()

    async def close(self) -> None:
        try:
            await asyncio.sleep(self.HOLD)
        finally:
            await self.real.close()

    async def __aenter__(self) -> PinnedSandbox:
        await self.start()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()


class PinnedClock:
    def __init__(self, offset: float) -> None:
        self.base = 0.0
        self.offset = offset

    def __call__(self) -> float:
        return self.base + self.offset


@pytest.fixture
def server() -> Iterator[HeldModel]:
    replies = [text(json.dumps(turn), chunk_size=CHUNK) for turn in TURNS]
    with HeldModel(replies) as scripted:
        yield scripted


def settings_for(server: ScriptedModel, tmp_path: Path, **extra: Any) -> Settings:
    return scripted_settings(server, tmp_path, sandbox_backend(), **extra)


def card(screen: SessionScreen, index: int) -> StepCard | None:
    cards = [c for c in screen.query(StepCard) if c.border_title == f"Step {index}"]
    return cards[0] if cards else None


def prose_shown(view: Widget) -> str:
    """The text a thought's or an answer's view shows (a Markdown view: its source)."""
    if isinstance(view, Markdown):
        return view.source
    assert isinstance(view, Static)
    return str(view.content)


def thought_shown(screen: SessionScreen, index: int) -> str | None:
    found = card(screen, index)
    return prose_shown(found.query_one(".thought")) if found else None


def final_answer_shown(screen: SessionScreen) -> str | None:
    shown = [prose_shown(view) for view in screen.query(".final-answer")]
    return shown[0] if shown else None


async def live_screen(pilot: Pilot[Any]) -> SessionScreen:
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, SessionScreen))
    screen = pilot.app.screen
    assert isinstance(screen, SessionScreen)
    return screen


async def test_the_thought_streams_into_the_pane_then_the_answer_shows(
    server: HeldModel, tmp_path: Path
):
    settings = settings_for(server, tmp_path)
    app = TuiAgentApp(settings.db)
    launch = prepare(CodeRequest(task=TASK), settings)
    app.start_session(launch.started, launch.events, session_id=SESSION_ID)
    messages: list[Message] = []
    async with app.run_test(size=(100, 40), message_hook=messages.append) as pilot:
        screen = await live_screen(pilot)
        partial = PARTIAL_THOUGHT.rstrip()  # a trailing space is shown by neither view
        await wait_until(pilot, lambda: thought_shown(screen, 1) == partial, timeout=60)

        def delivered() -> list[Event]:
            """The events the screen was handed, frame by frame, in order."""
            frames = {id(m): m.events for m in messages if isinstance(m, EventsReceived)}
            return [event for events in frames.values() for event in events]

        def deltas() -> list[ThoughtDelta]:
            return [e for e in delivered() if isinstance(e, ThoughtDelta)]

        await wait_until(pilot, lambda: "".join(d.text for d in deltas()) == PARTIAL_THOUGHT)
        assert len(deltas()) >= 3
        assert [e.seq for e in delivered()] == list(range(1, len(delivered()) + 1))
        assert screen.state.status == "running" and final_answer_shown(screen) is None

        server.release.set()
        await wait_until(pilot, lambda: screen.state.status == "completed", timeout=120)
        await wait_until(pilot, lambda: final_answer_shown(screen) == TURNS[2]["final_answer"])
        assert thought_shown(screen, 1) == TURNS[0]["thought"]
        assert thought_shown(screen, 3) == TURNS[2]["thought"]
    async with await Store.open(settings.db) as store:
        state = fold(await store.events(SESSION_ID))
    assert state.status == "completed" and "21,386.41" in (state.final_answer or "")


def execution_shown(screen: SessionScreen, index: int) -> str:
    """The execution part of step `index`'s card ("" until the card and its parts are
    mounted: a card can be in the pane a frame before its children are)."""
    found = card(screen, index)
    parts = found.query(".execution").results(Static) if found else iter(())
    return next((str(part.content) for part in parts), "")


def ticks_shown(screen: SessionScreen) -> list[int]:
    """The live pane of step 1 as numbers: the count of hidden earlier lines, then each tick."""
    shown = execution_shown(screen, 1)
    hidden = re.search(r"… (\d+) earlier output lines", shown)
    ticks = [int(n) for n in re.findall(r"^out│ tick (\d+)$", shown, re.MULTILINE)]
    return [int(hidden[1]) if hidden else 0, *ticks] if ticks else []


async def test_output_shows_while_the_code_runs_and_escape_cancels_once_confirmed(
    tmp_path: Path,
):
    ticking = (
        "import time\nfor i in range(600):\n    print(f'tick {i}', flush=True)\n    time.sleep(0.1)"
    )
    turn = {"thought": "Tick for a minute.", "action": "execute_code", "code": ticking}
    with ScriptedModel([text(json.dumps(turn))]) as scripted:
        settings = settings_for(scripted, tmp_path)
        app = TuiAgentApp(settings.db)
        launch = prepare(CodeRequest(task=TASK), settings)
        app.start_session(launch.started, launch.events, session_id=SESSION_ID)
        async with app.run_test(size=(100, 40)) as pilot:
            screen = await live_screen(pilot)
            await wait_until(pilot, lambda: len(ticks_shown(screen)) >= 4, timeout=60)
            step = screen.state.steps[1]
            assert step.running and step.execution is None
            # The latest lines in order, those before them counted (a loaded machine may show
            # the pane first when tick 30 is out).
            hidden, *ticks = ticks_shown(screen)
            assert ticks == list(range(hidden, hidden + len(ticks)))
            await pilot.press("escape")  # asks first; n lets it run on
            await wait_until(pilot, lambda: isinstance(pilot.app.screen, CancelRunModal))
            await pilot.press("n")
            await wait_until(pilot, lambda: pilot.app.screen is screen)
            assert screen.running and screen.state.status == "running"
            await pilot.press("escape", "escape")  # a second Escape confirms
            await wait_until(
                pilot, lambda: screen.state.status == "cancelled" and not screen.running
            )
            assert pilot.app.screen is screen  # it stays, to show how the session ended
            await wait_until(pilot, lambda: "cancelled" in str(screen.title_content()))
            ended = screen.query_one(".ended", Static)
            await wait_until(pilot, lambda: "■ cancelled" in str(ended.content))
            step_card = card(screen, 1)
            assert step_card is not None and not step_card.has_class("-running")
            assert step_card.border_subtitle == "■ cancelled while running"
            await pilot.press("escape")
            await wait_until(pilot, lambda: not isinstance(pilot.app.screen, SessionScreen))
    async with await Store.open(settings.db) as store:
        events = await store.events(SESSION_ID)
    state = fold(events)
    assert (state.status, state.stopped_reason) == ("cancelled", "cancelled")
    assert any(isinstance(e, ExecutionOutput) for e in events)


async def approval_modal(pilot: Pilot[Any], step: int) -> ApprovalModal:
    """The approval modal of `step`, once it is mounted (its editor has the focus)."""

    def shown() -> bool:
        screen = pilot.app.screen
        if not (isinstance(screen, ApprovalModal) and screen.step == step):
            return False
        return screen.focused is not None and screen.focused.id == "approval-code"

    await wait_until(pilot, shown, timeout=60)
    modal = pilot.app.screen
    assert isinstance(modal, ApprovalModal)
    return modal


async def test_approval_modal_edits_then_skips(tmp_path: Path):
    turns = [
        {"thought": "Divide.", "action": "execute_code", "code": "print(1 / 0)"},
        {"thought": "Delete.", "action": "execute_code", "code": "print('deleting')"},
        {"thought": "Done.", "action": "provide_answer", "final_answer": "Half is 0.5."},
    ]
    with ScriptedModel([text(json.dumps(turn)) for turn in turns]) as scripted:
        settings = settings_for(scripted, tmp_path)
        app = TuiAgentApp(settings.db)
        launch = prepare(
            CodeRequest(task=TASK, approve=True), settings, approver=ModalApprover(app)
        )
        app.start_session(launch.started, launch.events, session_id=SESSION_ID)
        async with app.run_test(size=(100, 40)) as pilot:
            modal = await approval_modal(pilot, step=1)
            assert modal.editor.text == "print(1 / 0)"
            await pilot.click("#approval-code")
            await pilot.press("end", "backspace", "backspace", "2", ")")
            assert modal.editor.text == "print(1 / 2)"
            await pilot.press("ctrl+r")
            await approval_modal(pilot, step=2)
            await pilot.press("escape")
            screen = await live_screen(pilot)
            await wait_until(pilot, lambda: screen.state.status == "completed", timeout=60)
        told = scripted.requests[2].messages[-1]["content"]
    assert told.startswith("EXECUTION_RESULT: not run: the user skipped this code.")
    async with await Store.open(settings.db) as store:
        events = await store.events(SESSION_ID)
    proposed = [e.code for e in events if isinstance(e, CodeProposed)]
    assert proposed == ["print(1 / 0)", "print(1 / 2)", "print('deleting')"]
    [finished] = [e for e in events if isinstance(e, ExecutionFinished)]
    assert [line.text for line in finished.logs] == ["0.5"]
    notes = [e.message for e in events if isinstance(e, Log)]
    assert notes == [
        "step 1: the user edited the code before it ran",
        "step 2: the user skipped this code; the model is told",
    ]


def pinned_app(server: HeldModel, tmp_path: Path, clock: PinnedClock) -> tuple[TuiAgentApp, Any]:
    """The app running a code session on the pinned sandbox (docker only: its name shows)."""
    real = open_sandbox(sandbox_backend(docker_only=True), workspace=tmp_path / "workspace")
    sandbox = PinnedSandbox(real)
    llm = LLM(server.model("gpt-4o-mini"), api_base=server.api_base, api_key="sk-test-0000")
    app = TuiAgentApp(tmp_path / "sessions.db", clock=clock)
    started = SessionStarted(kind="code", title=session_title(TASK), model=llm.model)
    app.start_session(started, run_codeact(TASK, llm=llm, sandbox=sandbox), session_id=SESSION_ID)
    return app, sandbox


async def pin(pilot: Pilot[Any], clock: PinnedClock) -> SessionScreen:
    screen = await live_screen(pilot)
    await wait_until(pilot, lambda: screen.state.started_at > 0)
    clock.base = screen.state.started_at
    return screen


def test_snapshot_live_mid_stream(snap_compare: Any, server: HeldModel, tmp_path: Path) -> None:
    clock = PinnedClock(7.0)
    app, _sandbox = pinned_app(server, tmp_path, clock)

    async def mid_stream(pilot: Pilot[Any]) -> None:
        screen = await pin(pilot, clock)
        partial = PARTIAL_THOUGHT.rstrip()  # a trailing space is shown by neither view
        await wait_until(pilot, lambda: thought_shown(screen, 1) == partial, timeout=60)
        screen.refresh_status()

    assert snap_compare(app, terminal_size=(100, 30), run_before=mid_stream)


def test_snapshot_live_after_the_final_answer(
    snap_compare: Any, server: HeldModel, tmp_path: Path
) -> None:
    server.release.set()  # nothing is held back: the whole conversation plays
    clock = PinnedClock(42.0)
    app, _sandbox = pinned_app(server, tmp_path, clock)

    async def answered(pilot: Pilot[Any]) -> None:
        screen = await pin(pilot, clock)
        await wait_until(pilot, lambda: final_answer_shown(screen) is not None, timeout=120)
        await wait_until(pilot, lambda: screen.shown_seq == screen.state.last_seq)  # all shown
        screen.refresh_status()
        pane = screen.query_one(StreamPane)
        await wait_until(pilot, lambda: pane.scroll_y == pane.max_scroll_y)  # settled at the end
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 72), run_before=answered)
