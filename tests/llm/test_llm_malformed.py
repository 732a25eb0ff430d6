"""A corpus of malformed model replies, each played by the scripted server through litellm.

Every reply ends in one of three ways, never a crash: repaired in place (one call, the repair
listed), re-asked with the validation error (the re-ask message is checked), or, when the
re-asks run out, a clear stop.
"""

import json
from dataclasses import dataclass

import pytest
from support.scripted_model import Reply, ToolCallReply, text, tool_calls

from tui_agent.events import LLMCall
from tui_agent.llm import ActionOutcome, InvalidReply, next_action, stream_action
from tui_agent.llm.turn import ECHO_LIMIT

TASK = [
    {"role": "system", "content": "Answer with one JSON action."},
    {"role": "user", "content": "Compound interest on 15k at 6%, semi-annual, 6 years?"},
]
VALID = {"thought": "Compute it.", "action": "execute_code", "code": "print(15000 * 1.03 ** 12)"}


def obj(**fields) -> str:
    return json.dumps(fields, ensure_ascii=False)


@dataclass(frozen=True)
class Case:
    name: str
    reply: Reply
    repaired: str | None = None  # a repair note expected when fixed in place
    reask: str | None = None  # text expected in the re-ask message
    action: dict | None = None  # fields of the repaired action (subset)


def case(name: str, reply: str | Reply, **expect) -> Case:
    return Case(name, text(reply) if isinstance(reply, str) else reply, **expect)


HUGE_THOUGHT = "Consider the formula step by step. " * 6000  # ~210 kB
HUGE_PROSE = "I keep thinking about this problem without ever answering it. " * 5000

CORPUS = [
    case(
        "no_json",
        "I will calculate the compound interest now.",
        reask="the reply holds no JSON object",
    ),
    case(
        "truncated_json",
        '{"thought": "I need the formula", "action": "execute_code", "code": "p = 15000\\nr = 0.0',
        reask="the JSON object is cut off (the reply ended before it closed)",
    ),
    case(
        "truncated_at_the_token_limit",
        text('{"thought": "A long plan that never ends', finish_reason="length"),
        reask="the reply hit the output limit before its JSON object closed; keep it shorter",
    ),
    case(
        "wrong_action",
        obj(thought="t", action="run_tests", code="x = 1"),
        reask="action 'run_tests' is not one of execute_code, debug_error, provide_answer",
    ),
    case(
        "action_is_an_object",
        obj(thought="t", action={"type": "execute_code"}, code="x"),
        reask="action {'type': 'execute_code'} is not one of",
    ),
    case(
        "code_missing",
        obj(thought="t", action="execute_code"),
        reask="code is required when action is execute_code",
    ),
    case(
        "code_blank_for_debug",
        obj(thought="t", action="debug_error", code="   "),
        reask="code is required when action is debug_error",
    ),
    case(
        "code_wrong_type",
        obj(thought="t", action="execute_code", code=42),
        reask="code: Input should be a valid string (got int)",
    ),
    case(
        "thought_wrong_type",
        obj(thought=["a", "b"], action="execute_code", code="x"),
        reask="thought: Input should be a valid string (got list)",
    ),
    case(
        "provide_answer_without_final_answer",
        obj(thought="done", action="provide_answer"),
        reask="final_answer is required when action is provide_answer",
    ),
    case(
        "extra_keys",
        obj(**VALID, confidence=0.9, language="python"),
        repaired="ignored extra keys: confidence, language",
        action=VALID,
    ),
    case(
        "json_inside_prose",
        f"Let me compute this.\n{obj(**VALID)}\nThis should work.",
        repaired="ignored text around the JSON",
        action=VALID,
    ),
    case(
        "fenced_json", f"```json\n{obj(**VALID)}\n```", repaired="removed a ``` fence", action=VALID
    ),
    case(
        "trailing_commas",
        '{"thought": "Compute it.", "action": "execute_code", "code": "print(1)",}',
        repaired="removed trailing commas",
        action={"code": "print(1)"},
    ),
    case("python_quoting", str(VALID), repaired="read Python-style quoting", action=VALID),
    case(
        "triple_quoted_code",
        '{"thought": "t", "action": "execute_code", "final_answer": null, '
        '"code": """def f(s):\n    return s.split(",")  # "a" \'b\'\n\nprint(f("a,b"))"""}',
        repaired='read a Python """string""" as a JSON string',
        action={"code": 'def f(s):\n    return s.split(",")  # "a" \'b\'\n\nprint(f("a,b"))'},
    ),
    case(
        "continue_debugging_alias",
        obj(thought="fix", action="continue_debugging", code="n = 2"),
        repaired="read action 'continue_debugging' as 'debug_error'",
        action={"action": "debug_error", "code": "n = 2"},
    ),
    case(
        "action_in_other_case",
        obj(thought="t", action="Execute Code", code="x = 1"),
        repaired="read action 'Execute Code' as 'execute_code'",
    ),
    case(
        "capitalized_keys",
        '{"Thought": "t", "Action": "execute_code", "Code": "x = 1"}',
        repaired="read key 'Thought' as 'thought'",
        action={"thought": "t", "code": "x = 1"},
    ),
    case(
        "action_missing_but_code_given",
        obj(thought="t", code="x = 1"),
        repaired="no action given; took execute_code from the fields present",
    ),
    case(
        "code_fenced_inside_the_string",
        obj(thought="t", action="execute_code", code="```python\nprint(1)\n```"),
        repaired="removed a ``` fence around the code",
        action={"code": "print(1)"},
    ),
    case(
        "code_as_a_list_of_lines",
        obj(thought="t", action="execute_code", code=["a = 1", "print(a)"]),
        repaired="joined code given as a list of lines",
        action={"code": "a = 1\nprint(a)"},
    ),
    case(
        "answer_with_stray_code",
        obj(thought="t", action="provide_answer", final_answer="42", code="print(42)"),
        repaired="dropped code from provide_answer",
        action={"final_answer": "42"},
    ),
    case("empty_reply", "", reask="the reply was empty"),
    case("whitespace_reply", "  \n\t ", reask="the reply was empty"),
    case(
        "two_different_objects",
        obj(**VALID) + "\n" + obj(thought="then", action="provide_answer", final_answer="x"),
        reask="the reply holds 2 different JSON objects; send exactly one action",
    ),
    case(
        "the_same_object_twice",
        obj(**VALID) + "\n\n" + obj(**VALID),
        action=VALID,
        repaired="ignored text around the JSON",
    ),
    case(
        "array_of_one_object",
        f"[{obj(**VALID)}]",
        repaired="took the object out of a JSON array",
        action=VALID,
    ),
    case(
        "array_of_two_actions",
        f"[{obj(**VALID)}, {obj(thought='x', action='provide_answer', final_answer='y')}]",
        reask="the reply holds 2 different JSON objects",
    ),
    case("scalar_json", "21386.41", reask="the reply holds no JSON object"),
    case(
        "object_without_schema_fields",
        obj(result="21386.41"),
        reask="the JSON object has none of the fields thought, action, code, final_answer",
    ),
    case(
        "tool_call_instead_of_json",
        tool_calls(ToolCallReply("python", {"code": "1+1"})),
        reask="the reply called a tool instead of answering with an action",
    ),
    case(
        "unicode_and_raw_newlines",
        '{"thought": "計算します 😀", "action": "provide_answer", '
        '"final_answer": "Total: ¥21,386.41\nInterest: €6,386.41"}',
        action={"final_answer": "Total: ¥21,386.41\nInterest: €6,386.41"},
    ),
    case(
        "huge_valid_reply",
        text(obj(**{**VALID, "thought": HUGE_THOUGHT}), chunk_size=4096),
        action={"thought": HUGE_THOUGHT},
    ),
    case(
        "huge_reply_without_json",
        text(HUGE_PROSE, chunk_size=4096),
        reask="the reply holds no JSON object",
    ),
]


def test_the_corpus_is_large_and_covers_all_three_endings():
    assert len(CORPUS) >= 15
    assert sum(c.reask is not None for c in CORPUS) >= 10
    assert sum(c.reask is None for c in CORPUS) >= 10


@pytest.mark.parametrize("item", CORPUS, ids=lambda c: c.name)
async def test_malformed_reply_is_repaired_or_reasked(item: Case, server, make_llm):
    server.push(item.reply, obj(**VALID))
    outcome = await next_action(make_llm(), TASK)
    assert outcome.ok, outcome.error
    if item.reask is None:
        assert len(server.requests) == 1
        assert len(outcome.calls) == 1
        if item.repaired:
            assert item.repaired in outcome.repairs
        else:
            assert outcome.repairs == ()
        fields = outcome.action.model_dump()
        assert {k: fields[k] for k in item.action or {}} == (item.action or {})
        return
    assert len(server.requests) == 2
    assert [c.purpose for c in outcome.calls] == ["action", "repair"]
    assert outcome.action.model_dump(exclude_none=True) == VALID
    first = outcome.attempts[0]
    assert item.reask in first.error
    sent = server.requests[1].messages
    assert sent[: len(TASK)] == TASK
    assert item.reask in sent[-1]["content"]
    assert sent[-1]["role"] == "user"
    assert sent[-1]["content"].startswith("Your last reply could not be used: ")
    if first.reply.strip():
        echoed = sent[-2]
        assert echoed["role"] == "assistant"
        assert len(echoed["content"]) <= ECHO_LIMIT + len(" …[cut]")
    else:
        assert len(sent) == len(TASK) + 1  # nothing to echo for an empty reply


async def test_a_second_unusable_reply_ends_the_turn_with_a_clear_error(server, make_llm):
    server.push("no json here", obj(thought="t", action="execute_code"), obj(**VALID))
    items = [item async for item in stream_action(make_llm(), TASK, step=4)]
    outcome = items[-1]
    assert isinstance(outcome, ActionOutcome)
    assert not outcome.ok and outcome.action is None
    assert outcome.error == (
        "no valid action in 2 replies: code is required when action is execute_code"
    )
    assert [c.purpose for c in outcome.calls] == ["action", "repair"]
    assert all(c.step == 4 for c in outcome.calls)
    invalid = [i for i in items if isinstance(i, InvalidReply)]
    assert [(i.attempt, i.retrying) for i in invalid] == [(0, True), (1, False)]
    assert [i for i in items if isinstance(i, LLMCall)] == list(outcome.calls)
    assert server.remaining == 1


async def test_max_repairs_zero_stops_after_the_first_unusable_reply(server, make_llm):
    server.push("nothing useful", obj(**VALID))
    outcome = await next_action(make_llm(), TASK, max_repairs=0)
    assert outcome.error == "no valid action in 1 reply: the reply holds no JSON object"
    assert len(server.requests) == 1
