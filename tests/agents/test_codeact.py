"""The CodeAct loop end to end: scripted model through litellm, real sandbox, real SQLite."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from codeact_support import Recorded, ScriptedApprover, record
from support.scripted_model import Reply, ScriptedModel, error
from support.scripted_model import action_reply as reply

from tui_agent.agents.action_turn import REASKED
from tui_agent.agents.approval import Decision
from tui_agent.agents.launch import Launch, prepare
from tui_agent.agents.requests import CodeRequest, RequestError
from tui_agent.config import Settings
from tui_agent.events import (
    CodeProposed,
    Error,
    ExecutionFinished,
    ExecutionOutput,
    ExecutionStarted,
    LLMCall,
    Log,
    SessionEnded,
    Thought,
    ThoughtDelta,
)
from tui_agent.session import fold
from tui_agent.store import Store

TASK = (
    "Calculate compound interest at 15k premium, 6% interest compounded semi annually for 6 years"
)
FIRST_CODE = "principal = 15000\nrate = 0.06\nfinal_amount = principal * (1 + rate / n) ** (n * t)"
FIXED_CODE = (
    "n = 2  # semi-annual\n"
    "t = 6\n"
    "final_amount = principal * (1 + rate / n) ** (n * t)\n"
    "print(f'Final Amount: ${final_amount:,.2f}')\n"
    "print(f'Compound Interest: ${final_amount - principal:,.2f}')"
)
ANSWER = (
    "Based on the calculation, with a $15,000 premium at 6% interest compounded semi-annually "
    "for 6 years, you would earn $6,386.41 in compound interest, resulting in a final amount "
    "of $21,386.41."
)


def answer(text_: str = "Done.", **options: Any) -> Reply:
    return reply("I have what I need.", "provide_answer", final_answer=text_, **options)


def spec_replies() -> list[Reply]:
    """Seed 002's three turns."""
    return [
        reply(
            "I need to use the compound interest formula A = P(1 + r/n)^(nt)...",
            "execute_code",
            code=FIRST_CODE,
            chunk_size=5,
        ),
        reply(
            "I got an error because I didn't define all variables. Let me fix this...",
            "debug_error",
            code=FIXED_CODE,
        ),
        reply(
            "Perfect! The calculation executed successfully and shows the final amount.",
            "provide_answer",
            final_answer=ANSWER,
        ),
    ]


def launch(settings: Settings, task: str = TASK, approver: Any = None, **fields: Any) -> Launch:
    """A code session of `task` (`fields`: the CodeRequest's), prepared on `settings`."""
    return prepare(CodeRequest(task=task, **fields), settings, approver=approver)


async def run(settings: Settings, task: str = TASK, **options: Any) -> Recorded:
    prepared = launch(settings, task, **options)
    return await record(settings.db, prepared.started, prepared.events)


async def test_the_spec_example_end_to_end(server: ScriptedModel, settings: Settings, backend):
    server.push(*spec_replies())
    session = await run(settings, reply_format="json")  # as a hosted model is asked

    assert session.emitted == session.stored
    state = session.state
    assert (state.status, state.stopped_reason, state.kind) == ("completed", None, "code")
    assert fold(session.stored).summary() == state.summary()
    assert state.final_answer == ANSWER and "21,386.41" in state.final_answer
    assert state.params["task"] == TASK and state.params["sandbox"] == backend

    first, second, third = (state.steps[i] for i in (1, 2, 3))
    assert first.thought.startswith("I need to use the compound interest formula")
    assert (first.code, first.action) == (FIRST_CODE, "execute_code")
    assert first.execution is not None and not first.execution.success
    assert first.execution.error is not None
    assert first.execution.error.type == "NameError"
    assert first.execution.error.message == "name 'n' is not defined"
    assert (second.code, second.action) == (FIXED_CODE, "debug_error")
    assert second.execution is not None and second.execution.success  # principal persisted
    assert [line.text for line in second.execution.logs] == [
        "Final Amount: $21,386.41",
        "Compound Interest: $6,386.41",
    ]
    assert third.code is None and third.final_answer == ANSWER

    step_one = [e.type for e in session.stored if getattr(e, "step", None) == 1]
    deltas = step_one.count("thought_delta")
    assert deltas >= 5  # streamed in pieces, before the thought is complete
    assert step_one == [
        *["thought_delta"] * deltas,
        "thought",
        "code_proposed",
        "llm_call",
        "execution_started",
        "execution_finished",
    ]
    joined = "".join(e.text for e in session.of(ThoughtDelta) if e.step == 1)
    assert joined == first.thought
    assert session.of(ExecutionStarted)[0].backend == backend
    calls = session.of(LLMCall)
    assert [(c.step, c.purpose) for c in calls] == [(1, "action"), (2, "action"), (3, "action")]
    assert all(c.model == "openai/gpt-4o-mini" and c.cost and c.cost > 0 for c in calls)
    assert state.llm_calls == 3 and state.cost == pytest.approx(sum(c.cost for c in calls))

    conversation = server.requests[2].messages
    assert [m["role"] for m in conversation] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert "JSON" in conversation[0]["content"] and conversation[1]["content"] == TASK
    assert json.loads(conversation[2]["content"])["code"] == FIRST_CODE
    assert conversation[3]["content"].startswith(
        "EXECUTION_RESULT: Error: NameError: name 'n' is not defined\nTraceback"
    )
    assert conversation[5]["content"] == (
        "EXECUTION_RESULT: Final Amount: $21,386.41\nCompound Interest: $6,386.41"
    )


async def test_the_step_limit_stops_the_run(server: ScriptedModel, settings: Settings):
    server.push(
        reply("Look at a.", "execute_code", code="a = 1\nprint(a)"),
        reply("Look at b.", "execute_code", code="b = 2\nprint(b)"),
        answer(),
    )
    session = await run(settings, max_steps=2)
    assert (session.state.status, session.state.stopped_reason) == ("stopped", "max_steps")
    assert len(server.requests) == 2 and server.remaining == 1
    assert len(session.of(ExecutionFinished)) == 2 and session.state.final_answer is None
    assert "2 steps ran and no answer yet" in session.of(Log)[-1].message


async def test_the_budget_stops_before_a_call_that_would_pass_it(
    server: ScriptedModel, settings: Settings
):
    big = {"prompt_tokens": 100_000, "completion_tokens": 1_000}  # about $0.0156 at 4o-mini
    server.push(
        reply("Count.", "execute_code", code="print(1)", usage=big),
        reply("Again.", "execute_code", code="print(2)", usage=big),
    )
    session = await run(settings, budget=0.02)
    state = session.state
    assert (state.status, state.stopped_reason) == ("stopped", "budget")
    assert len(server.requests) == 1  # the second call was never made
    assert state.cost is not None and 0.015 < state.cost <= 0.02
    note = session.of(Log)[-1].message
    assert note.startswith("stopped before step 2: the next call would cost about $0.01")
    assert "passes the $0.0200 budget" in note


async def test_the_budget_also_holds_back_a_reask(server: ScriptedModel, settings: Settings):
    big = {"prompt_tokens": 100_000, "completion_tokens": 1_000}
    server.push(reply("No code yet.", "execute_code", usage=big), answer())
    session = await run(settings, budget=0.02)
    assert (session.state.status, session.state.stopped_reason) == ("stopped", "budget")
    assert len(server.requests) == 1 and session.of(ExecutionStarted) == []
    assert session.of(Log)[-1].message.startswith("stopped in step 1: the next call would cost")


async def test_a_budget_too_small_for_one_call_makes_no_call(
    server: ScriptedModel, settings: Settings
):
    server.push(answer())
    session = await run(settings, budget=0.00001)
    assert session.state.stopped_reason == "budget" and server.requests == []


def test_a_budget_needs_a_priced_model(server: ScriptedModel, settings: Settings):
    unpriced = settings.model_copy(update={"model": server.model("scripted")})
    with pytest.raises(RequestError, match="litellm has none for openai/scripted") as raised:
        launch(unpriced, budget=1.0)
    assert raised.value.field == "budget"


async def test_the_same_error_three_times_stops_the_run(server: ScriptedModel, settings: Settings):
    server.push(
        *[reply(f"Try {i}.", "debug_error", code=f"x{i} = {i}\nprint(x{i} / 0)") for i in range(3)],
        answer(),
    )
    session = await run(settings)
    assert session.state.status == "stopped"
    assert session.state.stopped_reason == (
        "loop: the same error 3 times in a row (ZeroDivisionError: division by zero)"
    )
    assert len(session.of(ExecutionFinished)) == 3 and server.remaining == 1


async def test_failing_code_sent_again_is_named_then_stops_the_run(
    server: ScriptedModel, settings: Settings
):
    failing = "import json\njson.loads('{broken')"
    server.push(
        reply("Parse it.", "execute_code", code=failing),
        reply("Parse it again.", "debug_error", code=failing + "\n"),
        reply("Something else.", "debug_error", code="print(1 / 0)"),
        reply("Parse it once more.", "debug_error", code=failing),
        answer(),
    )
    session = await run(settings)
    reason = session.state.stopped_reason
    assert reason is not None and reason.startswith("loop: the same code failed 3 times (")
    assert "JSONDecodeError" in reason and len(session.of(ExecutionFinished)) == 4
    results = [r.messages[-1]["content"] for r in server.requests[1:4]]
    told = ["this is the same code that already failed" in result for result in results]
    assert told == [False, True, False]


async def test_the_same_silent_code_a_third_time_is_offered_as_the_answer(
    server: ScriptedModel, settings: Settings
):
    """Seen from Qwen2.5-Coder-1.5B: a function defined (nothing printed), then the same code
    again and again until the step limit. The third run brings the offer; the model answers."""
    defines = "def add(a, b):\n    return a + b"
    server.push(
        *[reply("Define it.", "execute_code", code=defines)] * 3,
        answer("add(a, b) returns the sum."),
    )
    session = await run(settings)
    assert (session.state.status, session.state.final_answer) == (
        "completed",
        "add(a, b) returns the sum.",
    )
    assert len(session.of(ExecutionFinished)) == 3
    results = [r.messages[-1]["content"] for r in server.requests[1:4]]
    assert all("It defined add(): a definition prints nothing." in r for r in results)
    assert ["you already ran this same code" in r for r in results] == [False, True, True]
    assert "This code of yours ran without error" in results[2]
    assert "the same code ran 3 times with the same output" in results[2]
    offers = [e.message for e in session.of(Log) if "offered this code as the answer" in e.message]
    assert len(offers) == 1


async def test_code_that_already_ran_sent_again_with_an_answer_is_the_answer(
    server: ScriptedModel, settings: Settings
):
    """Seen from Qwen2.5-Coder-1.5B: each reply holds the code and a final_answer; the second
    sends the code that already ran: it is answering, not asking for a run."""
    defines = "def add(a, b):\n    return a + b"
    note = "add(a, b) returns the sum."
    server.push(
        reply("Define it.", "execute_code", code=defines, final_answer=note),
        reply("It works.", "debug_error", code=defines + "\n", final_answer=note),
    )
    session = await run(settings)
    assert (session.state.status, session.state.final_answer) == ("completed", note)
    assert len(session.of(ExecutionFinished)) == 1 and len(server.requests) == 2
    assert any("already ran without error, with an answer" in e.message for e in session.of(Log))


async def test_new_code_with_an_answer_runs_first(server: ScriptedModel, settings: Settings):
    server.push(
        reply("Try.", "execute_code", code="print(6 * 7)", final_answer="It is 41."),
        answer("It is 42."),
    )
    session = await run(settings)
    assert session.state.final_answer == "It is 42."
    assert len(session.of(ExecutionFinished)) == 1


async def test_the_same_silent_code_after_the_offer_stops_the_run(
    server: ScriptedModel, settings: Settings
):
    server.push(*[reply("Again.", "execute_code", code="x = 1")] * 4, answer())
    session = await run(settings)
    assert (session.state.status, session.state.stopped_reason) == (
        "stopped",
        "loop: the same code ran 3 times with the same output",
    )
    assert len(session.of(ExecutionFinished)) == 4


async def test_output_streams_while_the_code_runs(server: ScriptedModel, settings: Settings):
    slow = (
        "import time\nfor i in range(3):\n    print(f'tick {i}', flush=True)\n    time.sleep(0.6)"
    )
    server.push(reply("Tick slowly.", "execute_code", code=slow), answer())
    session = await run(settings)
    finished = session.of(ExecutionFinished)[0]
    outputs = session.of(ExecutionOutput)
    assert outputs, "no output arrived while the code ran"
    assert all(e.seq < finished.seq for e in outputs)
    live = [line.text for e in outputs for line in e.lines]
    everything = [line.text for line in finished.logs]
    assert everything == ["tick 0", "tick 1", "tick 2"] and live == everything[: len(live)]
    step = session.state.steps[1]
    assert step.live_logs == [] and step.execution == finished


async def test_cancelling_mid_run_keeps_the_session_as_cancelled(
    server: ScriptedModel, settings: Settings
):
    endless = "import time\nfor i in range(600):\n    print(i, flush=True)\n    time.sleep(0.1)"
    server.push(reply("Run for a minute.", "execute_code", code=endless), answer())
    prepared = launch(settings)
    started, agent = prepared.started, prepared.events
    printing = asyncio.Event()

    def listen(event, _state) -> None:
        if isinstance(event, ExecutionOutput):
            printing.set()

    async with await Store.open(settings.db) as store:
        from tui_agent.recorder import SessionRecorder

        recorder = SessionRecorder(store, listeners=[listen])
        task = asyncio.create_task(recorder.run(started, agent))
        await asyncio.wait_for(printing.wait(), 60)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        stored = await store.events(recorder.session_id)
    state = fold(stored)
    assert (state.status, state.stopped_reason) == ("cancelled", "cancelled")
    assert isinstance(stored[-1], SessionEnded) and state.steps[1].running
    assert state.steps[1].live_logs[0].text == "0"
    assert len(server.requests) == 1


async def test_skipped_code_is_not_run_and_the_model_is_told(
    server: ScriptedModel, settings: Settings
):
    server.push(
        reply("Clean up.", "execute_code", code="import shutil\nshutil.rmtree('/workspace')"),
        answer("Nothing was deleted."),
    )
    approver = ScriptedApprover([Decision("skip")])
    session = await run(settings, approve=True, approver=approver)
    assert approver.asked == [(1, "import shutil\nshutil.rmtree('/workspace')")]
    assert session.state.status == "completed" and session.of(ExecutionStarted) == []
    assert session.of(Log)[0].message == "step 1: the user skipped this code; the model is told"
    told = server.requests[1].messages[-1]
    assert told["role"] == "user"
    assert told["content"].startswith("EXECUTION_RESULT: not run: the user skipped this code.")
    assert session.state.params["approve"] is True


async def test_edited_code_runs_and_is_recorded(server: ScriptedModel, settings: Settings):
    server.push(
        reply("Divide.", "execute_code", code="print(1 / 0)"),
        answer("It printed 0.5."),
    )
    approver = ScriptedApprover([Decision("edit", "print(1 / 2)")])
    session = await run(settings, approve=True, approver=approver)
    proposed = [(e.code, e.action) for e in session.of(CodeProposed)]
    assert proposed == [("print(1 / 0)", "execute_code"), ("print(1 / 2)", "execute_code")]
    assert "the user edited the code before it ran" in session.of(Log)[0].message
    step = session.state.steps[1]
    assert step.code == "print(1 / 2)"
    assert step.execution is not None and step.execution.logs[0].text == "0.5"
    told = server.requests[1].messages[-1]["content"]
    assert told.startswith("EXECUTION_RESULT: 0.5\n\nNote: the user edited your code")
    assert "```python\nprint(1 / 2)\n```" in told


def test_the_local_sandbox_always_asks(settings: Settings):
    with pytest.raises(RequestError, match="the local sandbox is not isolated") as raised:
        launch(settings, sandbox="local")
    assert raised.value.field == "sandbox"
    started = launch(settings, sandbox="local", approver=ScriptedApprover([])).started
    assert started.params["approve"] is True and started.params["sandbox"] == "local"


async def test_an_unusable_reply_is_asked_again_inside_the_loop(
    server: ScriptedModel, settings: Settings
):
    server.push(
        reply("First I will print.", "execute_code", chunk_size=4),  # no code
        reply("Print the answer.", "execute_code", code="print(6 * 7)", chunk_size=4),
        answer("42"),
    )
    session = await run(settings)
    assert session.state.status == "completed" and session.state.final_answer == "42"
    assert [c.purpose for c in session.of(LLMCall)] == ["action", "repair", "action"]
    note = session.of(Log)[0]
    assert note.level == "warning"
    assert note.message == (
        "step 1: reply 1 could not be used (code is required when action is execute_code); "
        "asking again"
    )
    streamed = "".join(e.text for e in session.of(ThoughtDelta) if e.step == 1)
    assert streamed == "First I will print." + REASKED + "Print the answer."
    assert session.state.steps[1].thought == "Print the answer."
    assert [t.text for t in session.of(Thought) if t.step == 1] == [
        "First I will print.",
        "Print the answer.",
    ]
    repair = server.requests[1].messages[-1]["content"]
    assert repair.startswith("Your last reply could not be used: code is required")


async def test_no_usable_reply_after_the_one_reask_fails_the_session(
    server: ScriptedModel, settings: Settings
):
    server.push('{"thought": "cut', '{"thought": "cut again", "action": "execute_code"')
    session = await run(settings)
    assert (session.state.status, session.state.stopped_reason) == ("failed", "invalid_reply")
    [failure] = session.of(Error)
    assert failure.kind == "invalid_reply"
    assert failure.message.startswith("step 1: no valid action in 2 replies: ")
    assert len(server.requests) == 2


async def test_a_provider_error_fails_with_one_line(
    server: ScriptedModel, settings: Settings, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.push(error(401, "invalid api key"))
    session = await run(settings)
    assert (session.state.status, session.state.stopped_reason) == ("failed", "ApiKeyRejected")
    [failure] = session.of(Error)
    expected = f"the server at {server.api_base} wants an API key: set OPENAI_API_KEY"
    assert failure.message == expected


def test_missing_key_raises_before_anything_is_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    settings = Settings(model="anthropic/claude-3-5-sonnet-20240620", db=tmp_path / "s.db")
    with pytest.raises(RequestError, match="ANTHROPIC_API_KEY is not set") as raised:
        launch(settings)
    assert raised.value.field == "model"
    assert not (tmp_path / "s.db").exists()


def test_no_model_is_one_line(tmp_path: Path):
    settings = Settings(model=None, db=tmp_path / "s.db")
    with pytest.raises(RequestError) as raised:
        launch(settings)
    assert (raised.value.field, raised.value.problem) == ("model", "no model")
