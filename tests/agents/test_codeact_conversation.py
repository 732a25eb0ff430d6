"""Conversations with the CodeAct agent: follow-ups in one sandbox, messages queued mid-run,
an interrupted run, `/model`, continuing a stored session with its state restored, a fork.
Scripted model through litellm, real sandbox, real SQLite."""

from __future__ import annotations

from typing import Any

from support.conversations import Recorded, User, converse
from support.scripted_model import ScriptedModel, error
from support.scripted_model import action_reply as reply

from tui_agent.agents.launch import Launch, prepare
from tui_agent.agents.launch.resume import continue_session
from tui_agent.agents.requests import CodeRequest
from tui_agent.agents.step_loop import Conversation, FixedChoices
from tui_agent.config import Settings
from tui_agent.events import (
    ExecutionFinished,
    ExecutionStarted,
    HistoryFitted,
    LLMCall,
    Log,
    ModelChanged,
    SessionEnded,
    SessionResumed,
    StateRestored,
    StateRestoreRun,
    TurnEnded,
    UserMessage,
)
from tui_agent.session import fold
from tui_agent.store import Store


def run_code(code: str, thought: str = "Let me run this.") -> Any:
    return reply(thought, "execute_code", code=code)


def answer(text: str) -> Any:
    return reply("I have it.", "provide_answer", final_answer=text)


def conversation_launch(settings: Settings, task: str, **fields: Any) -> Launch:
    return prepare(CodeRequest(task=task, **fields), settings, conversation=Conversation())


CONTEXT_ERROR = (
    "This model's maximum context length is 8192 tokens. However, your messages resulted in "
    "9000 tokens. Please reduce the length of the messages."
)


async def run_one(settings: Settings, task: str, **fields: Any) -> Recorded:
    """A session of one turn (no conversation), as a headless command runs it."""
    launch = prepare(CodeRequest(task=task, **fields), settings)
    return await converse(settings.db, launch, User(Conversation(), []))


def outputs(session: Recorded) -> list[str]:
    return ["".join(line.text for line in e.logs).strip() for e in session.of(ExecutionFinished)]


async def three_turns(server: ScriptedModel, settings: Settings) -> Recorded:
    server.push(
        run_code("x = 41\nopen('notes.txt', 'w').write('kept for later')\nprint('set')"),
        answer("x is 41 and the notes are written."),
        run_code("print(x + 1)"),
        answer("x + 1 is 42."),
        run_code("print(open('notes.txt').read())"),
        answer("The notes say: kept for later."),
    )
    launch = conversation_launch(settings, "Set x to 41 and write notes.txt")
    assert launch.conversation is not None
    user = User(launch.conversation, ["What is x + 1?", "What do the notes say?"])
    return await converse(settings.db, launch, user)


async def test_three_turns_share_the_sandbox_and_the_history(
    server: ScriptedModel, settings: Settings
):
    session = await three_turns(server, settings)

    assert outputs(session) == ["set", "42", "kept for later"]
    said = [(e.turn, e.text, e.queued) for e in session.of(UserMessage)]
    assert said == [(2, "What is x + 1?", False), (3, "What do the notes say?", False)]
    assert [(e.turn, e.status) for e in session.of(TurnEnded)] == [
        (1, "completed"),
        (2, "completed"),
        (3, "completed"),
    ]
    assert session.state.status == "completed" and session.state.turn == 3
    assert session.of(SessionEnded)[-1].status == "completed"
    # the third turn's first call holds the whole conversation, task first
    third = server.requests[4].messages
    users = [m["content"] for m in third if m["role"] == "user"]
    assert users[0] == "Set x to 41 and write notes.txt"
    assert any("What is x + 1?" in u for u in users)
    assert users[-1].endswith("What do the notes say?")
    assert fold(session.stored).summary() == session.state.summary()


async def test_a_message_said_during_a_run_is_given_before_the_next_step(
    server: ScriptedModel, settings: Settings
):
    server.push(
        run_code("import time\ntime.sleep(1.5)\nprint('slept')"),
        answer("Done, and noted."),
    )
    launch = conversation_launch(settings, "Sleep a little")
    assert launch.conversation is not None
    user = User(
        launch.conversation,
        [],
        during=[
            (
                lambda e: isinstance(e, ExecutionStarted),
                lambda c: c.say("also, answer in French"),
            )
        ],
    )
    session = await converse(settings.db, launch, user)

    [queued] = session.of(UserMessage)
    assert (queued.turn, queued.text, queued.queued) == (1, "also, answer in French", True)
    order = [e.type for e in session.stored]
    assert order.index("execution_finished") < order.index("user_message")
    last = server.requests[1].messages[-1]
    assert last["role"] == "user" and "also, answer in French" in last["content"]
    assert last["content"].startswith("EXECUTION_RESULT:")  # joined to the run's result


async def test_an_interrupted_run_leaves_the_session_waiting_then_it_goes_on(
    server: ScriptedModel, settings: Settings
):
    server.push(
        run_code("x = 6\nprint('set')"),
        run_code("import time\nprint('starting', flush=True)\ntime.sleep(60)"),
        run_code("print(x * 7)"),
        answer("42"),
    )
    launch = conversation_launch(settings, "Take forever")
    assert launch.conversation is not None
    interrupted: list[bool] = []
    started = iter([False, True])  # the second run is the one to stop
    user = User(
        launch.conversation,
        ["Never mind: what is x * 7?"],
        during=[
            (
                lambda e: isinstance(e, ExecutionStarted) and next(started),
                lambda c: interrupted.append(c.interrupt()),
            )
        ],
    )
    session = await converse(settings.db, launch, user)

    assert interrupted == [True]
    first, second = session.of(TurnEnded)
    assert (first.status, first.stopped_reason) == ("stopped", "interrupted")
    assert (second.status, second.stopped_reason) == ("completed", None)
    # the interrupt stopped the interpreter; x came back before the next turn ran
    [restored] = session.of(StateRestored)
    assert (restored.ran, restored.total, restored.failed) == (1, 1, [])
    assert outputs(session)[-1] == "42"
    assert session.state.status == "completed"
    assert not any(step.running for step in session.state.steps.values())
    told = server.requests[2].messages
    assert told[-2]["role"] == "assistant" and "time.sleep(60)" in told[-2]["content"]
    assert "Interrupted by the user" in told[-1]["content"]


async def test_model_switches_are_recorded_and_every_call_names_its_model(
    server: ScriptedModel, settings: Settings
):
    server.push(answer("one"), answer("two"))
    launch = conversation_launch(settings, "Say one")
    assert launch.conversation is not None
    other = server.model("gpt-4o")
    user = User(launch.conversation, [(f"/model {other}", "Say two")])
    session = await converse(settings.db, launch, user)

    [changed] = session.of(ModelChanged)
    assert changed.model == other and changed.previous == settings.model
    assert [c.model for c in session.of(LLMCall)] == [settings.model, other]
    assert [r.body["model"] for r in server.requests] == ["gpt-4o-mini", "gpt-4o"]
    assert set(session.state.models) == {settings.model, other}
    assert session.state.model == other


async def test_an_unknown_model_is_said_and_the_conversation_goes_on(
    server: ScriptedModel, settings: Settings
):
    server.push(answer("one"), answer("two"))
    launch = conversation_launch(settings, "Say one")
    assert launch.conversation is not None
    user = User(launch.conversation, [("/model nonexistent-provider/nothing", "Say two")])
    session = await converse(settings.db, launch, user)

    assert not session.of(ModelChanged)
    [refused] = [e for e in session.of(Log) if e.message.startswith("/model nonexistent")]
    assert refused.level == "error" and "model" in refused.message
    assert [c.model for c in session.of(LLMCall)] == [settings.model, settings.model]


async def test_a_continued_session_gets_its_state_back_and_appends(
    server: ScriptedModel, settings: Settings
):
    first = await three_turns(server, settings)
    before = len(first.stored)
    server.push(run_code("print(x * 2)"), answer("82"))
    launch = continue_session(
        first.stored, settings, message="And twice x?", choices=FixedChoices()
    )
    assert launch.continues and launch.session_id == first.state.session_id
    session = await converse(settings.db, launch, User(Conversation(), []))

    assert session.stored[:before] == first.stored  # nothing recorded changes
    [resumed] = session.of(SessionResumed)
    assert (resumed.restore, resumed.runs) == ("state", 3)
    runs = session.of(StateRestoreRun)
    assert [(r.step, r.done, r.total, r.ok) for r in runs] == [
        (1, 1, 3, True),
        (3, 2, 3, True),
        (5, 3, 3, True),
    ]
    assert session.of(StateRestored)[-1].ran == 3
    assert outputs(session)[-1] == "82"
    [said] = [e for e in session.of(UserMessage) if e.turn == 4]
    assert said.text == "And twice x?"
    history = server.requests[-2].messages
    assert history[1]["content"] == "Set x to 41 and write notes.txt"
    assert "What do the notes say?" in " ".join(m["content"] for m in history)
    state = session.state
    assert state.status == "completed" and len(state.steps) == 8


async def test_a_fork_takes_another_path_from_its_step(server: ScriptedModel, settings: Settings):
    first = await three_turns(server, settings)
    server.push(run_code("print(x - 1)"), answer("40"))
    launch = continue_session(
        first.stored, settings, message="What is x - 1?", choices=FixedChoices(), fork_at=3
    )
    assert not launch.continues and launch.session_id != first.state.session_id
    assert launch.started.parent is not None
    assert (launch.started.parent.session_id, launch.started.parent.at_step) == (
        first.state.session_id,
        3,
    )
    session = await converse(settings.db, launch, User(Conversation(), []))

    assert outputs(session) == ["set", "42", "40"]  # steps 1-3 held, then the new path
    assert [r.step for r in session.of(StateRestoreRun)] == [1, 3]
    assert session.state.parent == launch.started.parent
    async with await Store.open(settings.db) as store:
        parent = await store.events(first.state.session_id)
    assert parent == first.stored


async def test_a_history_past_a_tiny_context_is_fitted_and_the_model_sees_it_fitted(
    server: ScriptedModel, settings: Settings
):
    server.push(
        run_code("print('a' * 5000)"),
        answer("printed a"),
        run_code("print('b' * 5000)"),
        answer("printed b"),
    )
    launch = conversation_launch(settings, "Print many a", context_tokens=2500)
    assert launch.conversation is not None
    session = await converse(settings.db, launch, User(launch.conversation, ["Now many b"]))

    assert outputs(session) == ["a" * 5000, "b" * 5000]
    fitted = session.of(HistoryFitted)
    assert fitted and fitted[0].limit == 2500 and fitted[0].shortened >= 1
    assert all(f.after < f.before for f in fitted)
    last = server.requests[-1].messages
    assert last[0]["role"] == "system" and last[1]["content"] == "Print many a"  # kept whole
    older = [m["content"] for m in last if "aaaa" in str(m["content"])]
    assert older and all("a" * 1000 not in text for text in older)  # shortened
    assert "b" * 4000 in last[-1]["content"]  # the last turn whole
    assert sum(len(str(m["content"])) for m in last) < 8000


async def test_a_context_length_error_is_fitted_harder_and_asked_again_never_shown(
    server: ScriptedModel, settings: Settings
):
    server.push(
        run_code("print('c' * 8000)"),
        error(400, CONTEXT_ERROR, error_code="context_length_exceeded"),
        answer("printed c"),
    )
    session = await run_one(settings, "Print many c")

    assert session.state.status == "completed" and session.state.final_answer == "printed c"
    assert not session.state.errors
    assert any("too long for" in log.message for log in session.of(Log))
    [fitted] = session.of(HistoryFitted)
    assert fitted.step == 2 and fitted.after < fitted.before
    retried = server.requests[2].messages
    assert "c" * 2000 not in " ".join(str(m["content"]) for m in retried)
