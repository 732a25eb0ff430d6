"""The task executor's checks: names the code uses but never defines (before it runs, with
pyflakes), values JSON cannot hold and an untouched context (after it runs), and reading the
validator model's verdict. Each refusal is one message for the model's next attempt."""

from __future__ import annotations

import ast
import difflib
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pyflakes.checker import Checker
from pyflakes.messages import UndefinedName

from tui_agent.agents.task.context import ContextChange
from tui_agent.llm.actions import fenced_blocks

PREDEFINED = frozenset({"context", "url", "html"})
"""Globals the sandbox's kernel defines before the code runs."""
TOOL_NAMES = frozenset({"search_documentation"})
KNOWN_LIBRARIES = frozenset({"pandas", "numpy", "fitz", "pypdf", "PIL", "requests"})
MAX_LISTED_KEYS = 15


def _how_to_define(name: str, keys: Sequence[str]) -> str:
    """What to do about an undefined `name`, given the context's keys."""
    if name in TOOL_NAMES:
        return f"{name} is a tool you call while writing the code, not a function the code has"
    if name in keys:
        return f"read it from the context first: {name} = context[{name!r}]"
    if name in sys.stdlib_module_names or name in KNOWN_LIBRARIES:
        return f"import {name} first"
    close = difflib.get_close_matches(name, keys, n=1, cutoff=0.6)
    if close:
        return f"did you mean the context value {close[0]!r}? {name} = context[{close[0]!r}]"
    shown = ", ".join(repr(key) for key in keys[:MAX_LISTED_KEYS]) or "nothing"
    more = f" and {len(keys) - MAX_LISTED_KEYS} more" if len(keys) > MAX_LISTED_KEYS else ""
    return f"define it, or read what you need from context (it holds {shown}{more})"


def context_access_problem(code: str, context_keys: Sequence[str]) -> str | None:
    """Why `code` must not run (a syntax error, or names used but never defined), or None.

    Only the data in `context` (and `url`, `html`) is defined for the code; anything else it
    reads must be assigned or imported first.
    """
    try:
        tree = ast.parse(code, "<task code>")
    except SyntaxError as exc:
        where = f" (line {exc.lineno})" if exc.lineno else ""
        return f"SyntaxError: {exc.msg}{where}"
    checker = Checker(tree, "<task code>", builtins=set(PREDEFINED))
    undefined: dict[str, int] = {}
    for message in checker.messages:
        if isinstance(message, UndefinedName):
            undefined.setdefault(str(message.message_args[0]), message.lineno)
    if not undefined:
        return None
    problems = [
        f"name {name!r} (line {line}) is used but never defined: "
        f"{_how_to_define(name, list(context_keys))}"
        for name, line in undefined.items()
    ]
    return "context access: " + "; ".join(problems)


def serialization_problem(non_serializable: Sequence[str]) -> str | None:
    """The refusal for values JSON cannot hold, by key path (the kernel's report), or None."""
    paths = [path for path in non_serializable if path.startswith(("context", "result"))]
    if not paths:
        return None
    return (
        "serialization: these values cannot be stored as JSON: "
        + "; ".join(paths)
        + ". Put strings, numbers, booleans, None, lists or dicts of those in context "
        "(e.g. the fields you need, or str(value))"
    )


def unchanged_problem(change: ContextChange) -> str | None:
    """The refusal for a run that wrote nothing into the context, or None."""
    if change.any:
        return None
    return (
        "output: the code ran but added or changed no key of context; write the task's results "
        "into it, e.g. context['result_name'] = value"
    )


@dataclass(frozen=True)
class Verdict:
    """The validator model's judgement of an output."""

    valid: bool
    reason: str


class UnreadableVerdict(ValueError):
    """A validator reply without a `{"valid": ..., "reason": ...}` object."""


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no"):
        return value.strip().lower() in ("true", "yes")
    return None


def parse_verdict(text: str) -> Verdict:
    """The verdict in a validator's reply (bare JSON, fenced, or with prose around it)."""
    candidates = [block.body for block in fenced_blocks(text)] + [text.strip()]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            data = json.loads(candidate, strict=False)
        except ValueError:
            continue
        if isinstance(data, dict) and _as_bool(data.get("valid")) is not None:
            reason = str(data.get("reason") or "").strip() or "(no reason given)"
            return Verdict(bool(_as_bool(data.get("valid"))), " ".join(reason.split()))
    raise UnreadableVerdict('the reply holds no {"valid": true|false, "reason": "..."} object')
