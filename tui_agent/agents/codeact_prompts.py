"""The CodeAct conversation's texts: the system prompt and the EXECUTION_RESULT messages.

Execution results go back to the model as `user` messages, not `system` ones: litellm moves
every system message of an Anthropic or Gemini conversation into the one system prompt (losing
their place in the conversation), and many open-model chat templates refuse a system message
after the first turn. A user message is accepted everywhere.
"""

from __future__ import annotations

import ast
import json
from typing import Any

from tui_agent.agents.stated_outputs import mismatches
from tui_agent.llm import JSON_FORM, ActionOutcome, Message, ReplyForm, echoed
from tui_agent.sandbox.wire import ExecuteResult

RESULT_PREFIX = "EXECUTION_RESULT: "
OUTPUT_LIMIT = 6000
"""Characters of printed output sent back per run (the start and the end are kept)."""
RESULT_LIMIT = 2000
TRACEBACK_LINES = 15

SYSTEM_PROMPT = """\
You solve the user's task by writing Python code, running it, and reading what it printed.
Your code runs in a sandbox: a Python interpreter whose variables and imports persist between \
runs, like a notebook. The working folder is /workspace. {network}
Print what you need to see; the value of a final bare expression is reported too.
After each run you get a message starting with "EXECUTION_RESULT:" holding what the code \
printed, its error and traceback, or why it was stopped. {loop_hint}
{action_format}"""


def system_message(network: bool, form: ReplyForm = JSON_FORM) -> Message:
    """The system prompt: the sandbox, the loop and the reply form."""
    reach = "The sandbox can reach the network." if network else "The sandbox has no network."
    content = SYSTEM_PROMPT.format(
        network=reach, loop_hint=form.loop_hint, action_format=form.instructions
    )
    return {"role": "system", "content": content}


def task_message(task: str) -> Message:
    return {"role": "user", "content": task}


def assistant_message(reply: str) -> Message:
    return {"role": "assistant", "content": reply}


USER_EDITED = "the user edited the code before it ran"
"""The Log line (after "step N: ") that marks a CodeProposed as the user's edit, not the
model's proposal (which is proposed again when the parser repaired it)."""

NOTHING_PRINTED = "the code ran without error and printed nothing."
ANSWER_OR_PRINT = (
    " If it does what the task asks, give your answer ({answer}); print a value to see it."
)
SAME_AGAIN = (
    "\n\nNote: you already ran this same code, and it did the same. Running it again tells "
    "you nothing new: test it (print a call on an example) or give your answer "
    "({answer})."
)
FAILED_AGAIN = (
    "\n\nNote: this is the same code that already failed, and it failed again. Do not "
    "send it again: change the code to fix the error above."
)


def result_message(
    result: ExecuteResult,
    code: str,
    edited_code: str | None = None,
    *,
    repeated: bool = False,
    form: ReplyForm = JSON_FORM,
) -> Message:
    """`EXECUTION_RESULT: ...` for a finished run of `code`; `edited_code` is the code the
    user ran instead of the proposed one; `repeated` says the same code already ran with
    the same outcome (failed, or succeeded with the same output); `form` names how to answer."""
    answer = form.answer_hint
    body = describe_result(result)
    if body == NOTHING_PRINTED:
        defined = defined_only(code)
        empty = bodiless(code)
        if empty:
            body += (
                f" {', '.join(empty)} {'has' if len(empty) == 1 else 'have'} no body, only a "
                "docstring (or pass): calling it returns None. Write the code of its body, then "
                "call it on an example and print the result."
            )
        elif defined:
            body += (
                f" It defined {', '.join(defined)}: a definition prints nothing. To test it, "
                f"call it on an example and print the result, e.g. print({defined[0][:-2]}(...))."
                f" If it does what the task asks, give your answer ({answer})."
            )
        else:
            body += ANSWER_OR_PRINT.format(answer=answer)
    if result.success:
        body += stated_mismatches(result, code)
    if repeated:
        body += SAME_AGAIN.format(answer=answer) if result.success else FAILED_AGAIN
    if edited_code is not None:
        body += (
            "\n\nNote: the user edited your code before it ran. The code that ran:\n"
            f"```python\n{edited_code.rstrip()}\n```"
        )
    return {"role": "user", "content": RESULT_PREFIX + body}


def stated_mismatches(result: ExecuteResult, code: str) -> str:
    """A note naming each print whose line differs from what its comment or a docstring
    example says it should be (stated_outputs.py); empty when there is none."""
    printed = [line.text.rstrip("\n") for line in result.logs if line.stream == "stdout"]
    found = mismatches(code, printed)
    if not found:
        return ""
    lines = "\n".join(f"- {mismatch.note()}" for mismatch in found)
    return (
        f"\n\nNote: the output differs from what your code says to expect:\n{lines}\n"
        "Fix the code (or the expectation, if it is the one that is wrong) before you answer."
    )


def skipped_message() -> Message:
    """What the model is told when the user chose not to run its code."""
    return {
        "role": "user",
        "content": RESULT_PREFIX + "not run: the user skipped this code. Propose something "
        "else, or give your answer if you already have it.",
    }


def defined_only(code: str) -> list[str]:
    """The functions and classes `code` defines (as `name()`), when it defines some and
    calls nothing at its top level; else none."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return []
    names = [
        f"{node.name}()"
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    ]
    calls = any(
        isinstance(node, ast.Expr | ast.Assign | ast.AugAssign) and _calls(node)
        for node in tree.body
    )
    return [] if calls else names


def bodiless(code: str) -> list[str]:
    """The functions `code` defines at its top level whose body is only a docstring, `pass`
    or `...` (as `name()`): a stub copied from the task, not yet written."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return []
    return [
        f"{node.name}()"
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and all(_is_placeholder(statement) for statement in node.body)
    ]


def _is_placeholder(node: ast.stmt) -> bool:
    return isinstance(node, ast.Pass) or (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and (isinstance(node.value.value, str) or node.value.value is Ellipsis)
    )


UNTESTED = (
    "Before you answer: your last run only defined {names} and nothing has called {it} yet. "
    "Call {it} on an example and print the result; if the result is right, answer again."
)
"""Said once per session when the model answers right after a run that only defined code."""


def untested_message(names: list[str]) -> Message:
    """The reply to an answer given before the code the last run defined was ever called."""
    it = "it" if len(names) == 1 else "them"
    return {"role": "user", "content": UNTESTED.format(names=", ".join(names), it=it)}


def _calls(node: ast.AST) -> bool:
    return any(isinstance(child, ast.Call) for child in ast.walk(node))


def describe_result(result: ExecuteResult) -> str:
    """Output, error with a trimmed traceback, and the returned value, as plain text."""
    parts: list[str] = []
    output = _output(result)
    if output:
        parts.append(output)
    if result.error is not None:
        parts.append(f"Error: {result.error.type}: {result.error.message}")
        trace = _trimmed_traceback(result.error.traceback)
        if trace:
            parts.append(trace)
    elif result.killed_reason:
        parts.append(f"Stopped: {result.killed_reason}")
    if result.result is not None:
        parts.append("Result: " + _cut(_json(result.result), RESULT_LIMIT))
    if result.non_serializable:
        parts.append("Not JSON-serializable, left out: " + ", ".join(result.non_serializable))
    if not parts:
        return NOTHING_PRINTED
    return "\n".join(parts)


def _output(result: ExecuteResult) -> str:
    lines = [
        ("stderr: " if line.stream == "stderr" else "") + line.text.rstrip("\n")
        for line in result.logs
    ]
    return _cut("\n".join(lines), OUTPUT_LIMIT)


def _trimmed_traceback(traceback: str) -> str:
    """The traceback's last frames, without its final `Type: message` line (already said)."""
    lines = traceback.rstrip().splitlines()
    if len(lines) <= 1:
        return ""
    body = lines[:-1]
    if len(body) > TRACEBACK_LINES:
        body = [f"... {len(body) - TRACEBACK_LINES} earlier lines cut", *body[-TRACEBACK_LINES:]]
    return "\n".join(body)


def _cut(text: str, limit: int) -> str:
    """`text` with its middle cut when it is longer than `limit` (a third kept from the start)."""
    if len(text) <= limit:
        return text
    head = limit // 3
    tail = limit - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n... [{cut:,} characters cut] ...\n{text[-tail:]}"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def offer_messages(
    outcome: ActionOutcome, working_code: str, form: ReplyForm = JSON_FORM
) -> list[Message]:
    """After a turn with no usable reply: its last reply, then the offer to answer with the
    last code that ran without error (or to send new code), in the two exact forms."""
    reply = outcome.attempts[-1].reply if outcome.attempts else ""
    return [
        {"role": "assistant", "content": echoed(reply) or "(empty reply)"},
        {
            "role": "user",
            "content": f"Your replies could not be used ({outcome.error}). "
            + offer_text(None, working_code, form),
        },
    ]


def offer_text(why: str | None, working_code: str, form: ReplyForm = JSON_FORM) -> str:
    """The offer to answer with `working_code`, which ran without error, or to send new
    code, in the two exact forms of `form`; `why` says what led to it."""
    lead = f"Stop repeating yourself: {why}. " if why else ""
    return (
        f"{lead}This code of yours ran without error:\n```python\n{working_code.rstrip()}\n```\n"
        f"If it does what the task asks, reply exactly {form.answer_form}. "
        f"Otherwise reply {form.run_form}. {form.one_reply}"
    )
