"""Code that was never tested: a stub run as it was copied (only its docstring) is named, and
an answer that comes right after a run that only defined code is sent back once to have it
called first; never on the last step, never after the model was offered its code."""

from __future__ import annotations

import pytest
from codeact_support import record
from support.requirements import require_backend
from support.scripted_model import ScriptedModel, shaped_reply
from support.sessions import scripted_settings

from tui_agent.agents.codeact_prompts import bodiless, result_message
from tui_agent.agents.launch import prepare
from tui_agent.agents.requests import CodeRequest
from tui_agent.config import Settings
from tui_agent.events import ExecutionFinished, FinalAnswer, Log
from tui_agent.sandbox.wire import ExecuteResult

STUB = 'def add(a, b):\n    """Add a and b.\n    >>> add(1, 2)\n    3\n    """\n'
DEFINES = "def add(a, b):\n    return a + b\n"


@pytest.mark.parametrize(
    ("code", "names"),
    [
        (STUB, ["add()"]),
        ("def f():\n    pass\nasync def g():\n    ...\ndef h():\n    return 1", ["f()", "g()"]),
        (DEFINES, []),
        ("class C:\n    pass", []),
        ("def broken(:", []),
    ],
)
def test_functions_with_no_body_are_named(code, names):
    assert bodiless(code) == names


def test_a_silent_run_of_a_stub_says_it_has_no_body():
    text = result_message(ExecuteResult(success=True), STUB)["content"]
    assert "add() has no body, only a docstring (or pass): calling it returns None." in text
    assert "It defined" not in text


@pytest.fixture
def settings(tmp_path, server: ScriptedModel) -> Settings:
    require_backend("bubblewrap")
    return scripted_settings(server, tmp_path, "bubblewrap")


def run(code: str):
    return shaped_reply("fenced", "Run it.", "execute_code", code=code)


def answer(text: str):
    return shaped_reply("fenced", "", "provide_answer", final_answer=text)


async def code_session(settings: Settings, max_steps: int = 10):
    launch = prepare(CodeRequest(task="Write add(a, b).", max_steps=max_steps), settings)
    return await record(settings.db, launch.started, launch.events)


async def test_a_stub_run_again_and_again_is_never_offered_as_the_answer(
    server: ScriptedModel, settings: Settings
) -> None:
    # Qwen2.5-Coder-1.5B ran HumanEval's stub three times; it was offered as "code that ran
    # without error", and the session completed with a stub
    server.push(run(STUB), run(STUB), run(STUB), answer("add is written."))
    session = await code_session(settings)
    assert (session.state.status, session.state.stopped_reason) == (
        "stopped",
        "loop: the same code ran 3 times with the same output",
    )
    assert session.of(FinalAnswer) == []
    assert not any("offered" in log.message for log in session.of(Log))
    told = [request.messages[-1]["content"] for request in server.requests]
    assert all("add() has no body" in text for text in told[1:])
    assert not any("ran without error:" in text for text in told)


async def test_an_answer_before_the_defined_code_ran_is_sent_back_once(
    server: ScriptedModel, settings: Settings
) -> None:
    server.push(
        run(DEFINES),
        answer("add is written."),
        run(DEFINES + "print(add(1, 2))"),
        run(DEFINES),  # defined again, not called: its answer is taken this time
        answer("add(1, 2) is 3."),
    )
    session = await code_session(settings)
    assert (session.state.status, session.state.final_answer) == ("completed", "add(1, 2) is 3.")
    assert [e.text for e in session.of(FinalAnswer)] == ["add(1, 2) is 3."]
    sent_back = server.requests[2].messages[-2:]
    assert sent_back[0] == {"role": "assistant", "content": "Final answer: add is written."}
    assert sent_back[1]["content"] == (
        "Before you answer: your last run only defined add() and nothing has called it yet. "
        "Call it on an example and print the result; if the result is right, answer again."
    )
    [note] = [e for e in session.of(Log) if "before add() was ever called" in e.message]
    assert note.message.startswith("step 2: ")
    assert len(session.of(ExecutionFinished)) == 3 and len(server.requests) == 5


async def test_an_answer_on_the_last_step_is_taken_as_it_is(
    server: ScriptedModel, settings: Settings
) -> None:
    server.push(run(DEFINES), answer("add is written."))
    session = await code_session(settings, max_steps=2)
    assert (session.state.status, session.state.final_answer) == ("completed", "add is written.")
    assert len(server.requests) == 2
