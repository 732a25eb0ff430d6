"""What the task executor says to its models: the code generator's two stage prompts, the
error history of earlier attempts, and the output validator's prompt."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tui_agent.agents.task.context import ANALYSIS_KEY, ContextChange, summarise_context
from tui_agent.llm import Message
from tui_agent.redaction import SecretMask

PREVIEW_LINES = 3
PREVIEW_CHARS = 240
VALUE_CHARS = 600
OUTPUT_LINES = 20
ANALYSIS_CHARS = 4000

TOOLS_NATIVE = """\
AVAILABLE TOOLS:
You can call search_documentation(library, query) at ANY point to get API documentation."""
TOOLS_TEXT = """\
AVAILABLE TOOLS:
You can call search_documentation(library, query) at ANY point to get API documentation.
To call it, write a line such as
CALL search_documentation {"library": "fitz", "query": "extract text from a page"}
and stop; the answer comes back in a message starting with RESULT."""

STAGE_ONE = """\
You are tui-agent's code generation system.

Your job: Generate Python code to solve the user's task.

OPTIONAL TWO-STAGE APPROACH:

If the context contains complex data that you need to UNDERSTAND before solving the task:

1. First, generate ANALYSIS code marked with:
   # STAGE: ANALYSIS

{tools}

   This code should:
   - Analyze the data structure/content/format
   - Extract metadata (type, size, properties)
   - Identify key characteristics needed to solve the task
   - Return insights as a dict with clear keys (assign it to `result`)

If the context is simple/clear (just strings, numbers, small data),
skip analysis and go directly to:

# STAGE: TASK

Your task-solving code here.

{common}"""

STAGE_TWO = """\
You are tui-agent's code generation system.

You previously analyzed the data. The analysis results are in context['{analysis_key}'].

Now generate the TASK code marked with:
# STAGE: TASK

Use the analysis insights to solve the task effectively.

{common}"""

COMMON = """\
{tools}

CONTEXT PROVIDED:
{context_summary}

USER TASK:
{task}

REQUIREMENTS:
- Mark your code with the appropriate stage comment
- Return results by modifying the 'context' dict
- Handle errors gracefully
- Use clear variable names

HOW YOUR CODE RUNS:
- `context` is already defined: a dict holding the data above. Read inputs from it
  (x = context['x']) and write results into it (context['total'] = ...). No other variable is
  defined for you.
- Every value you put in `context` must be JSON-serializable (str, int, float, bool, None,
  lists and dicts of those).
- The code runs in a sandbox without network access; installed: the standard library, pandas,
  PyMuPDF (import fitz) and pypdf.
- Answer with one ```python block whose first line is the stage comment, and nothing else.

Generate the appropriate Python code now."""

HISTORY_HEAD = "PREVIOUS ATTEMPTS FAILED (fix these errors in your new code):"

VALIDATOR_SYSTEM = """\
You check the output of generated Python code that was asked to do a task on a context dict.

Valid means: the task was completed, and the values the code wrote are meaningful (not empty,
not None where a value was expected, not an error message disguised as a result, consistent
with the input).

Answer with one JSON object and nothing else: {"valid": true or false, "reason": "one sentence"}"""


@dataclass(frozen=True)
class FailedAttempt:
    """An attempt that failed: its number, the error and the code it ran (or proposed)."""

    attempt: int
    error: str
    code: str


def tools_section(text_protocol: bool) -> str:
    return TOOLS_TEXT if text_protocol else TOOLS_NATIVE


def text_protocol_system(system: Message) -> Message:
    """The system message with its tools described for the text protocol (CALL lines)."""
    return {**system, "content": str(system["content"]).replace(TOOLS_NATIVE, TOOLS_TEXT)}


def code_preview(code: str) -> str:
    """The first lines of `code`, cut, as the error history shows it."""
    lines = [line for line in code.strip().splitlines() if line.strip()]
    preview = "\n".join(lines[:PREVIEW_LINES])
    if len(preview) > PREVIEW_CHARS:
        preview = preview[:PREVIEW_CHARS]
    return preview + ("..." if preview != code.strip() else "")


def error_history(failures: Sequence[FailedAttempt], secrets: SecretMask | None = None) -> str:
    """Every failed attempt in order: `Attempt N: FAILED`, its error, a code preview (secrets
    in them masked)."""
    mask = (secrets or SecretMask()).text
    blocks = [
        f"Attempt {failure.attempt}: FAILED\nError: {mask(failure.error)}\n"
        f"Code preview: {mask(code_preview(failure.code)) if failure.code else '(no code)'}"
        for failure in failures
    ]
    return "\n\n".join(blocks)


def generation_messages(
    task: str,
    context: dict[str, Any],
    *,
    after_analysis: bool,
    text_protocol: bool,
    failures: Sequence[FailedAttempt] = (),
    secrets: SecretMask | None = None,
) -> list[Message]:
    """The messages asking for code: the stage prompt (stage two once the analysis ran), the
    task, and the error history of the attempts that failed. `secrets` (by default the
    context's own) are shown as placeholders wherever they appear."""
    secrets = secrets or SecretMask.of(context)
    common = COMMON.format(
        tools=tools_section(text_protocol),
        context_summary=summarise_context(context, secrets),
        task=task,
    )
    if after_analysis:
        system = STAGE_TWO.format(analysis_key=ANALYSIS_KEY, common=common)
    else:
        system = STAGE_ONE.format(tools=tools_section(text_protocol), common=common)
    request = f"Task: {task}"
    if after_analysis and ANALYSIS_KEY in context:
        found = json.dumps(
            secrets.placeholders(context[ANALYSIS_KEY]), ensure_ascii=False, default=str
        )
        request += f"\n\nANALYSIS RESULTS (context[{ANALYSIS_KEY!r}]):\n{found[:ANALYSIS_CHARS]}"
    if failures:
        request += f"\n\n{HISTORY_HEAD}\n\n{error_history(failures, secrets)}"
    return [{"role": "system", "content": system}, {"role": "user", "content": request}]


def no_code_message(problem: str) -> str:
    """The re-ask after a reply that holds no usable code."""
    return (
        f"Your last reply could not be used: {problem}. Answer with one ```python block whose "
        "first line is # STAGE: ANALYSIS or # STAGE: TASK, and no other text."
    )


def _shown(key: str, value: Any, secrets: SecretMask) -> str:
    """`value` written under `key`, as JSON for the validator (secrets as placeholders, the
    whole value when `key` is a secret key)."""
    text = json.dumps(secrets.placeholders({key: value})[key], ensure_ascii=False, default=str)
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"


def validator_messages(
    task: str,
    before: dict[str, Any],
    after: dict[str, Any],
    change: ContextChange,
    output: Sequence[str],
    secrets: SecretMask | None = None,
) -> list[Message]:
    """The validator's messages: the task, the context before, what the code wrote, its
    output; `secrets` (by default those of both contexts) shown as placeholders."""
    if secrets is None:
        secrets = SecretMask.of(before)
        secrets.learn(after)
    written = "\n".join(
        f"- {secrets.text(key)} = {_shown(key, after[key], secrets)}" for key in change.written
    )
    removed = ", ".join(secrets.text(key) for key in change.removed) or "(none)"
    printed = "\n".join(secrets.text(line) for line in output[-OUTPUT_LINES:]) or "(nothing)"
    user = (
        f"TASK:\n{task}\n\nCONTEXT BEFORE:\n{summarise_context(before, secrets)}\n\n"
        f"KEYS THE CODE ADDED OR CHANGED:\n{written or '(none)'}\n\nKEYS REMOVED: {removed}\n\n"
        f"WHAT THE CODE PRINTED (last lines):\n{printed}\n\nIs this output valid?"
    )
    return [{"role": "system", "content": VALIDATOR_SYSTEM}, {"role": "user", "content": user}]
