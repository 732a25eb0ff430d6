"""The action schema and the tolerant parser, without a model."""

import contextlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from tui_agent.llm import ACTION_FORMAT, Action, ActionParseError, parse_action, repair_message

SPEC_TURNS = [  # the three replies of seed 002's compound-interest example
    {
        "thought": "I need to use the compound interest formula A = P(1 + r/n)^(nt)...",
        "action": "execute_code",
        "code": "principal = 15000\nrate = 0.06\n# Oops, forgot to define other variables",
    },
    {
        "thought": "I got an error because I didn't define all variables. Let me fix this...",
        "action": "debug_error",
        "code": "principal = 15000\nrate = 0.06\nn = 2  # semi-annual\nt = 6\n"
        "final_amount = principal * (1 + rate/n)**(n*t)\n"
        "print(f'Final Amount: ${final_amount:.2f}')",
    },
    {
        "thought": "Perfect! The calculation executed successfully and shows the final amount.",
        "action": "provide_answer",
        "final_answer": "Based on the calculation, ... resulting in a final amount of $21,386.41.",
    },
]


@pytest.mark.parametrize("turn", SPEC_TURNS, ids=lambda t: t["action"])
def test_the_specs_replies_parse_without_repairs_and_round_trip(turn):
    parsed = parse_action(json.dumps(turn))
    assert parsed.repairs == ()
    assert parsed.action.model_dump(exclude_none=True) == turn
    assert json.loads(parsed.action.as_json()) == turn


def test_the_schema_itself_enforces_code_and_final_answer():
    with pytest.raises(ValidationError, match="code is required when action is execute_code"):
        Action(thought="t", action="execute_code")
    with pytest.raises(ValidationError, match="final_answer is required"):
        Action(thought="t", action="provide_answer", final_answer="  ")
    with pytest.raises(ValidationError):
        Action(thought="t", action="continue_debugging", code="x")  # aliases are the parser's
    assert Action(action="debug_error", code="x").thought == ""


def test_a_missing_thought_is_tolerated_and_noted():
    parsed = parse_action('{"action": "execute_code", "code": "print(1)"}')
    assert parsed.action.thought == ""
    assert parsed.repairs == ("no thought given",)


def test_a_prose_brace_before_the_json_does_not_hide_it():
    reply = 'Use a dict like {x: 1} or a set {1, 2}. {"thought": "t", "action": "execute_code", '
    reply += '"code": "d = {\\"a\\": [1, 2]}"}'
    parsed = parse_action(reply)
    assert parsed.action.code == 'd = {"a": [1, 2]}'
    assert "ignored text around the JSON" in parsed.repairs


def test_braces_and_quotes_inside_code_strings_do_not_confuse_the_scanner():
    code = "print('}{'); s = \"it's ]\"\nd = {'k': [1]}"
    parsed = parse_action(
        "Here:\n" + json.dumps({"thought": "t", "action": "execute_code", "code": code})
    )
    assert parsed.action.code == code


def test_apostrophes_in_prose_around_json_are_harmless():
    reply = "Let's do it, it's easy:\n" + json.dumps(SPEC_TURNS[0]) + "\nThat's all."
    assert parse_action(reply).action.action == "execute_code"


def test_the_error_lines_are_single_lines():
    for reply in ["", "{", '{"action": 1}', '{"thought": 1, "action": "x"}', "[1, 2]"]:
        with pytest.raises(ActionParseError) as caught:
            parse_action(reply)
        assert "\n" not in str(caught.value) and str(caught.value)


def test_many_unclosed_braces_are_bounded_work():
    reply = "{ " * 50_000 + '{"thought": "t", "action": "provide_answer", "final_answer": "a"}'
    with pytest.raises(ActionParseError, match="cut off"):
        parse_action(reply)


def test_the_prompt_texts_name_the_schema():
    for name in ("thought", "execute_code", "debug_error", "provide_answer", "final_answer"):
        assert name in ACTION_FORMAT
        assert name in repair_message("x")
    assert "JSON" in ACTION_FORMAT  # OpenAI's JSON mode requires the word in the prompt


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["thought", "action", "code", "final_answer", "Action", "x"])
            | st.text(),
            inner,
            max_size=5,
        )
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(
    value=json_values,
    before=st.text(max_size=30),
    after=st.text(max_size=30),
    cut=st.integers(min_value=0, max_value=400),
)
def test_any_reply_parses_or_raises_action_parse_error_only(value, before, after, cut):
    for reply in (before + json.dumps(value) + after, (before + json.dumps(value))[:cut]):
        try:
            parsed = parse_action(reply)
        except ActionParseError as exc:
            assert str(exc)
        else:
            assert parsed.action.action in ("execute_code", "debug_error", "provide_answer")


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="{}[]\"',:\\ \nabc1", max_size=80))
def test_bracket_soup_never_crashes_the_parser(reply):
    with contextlib.suppress(ActionParseError):
        parse_action(reply)
