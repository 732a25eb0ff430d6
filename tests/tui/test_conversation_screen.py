"""Conversations on the session screen: the message line's turns, a message queued while the
agent works, Escape stopping a run (not the session), continuing a stored session from the
home screen with its state restored, a fork from a step card. Scripted model through litellm,
real sandbox, real SQLite."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from session_factory import wait_until
from support.requirements import sandbox_backend
from support.scripted_model import ScriptedModel
from support.scripted_model import action_reply as reply
from support.sessions import scripted_settings
from textual.pilot import Pilot
from textual.widgets import Static

from tui_agent.agents.launch import Launch, prepare
from tui_agent.agents.requests import CodeRequest
from tui_agent.agents.step_loop import Conversation
from tui_agent.config import Settings
from tui_agent.events import (
    Event,
    ExecutionFinished,
    ExecutionStarted,
    SessionEnded,
    SessionStarted,
    StateRestoreRun,
    TurnEnded,
    UserMessage,
)
from tui_agent.recorder import SessionRecorder
from tui_agent.store import Store
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.screens.home import HomeScreen
from tui_agent.tui.screens.session import SessionScreen
from tui_agent.tui.widgets.entry_cards import EntryCard
from tui_agent.tui.widgets.message_line import MessageInput
from tui_agent.tui.widgets.status_line import StatusLine
from tui_agent.tui.widgets.step_card import StepCard
from tui_agent.tui.widgets.stream_pane import StreamPane

pytestmark = pytest.mark.usefixtures("utc")

SESSION_ID = "c0de5a000001"
SLEEPY = (
    "import time\nfor i in range(300):\n    print(f'tick {i}', flush=True)\n    time.sleep(0.1)"
)
HELD = (
    "import os, time\nprint('holding', flush=True)\n"
    "while not os.path.exists('release'):\n    time.sleep(0.05)\nprint('released')"
)
"""A run that goes on until the test writes `release` into the workspace."""


def run_code(code: str) -> Any:
    return reply("Let me run this.", "execute_code", code=code)


def answer(text: str) -> Any:
    return reply("I have it.", "provide_answer", final_answer=text)


@pytest.fixture
def settings(tmp_path: Path, server: ScriptedModel) -> Settings:
    return scripted_settings(server, tmp_path, sandbox_backend())


def conversation_launch(settings: Settings, task: str) -> Launch:
    return prepare(
        CodeRequest(task=task), settings, session_id=SESSION_ID, conversation=Conversation()
    )


async def live_screen(pilot: Pilot[Any]) -> SessionScreen:
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, SessionScreen), timeout=30)
    screen = pilot.app.screen
    assert isinstance(screen, SessionScreen)
    return screen


def cards_text(screen: SessionScreen, kind: str) -> list[str]:
    """The text of the stream's cards of one kind (`user`, `turn`, `restored`…)."""
    return [str(card.content) for card in screen.query(f"EntryCard.{kind}-card").results(EntryCard)]


def status_text(screen: SessionScreen) -> str:
    return str(screen.query_one(StatusLine).content)


def status_of(home: HomeScreen, session_id: str) -> str | None:
    """The status the home screen lists for `session_id`."""
    return next((s.status for s in home.summaries if s.session_id == session_id), None)


async def say(pilot: Pilot[Any], text: str) -> None:
    """Type `text` into the message line and press Enter."""
    await pilot.click(MessageInput)
    await pilot.press(*text, "enter")


async def stored(settings: Settings, session_id: str = SESSION_ID) -> list[Event]:
    async with await Store.open(settings.db) as store:
        return await store.events(session_id)


async def test_two_turns_through_the_message_line(server: ScriptedModel, settings: Settings):
    server.push(
        run_code("x = 41\nprint('set')"),
        answer("x is 41."),
        run_code("print(x + 1)"),
        answer("x + 1 is 42."),
    )
    app = TuiAgentApp(settings.db, settings=settings)
    app.start_launch(conversation_launch(settings, "Set x to 41"))
    async with app.run_test(size=(100, 36)) as pilot:
        screen = await live_screen(pilot)
        await wait_until(pilot, lambda: screen.state.status == "waiting", timeout=60)
        await wait_until(pilot, lambda: "waiting for you" in status_text(screen))
        assert cards_text(screen, "turn") == ["── turn 1 · completed ──"]
        await say(pilot, "What is x + 1?")
        await wait_until(pilot, lambda: len(cards_text(screen, "turn")) == 2, timeout=60)
        assert cards_text(screen, "user") == ["you\nWhat is x + 1?"]
        line = screen.query_one(MessageInput)
        assert line.text == ""
        await pilot.press("up")  # the history brings back what was sent
        assert line.text == "What is x + 1?"
        await pilot.press("escape")  # waiting: leaving asks, then ends the conversation
        await pilot.press("escape")
        home = pilot.app.screen
        assert isinstance(home, HomeScreen)
        await wait_until(pilot, lambda: status_of(home, SESSION_ID) == "completed", timeout=30)
    events = await stored(settings)
    said = [(e.turn, e.text, e.queued) for e in events if isinstance(e, UserMessage)]
    assert said == [(2, "What is x + 1?", False)]
    outputs = [
        "".join(line.text for line in e.logs) for e in events if isinstance(e, ExecutionFinished)
    ]
    assert [o.strip() for o in outputs] == ["set", "42"]
    ended = events[-1]
    assert isinstance(ended, SessionEnded) and ended.status == "completed"


async def test_a_message_sent_mid_run_shows_queued_then_goes_to_the_model(
    server: ScriptedModel, settings: Settings
):
    server.push(run_code(HELD), answer("Done, and noted."))
    app = TuiAgentApp(settings.db, settings=settings)
    launch = conversation_launch(settings, "Tick a little")
    app.start_launch(launch)
    async with app.run_test(size=(100, 36)) as pilot:
        screen = await live_screen(pilot)
        assert launch.conversation is not None
        conversation = launch.conversation
        await wait_until(pilot, lambda: conversation.busy and 1 in screen.state.steps, timeout=60)
        await wait_until(pilot, lambda: screen.state.steps[1].running, timeout=60)
        await say(pilot, "answer in French")
        queued = screen.query_one("#queued", Static)
        await wait_until(pilot, lambda: "will be sent after this run" in str(queued.content))
        assert queued.display and "answer in French" in str(queued.content)
        assert cards_text(screen, "user") == []  # not given to the model yet
        (Path(settings.workspace or "") / "release").write_text("")
        await wait_until(pilot, lambda: screen.state.status == "waiting", timeout=60)
        await wait_until(pilot, lambda: not queued.display)
        assert cards_text(screen, "user") == ["you · sent while the agent worked\nanswer in French"]
    last = server.requests[1].messages[-1]
    assert "answer in French" in last["content"]


async def test_escape_stops_the_run_then_a_follow_up_goes_on(
    server: ScriptedModel, settings: Settings
):
    server.push(run_code(SLEEPY), run_code("print('after')"), answer("After it."))
    app = TuiAgentApp(settings.db, settings=settings)
    app.start_launch(conversation_launch(settings, "Tick for long"))
    async with app.run_test(size=(100, 36)) as pilot:
        screen = await live_screen(pilot)
        await wait_until(pilot, lambda: 1 in screen.state.steps, timeout=60)
        await wait_until(pilot, lambda: screen.state.steps[1].running, timeout=60)
        await pilot.press("escape")  # stops the run only: no question, the session waits
        await wait_until(pilot, lambda: screen.state.status == "waiting", timeout=30)
        assert pilot.app.screen is screen and screen.running
        turn = cards_text(screen, "turn")
        assert len(turn) == 1 and "turn 1 · stopped" in turn[0]
        await say(pilot, "Print after instead")
        await wait_until(pilot, lambda: len(cards_text(screen, "turn")) == 2, timeout=60)
        await pilot.press("ctrl+q")  # quitting while it waits ends the conversation
    events = await stored(settings)
    ends = [(e.turn, e.status) for e in events if isinstance(e, TurnEnded)]
    assert ends == [(1, "stopped"), (2, "completed")]
    outputs = [e for e in events if isinstance(e, ExecutionFinished)]
    assert "".join(line.text for line in outputs[-1].logs).strip() == "after"
    ended = events[-1]  # the app quit while it waited: ended as usual, not cancelled
    assert isinstance(ended, SessionEnded) and ended.status == "completed"


async def record_stored(settings: Settings) -> None:
    """A code session of two runs (x set, then a run that waits for `release`, written as it
    starts) and an answer, recorded and ended: what is continued or forked. `release` is
    gone after: restoring the state waits at the second run until the test writes it."""
    release = Path(settings.workspace or "") / "release"

    def released(event: Event, _state: object) -> None:
        if isinstance(event, ExecutionStarted):
            release.write_text("")

    launch = prepare(CodeRequest(task="Set x to 41"), settings, session_id=SESSION_ID)
    async with await Store.open(settings.db) as store:
        recorder = SessionRecorder(store, SESSION_ID, [released])
        state = await recorder.run(launch.started, launch.events)
    assert state.status == "completed" and len(state.steps) == 3
    release.unlink()


def stored_script(server: ScriptedModel) -> None:
    server.push(run_code("x = 41\nprint('set')"), run_code(HELD), answer("x is 41."))


async def test_continue_from_home_restores_the_state_then_takes_a_message(
    server: ScriptedModel, settings: Settings
):
    stored_script(server)
    await record_stored(settings)
    server.push(run_code("print(x + 1)"), answer("x + 1 is 42."))
    app = TuiAgentApp(settings.db, settings=settings)
    async with app.run_test(size=(100, 36)) as pilot:
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, HomeScreen))
        await pilot.press("ctrl+g")
        screen = await live_screen(pilot)
        assert screen.live is not None and screen.session_id == SESSION_ID
        assert 3 in screen.state.steps  # the stored history shows
        await wait_until(
            pilot, lambda: "restoring state: 1 of 2 runs" in status_text(screen), timeout=60
        )
        (Path(settings.workspace or "") / "release").write_text("")
        await wait_until(pilot, lambda: bool(cards_text(screen, "restored")), timeout=60)
        assert cards_text(screen, "restored")[0].startswith("✓ state restored: 2 of 2 runs")
        await wait_until(pilot, lambda: "restoring" not in status_text(screen))  # next frame
        await say(pilot, "What is x + 1?")
        await wait_until(pilot, lambda: screen.state.status == "waiting", timeout=60)
        await pilot.press("ctrl+q")
    events = await stored(settings)
    assert sum(isinstance(e, SessionStarted) for e in events) == 1  # appended, not a new one
    assert [e.done for e in events if isinstance(e, StateRestoreRun)] == [1, 2]
    outputs = [e for e in events if isinstance(e, ExecutionFinished)]
    assert "".join(line.text for line in outputs[-1].logs).strip() == "42"
    ended = events[-1]
    assert isinstance(ended, SessionEnded) and ended.status == "completed"


async def cursor_to_step(pilot: Pilot[Any], pane: StreamPane, step: int) -> None:
    """Move the stream pane's cursor up to the card of `step`."""
    pane.focus()
    while not (isinstance(card := pane.cursor_card, StepCard) and card.step.index == step):
        await pilot.press("up")


async def test_fork_from_a_step_card(server: ScriptedModel, settings: Settings):
    stored_script(server)
    await record_stored(settings)
    (Path(settings.workspace or "") / "release").write_text("")
    server.push(run_code("print(x * 2)"), answer("x * 2 is 82."))
    app = TuiAgentApp(settings.db, settings=settings, open_session=SESSION_ID)
    async with app.run_test(size=(100, 36)) as pilot:
        stored_screen = await live_screen(pilot)
        assert stored_screen.live is None
        await cursor_to_step(pilot, stored_screen.query_one(StreamPane), 1)
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: pilot.app.screen is not stored_screen, timeout=30)
        fork = await live_screen(pilot)
        assert fork.live is not None and fork.session_id != SESSION_ID
        assert fork.state.parent is not None and fork.state.parent.at_step == 1
        await wait_until(
            pilot,
            lambda: "state restored: 1 of 1 run" in "".join(cards_text(fork, "restored")),
            timeout=60,
        )
        await say(pilot, "What is x * 2?")
        await wait_until(pilot, lambda: fork.state.status == "waiting", timeout=60)
        fork_id = fork.session_id
        await pilot.press("escape", "escape")  # leave it: the conversation ends
        await wait_until(pilot, lambda: pilot.app.screen is stored_screen)
        await pilot.press("escape")
        home = pilot.app.screen
        assert isinstance(home, HomeScreen)
        await wait_until(pilot, lambda: status_of(home, fork_id) == "completed", timeout=30)
        title = str(home.table.get_row(fork_id)[1])
        assert title.startswith(f"↳ {SESSION_ID[:6]}@1 ")
    events = await stored(settings, fork_id)
    outputs = [e for e in events if isinstance(e, ExecutionFinished)]
    assert "".join(line.text for line in outputs[-1].logs).strip() == "82"
