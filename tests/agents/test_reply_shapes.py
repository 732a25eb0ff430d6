"""Replies as models really send them, for CodeAct and for code refinement.

Bare JSON, JSON in a fence, a ```python block with prose around it (code holding dict literals
too), prose only, and garbage: each conversation asserts the actions taken and how many model
calls they cost (one re-ask at most). Real sandbox, real SQLite, the scripted model via litellm.
"""

from __future__ import annotations

import pytest
from codeact_support import record
from support.requirements import require_backend
from support.scripted_model import SMALL_MODEL_SHAPES, ScriptedModel, shaped_reply, text
from support.sessions import record_exec, refine_stored, scripted_settings

from tui_agent.agents.launch import prepare
from tui_agent.agents.requests import CodeRequest
from tui_agent.analysis.shapes import FieldFeedback
from tui_agent.config import ReplyFormChoice, Settings
from tui_agent.events import (
    CodeProposed,
    ExecutionFinished,
    FinalAnswer,
    LLMCall,
    Log,
    RefinementProgress,
    Thought,
)
from tui_agent.llm import LLM
from tui_agent.sandbox.wire import ExecuteRequest
from tui_agent.store import Store

CODE = "print(6 * 7)"
DICT_CODE = "totals = {'thought': 'x', 'action': 'provide_answer', 'final_answer': 'no'}\nprint(42)"
CUT_OFF = '{"thought": "I will compute", "action": "execute_code", "code": "print(6'


@pytest.fixture
def settings(tmp_path, server: ScriptedModel) -> Settings:
    require_backend("bubblewrap")
    return scripted_settings(server, tmp_path, "bubblewrap")


async def codeact(settings: Settings):
    """A code session whose model is asked for JSON actions (the shapes here are JSON's)."""
    request = CodeRequest(task="What is six times seven?", reply_format="json")
    launch = prepare(request, settings)
    return await record(settings.db, launch.started, launch.events)


@pytest.mark.parametrize(
    ("code_shape", "code", "answer_shape"),
    [
        ("json", CODE, "prose"),
        ("fenced_json", CODE, "json"),
        ("python_block", CODE, "fenced_json"),
        ("python_block", DICT_CODE, "prose"),
    ],
)
async def test_codeact_runs_the_code_and_answers_in_every_shape(
    server: ScriptedModel, settings: Settings, code_shape: str, code: str, answer_shape: str
) -> None:
    server.push(
        shaped_reply(code_shape, "I'll compute it directly.", "execute_code", code=code),
        shaped_reply(answer_shape, "Done.", "provide_answer", final_answer="It is 42."),
    )
    session = await codeact(settings)
    assert (session.state.status, session.state.stopped_reason) == ("completed", None)
    [proposed] = session.of(CodeProposed)
    assert proposed.code == code
    [run] = session.of(ExecutionFinished)
    assert run.success and [line.text for line in run.logs] == ["42"]
    [answer] = session.of(FinalAnswer)
    assert answer.text == "It is 42."
    assert len(session.of(LLMCall)) == 2 == len(server.requests)
    repairs = [e.message for e in session.of(Log) if "reply read as" in e.message]
    if code_shape == "python_block":
        assert any("took the Python code block as the code" in m for m in repairs)
    if answer_shape == "prose":
        assert any("took the reply as the final answer" in m for m in repairs)


SMALL_MODEL_REPAIRS = {
    "label_in_code": "removed a stray 'python' line (a fence label) from the code",
    "fence_in_code": "removed a ``` fence around the code",
    "unclosed_fence": "read a code block whose ``` fence was never closed",
    "think": "took the <think> block as the thought",
    "json_comments": "removed comments from the JSON",
    "labelled": "read the action from labelled lines (no JSON)",
}
ANSWER_SHAPES = ("think", "json_comments", "labelled")


@pytest.mark.parametrize("code_shape", SMALL_MODEL_SHAPES)
async def test_codeact_reads_small_models_replies_without_a_reask(
    server: ScriptedModel, settings: Settings, code_shape: str
) -> None:
    answer_shape = ANSWER_SHAPES[SMALL_MODEL_SHAPES.index(code_shape) % len(ANSWER_SHAPES)]
    server.push(
        shaped_reply(code_shape, "I'll compute it directly.", "execute_code", code=CODE),
        shaped_reply(answer_shape, "It printed 42.", "provide_answer", final_answer="It is 42."),
    )
    session = await codeact(settings)
    assert (session.state.status, session.state.final_answer) == ("completed", "It is 42.")
    proposed = session.of(CodeProposed)[-1]  # streamed as written first, then as repaired
    assert proposed.code == CODE
    assert session.of(Thought)[0].text == "I'll compute it directly."
    [run] = session.of(ExecutionFinished)
    assert run.success and [line.text for line in run.logs] == ["42"]
    assert len(session.of(LLMCall)) == 2 == len(server.requests)
    repairs = " | ".join(e.message for e in session.of(Log) if "reply read as" in e.message)
    assert SMALL_MODEL_REPAIRS[code_shape] in repairs
    assert SMALL_MODEL_REPAIRS[answer_shape] in repairs


DEFINES = "def add(a, b):\n    return a + b"
DEBUG_WITHOUT_CODE = (
    "Thought: The code printed nothing, so I need to debug it.\nAction: debug_error"
)


async def test_a_reply_without_code_after_a_silent_run_is_offered_the_working_code(
    server: ScriptedModel, settings: Settings
) -> None:
    """Seen from Qwen2.5-Coder-1.5B: a function defined (nothing printed), then `debug_error`
    with no code, twice. The session must not fail with the working function written."""
    server.push(
        shaped_reply("json", "Define it.", "execute_code", code=DEFINES),
        text(DEBUG_WITHOUT_CODE),
        text(DEBUG_WITHOUT_CODE),
        shaped_reply("json", "It works.", "provide_answer", final_answer="add(a, b) is defined."),
    )
    session = await codeact(settings)
    assert (session.state.status, session.state.stopped_reason) == ("completed", None)
    assert session.state.final_answer == "add(a, b) is defined."
    assert len(session.of(ExecutionFinished)) == 1 and len(server.requests) == 4
    result = server.requests[1].messages[-1]["content"]
    assert "printed nothing" in result and "give your answer (provide_answer)" in result
    reask = server.requests[2].messages[-1]["content"]
    assert reask.startswith("Your last reply could not be used: code is required when action")
    assert (
        f"worked without error (what it defined still exists):\n```python\n{DEFINES}\n```" in reask
    )
    offer = server.requests[3].messages[-1]["content"]
    assert f"ran without error:\n```python\n{DEFINES}\n```" in offer
    assert server.requests[3].messages[-2] == {"role": "assistant", "content": DEBUG_WITHOUT_CODE}
    warnings = [e.message for e in session.of(Log) if e.level == "warning"]
    assert any("offered its last working code as the answer" in m for m in warnings)


async def test_the_offer_is_made_once_then_an_unusable_turn_fails_the_session(
    server: ScriptedModel, settings: Settings
) -> None:
    server.push(
        shaped_reply("json", "Define it.", "execute_code", code=DEFINES),
        *[text(DEBUG_WITHOUT_CODE)] * 4,
    )
    session = await codeact(settings)
    assert (session.state.status, session.state.stopped_reason) == ("failed", "invalid_reply")
    assert len(server.requests) == 5
    offers = [e for e in session.of(Log) if "offered its last working code" in e.message]
    assert len(offers) == 1


async def test_no_offer_when_the_last_run_failed(server: ScriptedModel, settings: Settings) -> None:
    server.push(
        shaped_reply("json", "Try.", "execute_code", code="print(undefined_name)"),
        text(DEBUG_WITHOUT_CODE),
        text(DEBUG_WITHOUT_CODE),
    )
    session = await codeact(settings)
    assert (session.state.status, session.state.stopped_reason) == ("failed", "invalid_reply")
    assert len(server.requests) == 3
    assert "worked without error" not in server.requests[2].messages[-1]["content"]
    assert not [e for e in session.of(Log) if "offered its last working code" in e.message]


BROKEN = '{"thought": "I will compute", "action": execute_code}'
BARE_DICT_CODE = (
    'answer = {"thought": "x", "action": "provide_answer", "final_answer": "no"}\nprint(42)'
)


@pytest.mark.parametrize(
    "garbage", [BROKEN, "}}]] ### @@@", '```json\n{"thought": "t", "action": "fly"}\n```']
)
async def test_codeact_reasks_garbage_once_and_never_answers_with_it(
    server: ScriptedModel, settings: Settings, garbage: str
) -> None:
    server.push(
        text(garbage),
        shaped_reply("python_block", "Computing.", "execute_code", code=CODE),
        shaped_reply("prose", "Done.", "provide_answer", final_answer="It is 42."),
    )
    session = await codeact(settings)
    assert (session.state.status, session.state.final_answer) == ("completed", "It is 42.")
    [proposed] = session.of(CodeProposed)
    assert proposed.code == CODE
    assert len(session.of(LLMCall)) == 3 == len(server.requests)
    assert session.state.steps[1].model_calls == 2 and session.state.steps[2].model_calls == 1
    reask = server.requests[1].messages[-1]["content"]
    assert reask.startswith("Your last reply could not be used: ")
    warnings = [e.message for e in session.of(Log) if e.level == "warning"]
    assert any(m.startswith("step 1: reply 1 could not be used (") for m in warnings)


async def test_codeact_runs_bare_code_holding_an_action_like_dict(
    server: ScriptedModel, settings: Settings
) -> None:
    server.push(
        text(BARE_DICT_CODE), shaped_reply("json", "Done.", "provide_answer", final_answer="42")
    )
    session = await codeact(settings)
    [proposed] = session.of(CodeProposed)
    assert proposed.code == BARE_DICT_CODE
    [run] = session.of(ExecutionFinished)
    assert [line.text for line in run.logs] == ["42"]
    assert session.state.final_answer == "42" and len(server.requests) == 2


async def test_codeact_reasks_a_cut_off_reply_once_then_fails(
    server: ScriptedModel, settings: Settings
) -> None:
    server.push(CUT_OFF, CUT_OFF)
    session = await codeact(settings)
    assert (session.state.status, session.state.stopped_reason) == ("failed", "invalid_reply")
    assert not session.of(ExecutionFinished)
    assert len(session.of(LLMCall)) == 2 == len(server.requests)
    reask = server.requests[1].messages[-1]["content"]
    assert reask.startswith("Your last reply could not be used: the JSON object is cut off")


# -- refinement --------------------------------------------------------------------------------

ORDERS = [{"id": 1, "qty": 2, "price": 100.0}, {"id": 2, "qty": 1, "price": 89.5}]
ORIGINAL = 'def main(orders):\n    return [{"id": o["id"], "total": None} for o in orders]\n'
FIXED = (
    "def main(orders):\n"
    '    return [{"id": o["id"], "total": o["qty"] * o["price"]} for o in orders]\n'
)
TOTAL_MISSING = FieldFeedback(field="total", issue="missing", correct_expression="qty * price")


async def refine_with(
    settings: Settings, reply_format: ReplyFormChoice = "auto"
) -> tuple[list, object]:
    state = await record_exec(
        settings, ExecuteRequest(code=ORIGINAL, args=[ORDERS]), "orders", agent_type="transformer"
    )
    assert settings.model is not None
    llm = LLM(settings.model, api_base=settings.api_base, reply_format=reply_format)
    async with await Store.open(settings.db) as store:
        _, refinement, events = await refine_stored(
            store, state.session_id, [TOTAL_MISSING], settings=settings, llm=llm, max_attempts=1
        )
    return events, refinement.outcome


FIXED_WITH_DICTS = (
    "NOTE = {'thought': 'a dict literal', 'action': 'provide_answer', 'final_answer': 'no'}\n"
    'DEFAULTS = {"qty": 0, "price": 0.0}\n'
    "def main(orders):\n"
    '    return [{"id": o["id"], "total": o.get("qty", DEFAULTS["qty"]) * o["price"]}'
    " for o in orders]\n"
)


@pytest.mark.parametrize(
    ("shape", "code"),
    [
        ("json", FIXED),
        ("fenced_json", FIXED),
        ("python_block", FIXED),
        ("python_block", FIXED_WITH_DICTS),
        ("unlabelled_block", FIXED_WITH_DICTS),
    ],
)
async def test_refinement_takes_the_code_in_every_shape(
    server: ScriptedModel, settings: Settings, shape: str, code: str
) -> None:
    if shape == "unlabelled_block":
        reply = text(f"Here is the improved transformer:\n```\n{code}```\nIt multiplies.")
    else:
        reply = shaped_reply(shape, "Here is the improved transformer:", "execute_code", code=code)
    server.push(reply)
    events, outcome = await refine_with(settings)
    assert outcome.fixed == ["total"]
    assert [e.code.strip() for e in events if isinstance(e, CodeProposed)] == [code.strip()]
    assert len([e for e in events if isinstance(e, LLMCall)]) == 1 == len(server.requests)
    logs = [e.message for e in events if isinstance(e, Log)]
    assert not any("could not be used" in m for m in logs)


@pytest.mark.parametrize("reply_format", ["auto", "json"])
async def test_refinement_asks_a_model_the_user_serves_for_a_fenced_reply(
    server: ScriptedModel, settings: Settings, reply_format: ReplyFormChoice
) -> None:
    server.push(shaped_reply("fenced", "Multiply qty by price.", "execute_code", code=FIXED))
    events, outcome = await refine_with(settings, reply_format)
    assert outcome.fixed == ["total"]
    [request] = server.requests
    system = request.messages[0]["content"]
    if reply_format == "auto":  # the scripted server is at an api_base: a model the user serves
        assert 'a line "Thought: what was wrong' in system and "JSON" not in system
        assert request.response_format is None
    else:
        assert "exactly one JSON object" in system
        assert request.response_format == {"type": "json_object"}
    thought = next(e for e in events if isinstance(e, Thought))
    assert thought.text == "Multiply qty by price."


async def test_refinement_reasks_a_reply_with_no_code_and_takes_the_code_that_follows(
    server: ScriptedModel, settings: Settings
) -> None:
    server.push(
        shaped_reply("json", "It is qty * price.", "provide_answer", final_answer="qty * price"),
        shaped_reply("python_block", "Here it is:", "execute_code", code=FIXED),
    )
    events, outcome = await refine_with(settings)
    assert outcome.fixed == ["total"]
    calls = [e for e in events if isinstance(e, LLMCall)]
    assert [c.purpose for c in calls] == ["refine", "refine repair"] and len(server.requests) == 2
    reask = server.requests[1].messages[-1]["content"]
    assert reask.startswith("Your last reply could not be used: the reply held no code")


@pytest.mark.parametrize(
    "unusable", ["I think the total should be qty times price.", CUT_OFF, BROKEN, "}}]] @@@"]
)
async def test_refinement_reasks_once_then_ends_the_attempt(
    server: ScriptedModel, settings: Settings, unusable: str
) -> None:
    server.push(text(unusable), text(unusable))
    events, outcome = await refine_with(settings)
    assert outcome.fixed == [] and outcome.candidate is None
    assert not [e for e in events if isinstance(e, CodeProposed)]
    assert len([e for e in events if isinstance(e, LLMCall)]) == 2 == len(server.requests)
    logs = [e.message for e in events if isinstance(e, Log)]
    assert any("could not be used" in m and "asking again" in m for m in logs)
    done = [e.message for e in events if isinstance(e, RefinementProgress)]
    assert "Fixed 0 fields, 1 remaining (2 model calls)" in done
    assert any("attempt 1: no usable code (no valid action in 2 replies" in m for m in logs)
