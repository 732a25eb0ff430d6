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


# -- reply shapes beyond the JSON action ------------------------------------------------------

REFINED = (
    "def main(items):\n    return [{'price': i['price'] * 100, 'thought': 'x'} for i in items]"
)


@pytest.mark.parametrize("label", ["python", "py", "Python3", ""])
def test_a_python_block_with_prose_is_the_code_and_its_dicts_are_not_the_action(label):
    reply = f"Here is the improved transformer:\n```{label}\n{REFINED}\n```\nHope it helps."
    parsed = parse_action(reply)
    assert parsed.action.action == "execute_code"
    assert parsed.action.code == REFINED
    assert parsed.action.thought == "Here is the improved transformer:\n\nHope it helps."
    assert parsed.repairs == ("took the Python code block as the code (no JSON action)",)


def test_a_json_action_beside_a_python_block_wins():
    reply = "Example:\n```python\nx = {'action': 'provide_answer'}\n```\n" + json.dumps(
        SPEC_TURNS[0]
    )
    assert parse_action(reply).action == Action.model_validate(SPEC_TURNS[0])


def test_an_unlabelled_fence_holding_the_json_action_is_the_action():
    reply = "```\n" + json.dumps(SPEC_TURNS[2]) + "\n```"
    assert parse_action(reply).action == Action.model_validate(SPEC_TURNS[2])


def test_several_python_blocks_run_in_order():
    reply = "First:\n```python\na = 6\n```\nThen:\n```python\nprint(a * 7)\n```"
    assert parse_action(reply).action.code == "a = 6\n\nprint(a * 7)"


def test_bare_python_is_code_but_prose_that_parses_is_not():
    assert parse_action("print(6 * 7)").action.code == "print(6 * 7)"
    for prose in ("It is 42.", "Yes.", "x is y"):
        with pytest.raises(ActionParseError, match="holds no JSON object"):
            parse_action(prose)


def test_prose_is_the_final_answer_only_when_asked_for():
    parsed = parse_action("The answer is 42.", prose_answers=True)
    assert parsed.action.action == "provide_answer"
    assert parsed.action.final_answer == "The answer is 42."
    with pytest.raises(ActionParseError):
        parse_action("The answer is 42.")
    with pytest.raises(ActionParseError, match="cut off"):  # a broken action is re-asked
        parse_action('{"thought": "t", "action": "execute_code", "code": "pri', prose_answers=True)


def test_streaming_never_reads_fields_out_of_a_code_block():
    from tui_agent.llm import IncrementalFields

    reply = "```python\nrow = {'code': 'not this', \"thought\": \"nor this\"}\n```\n"
    fields = IncrementalFields()
    assert [event for char in reply for event in fields.feed(char)] == []
    fields = IncrementalFields()
    fenced = '```json\n{"thought": "this"}\n```'
    assert [e for c in fenced for e in fields.feed(c)][-1].value == "this"


def test_bare_code_holding_an_action_like_dict_is_code():
    code = "x = {'thought': 't', 'action': 'provide_answer', 'final_answer': 'no'}\nprint(x)"
    parsed = parse_action(code, prose_answers=True)
    assert (parsed.action.action, parsed.action.code) == ("execute_code", code)


@pytest.mark.parametrize(
    "garbage",
    [
        '{"thought": "t", "action": execute_code}',
        '[{"thought": "t", action: 1}]',
        'Here: ```json\n{"thought": "t" "action": "x"}\n```',
        'My step: "action": execute_code, "code": print(1)',
    ],
)
def test_a_broken_action_is_never_taken_for_a_prose_answer(garbage):
    with pytest.raises(ActionParseError):
        parse_action(garbage, prose_answers=True)


def test_an_indented_code_block_is_dedented():
    reply = "1. Run this:\n   ```python\n   for i in range(2):\n       print(i)\n   ```"
    assert parse_action(reply).action.code == "for i in range(2):\n    print(i)"


def test_reading_a_reply_never_warns():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert parse_action('print("a\\ b")').action.code == 'print("a\\ b")'
        with pytest.raises(ActionParseError):
            parse_action('It is in "C:\\ temp".')
