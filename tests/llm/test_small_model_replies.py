"""Replies as small local models write them (Qwen2.5-Coder-1.5B and its kind): each is read
as the action it means, with the repair named, or refused with one line for the re-ask."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tui_agent.llm import repair_message
from tui_agent.llm.actions import ActionParseError, parse_action

REAL_REPLIES = Path(__file__).parents[1] / "fixtures" / "real_replies"


def act(code: str, thought: str = "I will compute it.") -> str:
    return json.dumps({"thought": thought, "action": "execute_code", "code": code})


@pytest.mark.parametrize(
    ("code", "repair"),
    [
        ("python\nprint(42)", "removed a stray 'python' line (a fence label) from the code"),
        ("\nPy\nprint(42)", "removed a stray 'Py' line (a fence label) from the code"),
        ("```python\nprint(42)\n```", "removed a ``` fence around the code"),
        ("```python\nprint(42)", "removed an unclosed ``` fence from the code"),
        ("print(42)\n```", "removed a stray closing ``` from the code"),
    ],
)
def test_a_fence_or_language_label_inside_the_code_value_is_removed(code, repair):
    parsed = parse_action(act(code))
    assert parsed.action.code == "print(42)"
    assert repair in parsed.repairs


def test_code_that_only_mentions_python_keeps_its_first_line():
    code = "python = 3\nprint(python)"
    assert parse_action(act(code)).action.code == code


def test_the_recorded_real_reply_with_a_label_in_its_code_runs_as_code():
    [path] = REAL_REPLIES.glob("codeact-humaneval-0-*label_in_code*.json")
    recorded = json.loads(path.read_text())
    parsed = parse_action(recorded["content"], prose_answers=True)
    assert parsed.action.action == "execute_code"
    assert not parsed.action.code.lstrip().lower().startswith("python")
    assert any("fence label" in repair for repair in parsed.repairs)


@pytest.mark.parametrize("tag", ["think", "thinking", "reasoning"])
def test_a_think_block_becomes_the_thought(tag):
    reply = f"<{tag}>The product of 6 and 7.</{tag}>\n" + json.dumps(
        {"action": "execute_code", "code": "print(6 * 7)"}
    )
    parsed = parse_action(reply)
    assert parsed.action.thought == "The product of 6 and 7."
    assert parsed.action.code == "print(6 * 7)"
    assert "removed a <think> block" in parsed.repairs


def test_a_think_block_never_hides_the_thought_given():
    reply = '<think>scratch {"action": "x"}</think>' + act("print(1)", thought="Mine.")
    assert parse_action(reply).action.thought == "Mine."


def test_an_orphan_closing_think_tag_ends_the_reasoning():
    parsed = parse_action("weighing it up</think>\n" + act("print(1)", thought=""))
    assert parsed.action.thought == "weighing it up" and parsed.action.code == "print(1)"


def test_a_reply_of_reasoning_only_is_refused_with_that_reason():
    with pytest.raises(ActionParseError, match="only reasoning"):
        parse_action("<think>I should compute 6 * 7 first.</think>", prose_answers=True)


def test_json_with_line_and_block_comments_is_read():
    reply = (
        "{\n"
        "  // what I am doing\n"
        '  "thought": "compute", /* inline */\n'
        '  "action": "execute_code", # the action\n'
        '  "code": "print(\'# not a comment // either\')"\n'
        "}"
    )
    parsed = parse_action(reply)
    assert parsed.action.code == "print('# not a comment // either')"
    assert "removed comments from the JSON" in parsed.repairs


def test_labelled_lines_with_a_fenced_block_are_an_action():
    reply = (
        "Thought: I will define the function and test it.\n"
        "Action: execute_code\n"
        "```python\ndef f(x):\n    return x * 2\nprint(f(21))\n```\n"
    )
    parsed = parse_action(reply, prose_answers=True)
    assert parsed.action.action == "execute_code"
    assert parsed.action.thought == "I will define the function and test it."
    assert parsed.action.code == "def f(x):\n    return x * 2\nprint(f(21))"
    assert "read the action from labelled lines (no JSON)" in parsed.repairs


@pytest.mark.parametrize("label", ["Final answer", "**Final Answer**", "final_answer", "Answer"])
def test_labelled_lines_can_carry_the_answer(label):
    reply = f"Thought: it printed 42.\nAction: provide_answer\n{label}: 42"
    parsed = parse_action(reply, prose_answers=True)
    assert (parsed.action.action, parsed.action.final_answer) == ("provide_answer", "42")


def test_an_action_line_without_the_code_it_needs_is_refused_not_run():
    reply = "Thought: the code printed nothing, I should debug.\nAction: debug_error"
    with pytest.raises(ActionParseError, match="code is required when action is debug_error"):
        parse_action(reply, prose_answers=True)


@pytest.mark.parametrize("opening", ["```python\n", "Here is the code:\n```py\n", "```\n"])
def test_a_code_block_whose_fence_never_closes_is_the_code(opening):
    parsed = parse_action(opening + "def f():\n    return 42\nprint(f())\n", prose_answers=True)
    assert parsed.action.action == "execute_code"
    assert parsed.action.code == "def f():\n    return 42\nprint(f())"
    assert "read a code block whose ``` fence was never closed" in parsed.repairs


def test_a_reply_cut_by_the_token_limit_inside_code_is_refused():
    with pytest.raises(ActionParseError, match="cut off at the token limit"):
        parse_action("```python\ndef f():\n    return", finish_reason="length")


def test_an_unclosed_prose_fence_is_not_code():
    parsed = parse_action("The answer is:\n```\n42 apples\n", prose_answers=True)
    assert parsed.action.action == "provide_answer"


def test_the_reask_names_both_forms_and_shows_the_last_working_code():
    message = repair_message("the reply held no action", last_code="def f():\n    return 42\n")
    assert message.startswith("Your last reply could not be used: the reply held no action.")
    assert '"action": "execute_code", "code": "the complete Python code"' in message
    assert '"action": "provide_answer", "final_answer": "your answer"' in message
    assert "```python\ndef f():\n    return 42\n```" in message
    assert "last code" not in repair_message("the reply held no action")


def test_a_line_break_json_decoded_inside_a_python_string_is_read_as_an_escape():
    """The model meant Python's '\\n' but wrote JSON's "\\n": decoded, the string is cut."""
    reply = '{"thought": "t", "action": "execute_code", "code": "print(\'a b\'.split(\'\\n\'))"}'
    parsed = parse_action(reply)
    assert parsed.action.code == "print('a b'.split('\\n'))"
    assert any("string literals as \\n" in repair for repair in parsed.repairs)


@pytest.mark.parametrize(
    "code",
    [
        "print('fine')\nprint(2)",
        'x = "never closed\nprint(x)',  # no break makes it compile: left as written
        "def f(:\n    pass",  # another syntax error: left for the run to report
        'doc = """spans\nlines"""',
    ],
)
def test_code_that_compiles_or_fails_otherwise_is_left_alone(code):
    parsed = parse_action(json.dumps({"thought": "t", "action": "execute_code", "code": code}))
    assert parsed.action.code == code
