"""The two forms a CodeAct reply can be asked in, and how each is written back and re-asked.

`json`: one JSON object `{"thought", "action", "code" | "final_answer"}`, sent in JSON mode
where the provider has one: what hosted models follow best. `fenced`: a `Thought:` line and the
code in one ```python block, or a `Final answer:` line: what small local models write best.
Their code is plain text, not a JSON string whose quotes and line breaks they must escape, and
no JSON grammar slows the server (Qwen2.5-Coder-1.5B on llama-cpp-python: 25 s a HumanEval
session fenced, 135 s in JSON mode). The parser reads either form whichever was asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tui_agent.config import ReplyFormChoice
from tui_agent.llm.actions import ACTION_FORMAT, Action

ReplyFormName = Literal["json", "fenced"]
LOCAL_PROVIDERS = frozenset(
    {"ollama", "ollama_chat", "lm_studio", "hosted_vllm", "llamafile", "openai_like"}
)
"""Providers that serve models on the user's own machine or cluster: `auto` picks `fenced`."""


@dataclass(frozen=True)
class ReplyForm:
    """How the model is told to reply, and the texts that name that form."""

    name: ReplyFormName
    instructions: str
    """For the system prompt: the form, exactly."""
    loop_hint: str
    """For the system prompt: how to fix an error and how to answer, in this form."""
    answer_hint: str
    """How to give the answer, in a few words (after "give your answer")."""
    run_form: str
    answer_form: str
    reply_again: str
    """How the re-ask says to reply ("with exactly one JSON object...")."""
    footnote: str
    one_reply: str
    want_json: bool
    """Whether replies are asked in the provider's JSON mode."""

    def render(self, action: Action) -> str:
        """`action` as the model's own turn in the conversation, in this form."""
        if self.name == "json":
            return action.as_json()
        thought = f"Thought: {action.thought.strip()}\n" if action.thought.strip() else ""
        if action.code is not None:
            answer = f"\nFinal answer: {action.final_answer}" if action.final_answer else ""
            return f"{thought}```python\n{action.code.rstrip()}\n```{answer}"
        return f"{thought}Final answer: {action.final_answer or ''}"


JSON_FORM = ReplyForm(
    name="json",
    instructions=ACTION_FORMAT,
    loop_hint="Fix errors with debug_error. When you know the answer, give it to the user "
    "with provide_answer.",
    answer_hint="provide_answer",
    run_form='{"thought": "...", "action": "execute_code", "code": "the complete Python code"}',
    answer_form='{"thought": "...", "action": "provide_answer", "final_answer": "your answer"}',
    reply_again="with exactly one JSON object and no other text, one of",
    footnote='("debug_error" is execute_code after an error: it needs "code" too.)',
    one_reply="One JSON object, no other text.",
    want_json=True,
)

FENCED_FORM = ReplyForm(
    name="fenced",
    instructions="""\
Answer every turn in one of two forms, and nothing else:
1. To run code: a line "Thought: your reasoning", then the complete Python code in one \
```python block.
2. When you know the answer: a line "Final answer: the answer for the user", and no code.""",
    loop_hint="After an error, send the fixed code. When you know the answer, give it to the "
    'user in a "Final answer:" line.',
    answer_hint='a "Final answer:" line',
    run_form="Thought: ...\n```python\nthe complete Python code\n```",
    answer_form="Final answer: your answer",
    reply_again="in exactly one of these two forms, and nothing else",
    footnote="",
    one_reply="One of the two, nothing else.",
    want_json=False,
)

FORMS: dict[ReplyFormName, ReplyForm] = {"json": JSON_FORM, "fenced": FENCED_FORM}


def reply_form(
    choice: ReplyFormChoice, provider: str | None = None, api_base: str | None = None
) -> ReplyForm:
    """The form of `choice`; `auto` is `fenced` for a model served by the user (a server at
    an `api_base`, or a local provider such as Ollama), else `json`."""
    if choice != "auto":
        return FORMS[choice]
    local = api_base is not None or provider in LOCAL_PROVIDERS
    return FENCED_FORM if local else JSON_FORM


def repair_message(error: str, last_code: str | None = None, form: ReplyForm = JSON_FORM) -> str:
    """The user message that re-asks the model after an unusable reply: what was wrong, the
    two exact forms to send, and (`last_code`) the last code that ran without error."""
    message = (
        f"Your last reply could not be used: {error}. Reply again {form.reply_again}:\n"
        f"{form.run_form}\n{form.answer_form}"
    )
    if form.footnote:
        message += f"\n{form.footnote}"
    if last_code:
        message += (
            "\nThe last code you ran worked without error (what it defined still exists):\n"
            f"```python\n{last_code.rstrip()}\n```\n"
            f"If it already does what the task asks, answer with {form.answer_hint}."
        )
    return message
