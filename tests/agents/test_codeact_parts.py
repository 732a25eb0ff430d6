"""The CodeAct agent's parts on their own: loop guard, result messages, budget, decisions."""

from __future__ import annotations

import json

import pytest

from tui_agent.agents.approval import Decision, decision_for
from tui_agent.agents.budget import FIRST_REPLY_TOKENS, Budget
from tui_agent.agents.codeact_history import codeact_history
from tui_agent.agents.codeact_prompts import (
    OUTPUT_LIMIT,
    TRACEBACK_LINES,
    USER_EDITED,
    defined_only,
    describe_result,
    result_message,
    system_message,
)
from tui_agent.agents.loop_guard import LoopGuard, error_signature
from tui_agent.cli.approval import TerminalApprover
from tui_agent.events import (
    CodeProposed,
    ErrorInfo,
    ExecutionFinished,
    LLMCall,
    Log,
    LogLine,
    SessionStarted,
    Thought,
)
from tui_agent.formatting import session_title
from tui_agent.llm.cost import price
from tui_agent.sandbox.wire import ExecuteResult

MODEL = "openai/gpt-4o-mini"


def failed(kind: str = "NameError", message: str = "name 'n' is not defined") -> ExecuteResult:
    return ExecuteResult(success=False, error=ErrorInfo(type=kind, message=message))


OK = ExecuteResult(success=True, result=2)


def test_the_same_error_in_a_row_is_a_loop_and_progress_resets_it():
    guard = LoopGuard(repeats=3)
    assert guard.check("a", failed()) is None
    assert guard.check("b", failed()) is None
    assert guard.check("c", OK) is None  # progress: the streak starts again
    assert guard.check("d", failed()) is None
    assert guard.check("e", failed("ZeroDivisionError", "division by zero")) is None
    assert guard.check("f", failed()) is None
    assert guard.check("g", failed()) is None
    assert guard.check("h", failed()) == (
        "loop: the same error 3 times in a row (NameError: name 'n' is not defined)"
    )


def test_failing_code_run_a_third_time_is_a_loop_even_with_cosmetic_changes():
    guard = LoopGuard()
    assert not guard.failed_before("x = 1\nprint(y)")
    assert guard.check("x = 1\nprint(y)", failed("NameError", "y")) is None
    assert guard.failed_before("x = 1\n\nprint(y)   \n")  # the model is told at this repeat
    assert guard.check("x = 1\n\nprint(y)   \n", failed("NameError", "y")) is None
    assert guard.check("z = 2", failed("ValueError", "z")) is None  # not in a row
    assert guard.check("x = 1\nprint(y)", failed("NameError", "y")) == (
        "loop: the same code failed 3 times (NameError: y)"
    )
    with pytest.raises(ValueError):
        LoopGuard(repeats=1)


def test_an_error_signature_is_one_short_line():
    long = failed("ValueError", "bad\nvalue " * 100)
    signature = error_signature(long)
    assert "\n" not in signature and len(signature) == 160 and signature.endswith("…")
    killed = ExecuteResult(success=False, killed_reason="kernel died (signal 9, SIGKILL)")
    assert error_signature(killed) == "kernel died (signal 9, SIGKILL)"


def test_a_result_message_holds_output_error_trimmed_traceback_and_value():
    trace = "Traceback (most recent call last):\n" + "".join(
        f'  File "<code>", line {i}, in f{i}\n' for i in range(30)
    )
    result = ExecuteResult(
        success=False,
        logs=[LogLine(stream="stdout", text="before"), LogLine(stream="stderr", text="warn")],
        error=ErrorInfo(type="KeyError", message="'x'", traceback=trace + "KeyError: 'x'\n"),
        result={"partial": [1, 2]},
    )
    lines = describe_result(result).splitlines()
    assert lines[:3] == ["before", "stderr: warn", "Error: KeyError: 'x'"]
    assert lines[3] == f"... {31 - TRACEBACK_LINES} earlier lines cut"
    assert lines[4] == '  File "<code>", line 15, in f15'
    assert lines[-2] == '  File "<code>", line 29, in f29'
    assert lines[-1] == 'Result: {"partial": [1, 2]}'
    assert "KeyError: 'x'" not in lines[-2:]


def test_the_same_code_with_the_same_output_a_third_time_is_a_loop():
    guard = LoopGuard()
    printed = ExecuteResult(success=True, logs=[LogLine(stream="stdout", text="42")])
    assert not guard.ran_before("print(42)", printed)
    assert guard.check("print(42)", printed) is None
    assert guard.ran_before("print(42)\n\n", printed)
    other = ExecuteResult(success=True, logs=[LogLine(stream="stdout", text="43")])
    assert not guard.ran_before("print(42)", other)  # same code, new output: progress
    assert guard.check("print(42)", other) is None
    assert guard.check("x = 1", OK) is None
    assert guard.check("print(42)", printed) is None
    assert guard.check("print(42)", printed) == (
        "loop: the same code ran 3 times with the same output"
    )


@pytest.mark.parametrize(
    ("code", "defined"),
    [
        ("def f(x):\n    return x\nclass C:\n    pass", ["f()", "C()"]),
        ("from typing import List\nasync def g(): ...", ["g()"]),
        ("def f(x):\n    return x\nprint(f(2))", []),
        ("def f(x):\n    return x\nvalue = f(2)", []),
        ("x = 1", []),
        ("def broken(:", []),
    ],
)
def test_code_that_only_defines_is_named(code, defined):
    assert defined_only(code) == defined


def test_a_silent_run_of_definitions_says_to_call_them():
    text = result_message(ExecuteResult(success=True), "def add(a, b):\n    return a + b")[
        "content"
    ]
    assert "It defined add(): a definition prints nothing." in text
    assert "e.g. print(add(...))" in text
    again = result_message(ExecuteResult(success=True), "x = 1", repeated=True)["content"]
    assert "you already ran this same code, and it did the same" in again


def test_a_result_message_for_silence_timeouts_and_floods():
    assert (
        describe_result(ExecuteResult(success=True))
        == "the code ran without error and printed nothing."
    )
    timeout = ExecuteResult(
        success=False,
        timed_out=True,
        killed_reason="timeout",
        error=ErrorInfo(type="TimeoutError", message="the run did not finish within 5 s"),
    )
    assert describe_result(timeout) == "Error: TimeoutError: the run did not finish within 5 s"
    flood = ExecuteResult(
        success=True, logs=[LogLine(stream="stdout", text=f"line {i}") for i in range(5000)]
    )
    text = describe_result(flood)
    assert len(text) < OUTPUT_LIMIT + 100 and text.startswith("line 0\nline 1")
    assert "characters cut] ..." in text and text.endswith("line 4999")
    message = result_message(OK, "1 + 1")
    assert message == {"role": "user", "content": "EXECUTION_RESULT: Result: 2"}


def test_the_system_prompt_names_the_format_and_the_network():
    closed, open_ = system_message(False)["content"], system_message(True)["content"]
    assert "exactly one JSON object" in closed and "EXECUTION_RESULT:" in closed
    assert "no network" in closed and "can reach the network" in open_


def test_a_budget_refuses_the_call_that_would_pass_it():
    messages = [{"role": "user", "content": "Compound interest on 15k?"}]
    budget = Budget(MODEL, limit=0.001)
    assert budget.refusal(messages) is None
    first_estimate = price(MODEL, 20, FIRST_REPLY_TOKENS)
    assert first_estimate is not None and first_estimate < 0.001
    call = LLMCall(model=MODEL, prompt_tokens=4_000, completion_tokens=500, cost=0.0009)
    budget.record(call, messages)
    refusal = budget.refusal(messages)
    assert refusal is not None and "$0.0009 is spent" in refusal
    assert "passes the $0.0010 budget" in refusal


def test_a_budget_stops_once_a_price_is_unknown():
    budget = Budget(MODEL, limit=5.0)
    budget.record(LLMCall(model=MODEL, completion_tokens=1, cost=None), [])
    assert budget.refusal([]) == (
        f"the price of a call to {MODEL} is unknown, so the $5.0000 budget cannot be kept"
    )


def test_decisions():
    assert decision_for("a", "a") == Decision("run")
    assert decision_for("a", "b") == Decision("edit", "b")
    with pytest.raises(ValueError):
        Decision("edit")
    with pytest.raises(ValueError):
        Decision("run", "code")


def test_the_terminal_approver_edits_in_the_users_editor(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("EDITOR", "sed -i s/0/2/")
    monkeypatch.delenv("VISUAL", raising=False)
    assert TerminalApprover()._edit("print(1 / 0)\n") == "print(1 / 2)\n"


def test_session_titles_are_one_short_line():
    assert session_title("  add\n  two numbers ") == "add two numbers"
    assert len(session_title("x" * 200)) == 80


def _history_of(*middle) -> list[dict]:
    events = [
        SessionStarted(kind="code", title="t", params={"task": "Print one."}),
        Thought(step=1, text="Print it."),
        CodeProposed(step=1, code="python\nprint(1)"),  # streamed as the model wrote it
        Log(message="step 1: reply read as: removed a stray 'python' line"),
        CodeProposed(step=1, code="print(1)"),  # the parser's repair
        *middle,
        ExecutionFinished(step=1, success=True, logs=[LogLine(stream="stdout", text="1")]),
    ]
    return codeact_history(events, network=False)


def test_a_rebuilt_history_shows_the_repaired_code_as_the_models_own():
    history = _history_of()
    assert json.loads(history[2]["content"])["code"] == "print(1)"
    assert "the user edited" not in history[3]["content"]


def test_a_rebuilt_history_tells_the_model_of_the_users_edit():
    history = _history_of(
        Log(message=f"step 1: {USER_EDITED}"), CodeProposed(step=1, code="print(2)")
    )
    assert json.loads(history[2]["content"])["code"] == "print(1)"
    assert "the user edited your code before it ran" in history[3]["content"]
    assert "print(2)" in history[3]["content"]
