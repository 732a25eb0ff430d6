"""The fenced reply form: chosen for models the user serves, read without repair notes,
streamed as it arrives, written back and re-asked in its own form."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tui_agent.llm import (
    FENCED_FORM,
    JSON_FORM,
    Action,
    FieldComplete,
    FieldDelta,
    parse_action,
    repair_message,
    reply_form,
)
from tui_agent.llm.incremental import FencedFields

CODE = 'def add(a, b):\n    return a + b\n\nprint(add(2, 3), "```")'
REPLY = f"Thought: Define add, then test it.\n```python\n{CODE}\n```\n"


@pytest.mark.parametrize(
    ("choice", "provider", "api_base", "form"),
    [
        ("auto", "openai", "http://127.0.0.1:8080/v1", "fenced"),
        ("auto", "ollama", None, "fenced"),
        ("auto", "ollama_chat", None, "fenced"),
        ("auto", "openai", None, "json"),
        ("auto", "anthropic", None, "json"),
        ("json", "ollama", None, "json"),
        ("fenced", "openai", None, "fenced"),
    ],
)
def test_auto_asks_models_the_user_serves_for_fenced_replies(choice, provider, api_base, form):
    assert reply_form(choice, provider, api_base).name == form


def test_a_fenced_reply_is_read_without_repair_notes():
    parsed = parse_action(REPLY, prose_answers=True, fenced=True)
    assert parsed.action == Action(
        thought="Define add, then test it.", action="execute_code", code=CODE
    )
    assert parsed.repairs == ()
    answer = parse_action("Final answer: add(2, 3) is 5.", prose_answers=True, fenced=True)
    assert answer.action == Action(action="provide_answer", final_answer="add(2, 3) is 5.")
    assert answer.repairs == ()


def test_the_same_replies_asked_for_json_are_noted_as_read_without_it():
    assert parse_action(REPLY).repairs == ("read the action from labelled lines (no JSON)",)
    bare = parse_action("Here it is:\n```python\nprint(1)\n```", prose_answers=True)
    assert bare.repairs == ("took the Python code block as the code (no JSON action)",)


def test_a_json_reply_is_still_read_when_fenced_was_asked():
    parsed = parse_action(JSON_FORM.render(Action(action="execute_code", code="print(1)")))
    assert parsed.action.code == "print(1)"
    reply = '{"thought": "t", "action": "execute_code", "code": "print(1)"}'
    assert parse_action(reply, fenced=True).action.code == "print(1)"


def test_code_and_an_answer_in_one_fenced_reply_keep_both():
    reply = f"Thought: t\n```python\n{CODE}\n```\nFinal answer: add is defined."
    action = parse_action(reply, fenced=True).action
    assert (action.action, action.code, action.final_answer) == (
        "execute_code",
        CODE,
        "add is defined.",
    )


@pytest.mark.parametrize(
    "action",
    [
        Action(thought="Run it.", action="execute_code", code=CODE),
        Action(thought="", action="debug_error", code="print(2)"),
        Action(thought="Done.", action="provide_answer", final_answer="It is 5."),
        Action(action="execute_code", code="print(1)", final_answer="1"),
    ],
)
def test_an_action_written_back_fenced_reads_as_the_same_action(action: Action):
    again = parse_action(FENCED_FORM.render(action), prose_answers=True, fenced=True).action
    expected = action.action if action.action != "debug_error" else "execute_code"
    assert (again.action, again.thought, again.code, again.final_answer) == (
        expected,
        action.thought,
        action.code,
        action.final_answer,
    )


def test_a_fenced_reask_names_the_fenced_forms_and_the_working_code():
    message = repair_message("the reply was empty", "x = 1", FENCED_FORM)
    assert "in exactly one of these two forms" in message
    assert "Thought: ...\n```python\nthe complete Python code\n```" in message
    assert "Final answer: your answer" in message and "JSON" not in message
    assert '```python\nx = 1\n```\nIf it already does what the task asks, answer with a "Final' in (
        message
    )


def _streamed(reply: str, size: int) -> tuple[str, str, list[FieldComplete]]:
    fields = FencedFields()
    events = [e for i in range(0, len(reply), size) for e in fields.feed(reply[i : i + size])]
    thought = "".join(e.text for e in events if isinstance(e, FieldDelta) and e.field == "thought")
    code = "".join(e.text for e in events if isinstance(e, FieldDelta) and e.field == "code")
    return thought, code, [e for e in events if isinstance(e, FieldComplete)]


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 13, 1000])
def test_a_fenced_reply_streams_its_thought_then_its_code_in_any_chunks(size: int):
    thought, code, complete = _streamed(REPLY + "It prints 5.\n", size)
    assert thought == "Define add, then test it."
    assert code.rstrip("\n") == CODE
    assert complete == [
        FieldComplete("thought", "Define add, then test it."),
        FieldComplete("action", "execute_code"),
        FieldComplete("code", CODE),
    ]


@pytest.mark.parametrize("size", [1, 4, 1000])
def test_the_streamed_thought_stops_at_other_labels(size: int):
    labelled = "Thought: Compute it.\nAction: execute_code\n```python\nprint(1)\n```"
    assert _streamed(labelled, size)[0] == "Compute it."
    answer = _streamed("Thought: It worked.\nFinal answer: 5", size)
    assert answer == ("It worked.", "", [])


def test_a_json_reply_streams_as_json_and_other_fences_are_not_code():
    thought, code, _ = _streamed('{"thought": "t", "action": "execute_code", "code": "x"}', 3)
    assert (thought, code) == ("t", "x")
    assert _streamed("Thought: see\n```text\nnot code\n```", 2)[1] == ""


REAL_REPLIES = Path(__file__).parents[1] / "fixtures" / "real_replies"


def test_real_fenced_replies_are_read_and_streamed_as_written():
    """Qwen2.5-Coder-1.5B on llama-cpp-python, asked for the fenced form (HumanEval/0)."""
    run, answer = (
        json.loads((REAL_REPLIES / f"codeact-fenced-humaneval-0-{name}.json").read_text())
        for name in ("call1", "call2-answer")
    )
    assert run["response_format"] is None and "Final answer:" in run["messages"][0]["content"]
    parsed = parse_action(run["content"], prose_answers=True, fenced=True)
    assert parsed.repairs == () and parsed.action.action == "execute_code"
    assert parsed.action.code.startswith("def has_close_elements(")
    assert parsed.action.thought.startswith("The function `has_close_elements` checks")
    thought, code, _ = _streamed(run["content"], 8)
    assert (thought, code.rstrip("\n")) == (parsed.action.thought, parsed.action.code)
    final = parse_action(answer["content"], prose_answers=True, fenced=True)
    assert final.repairs == () and final.action.action == "provide_answer"
    assert final.action.final_answer.startswith("The function `has_close_elements` correctly")


def test_text_after_the_code_is_not_part_of_the_thought():
    """Seen from Qwen2.5-Coder-1.5B: the result it imagined, written after its code."""
    reply = f"Thought: Test it.\n```python\n{CODE}\n```\nEXECUTION_RESULT: 5 ```"
    action = parse_action(reply, prose_answers=True, fenced=True).action
    assert (action.thought, action.code) == ("Test it.", CODE)
