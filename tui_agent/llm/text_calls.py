"""The text protocol for tool calls, for models without native tool calling.

Such a model writes one line per call instead of a tool call::

    CALL probe_click {"selector": "li.card"}

and gets the results back as a user message of `RESULT` blocks. `parse_text_calls` reads such
lines tolerantly: camelCase names, a JSON object spread over lines, `name("x")`, `name(key="x")`
or a bare argument; a `RESULT` line the model invents ends its calls.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

Spec = dict[str, Any]
"""An OpenAI "tools" entry: {"type": "function", "function": {name, description, parameters}}."""


@dataclass(frozen=True)
class TextCall:
    """One CALL the model wrote; `error` says why its arguments could not be read."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    raw: str = ""
    error: str | None = None


@dataclass(frozen=True)
class TextTurn:
    """A reply read in the text protocol: its calls and the prose around them."""

    calls: list[TextCall]
    prose: str


def result_block(name: str, arguments: dict[str, Any] | str, text: str) -> str:
    """One tool result in the text protocol."""
    shown = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return f"RESULT {name} {shown}\n{text.strip()}"


_CALL = re.compile(
    r"^[\s>*`-]*(?P<keyword>CALL|call|Call)\b\s*:?\s*`?(?P<name>[A-Za-z_]\w*)`?(?P<rest>.*)$"
)
_RESULT = re.compile(r"^[\s>*`-]*RESULT\b")
_FENCE = re.compile(r"^\s*```")
_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")
_KEYWORD_ARG = re.compile(r"\s*(\w+)\s*[=:]\s*(\"[^\"]*\"|'[^']*'|[^,]*?)\s*(?:,|$)")


def tool_params(specs: Sequence[Spec]) -> dict[str, list[str]]:
    """Tool name -> its parameter names (the first is what a bare argument stands for)."""
    params = {}
    for spec in specs:
        function = spec.get("function", spec)
        params[function["name"]] = list((function.get("parameters") or {}).get("properties") or {})
    return params


def snake_name(name: str) -> str:
    """probeClick -> probe_click (models often use camelCase names)."""
    return _CAMEL.sub(r"_\1", name).lower()


def parse_text_calls(text: str, specs: Sequence[Spec]) -> TextTurn:
    """The CALL lines of a reply (in order) and its prose; never raises."""
    params = tool_params(specs)
    lines = text.splitlines()
    calls: list[TextCall] = []
    prose: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if calls and _RESULT.match(line):
            break  # the model invented a result: what follows is fiction
        call, used = _read_call(line, lines[index:], params)
        index += used
        if call is not None:
            calls.append(call)
        elif not _FENCE.match(line):
            prose.append(line)
    return TextTurn(calls, "\n".join(prose).strip())


def _read_call(
    line: str, following: list[str], params: dict[str, list[str]]
) -> tuple[TextCall | None, int]:
    """The call `line` makes (None: it is prose) and how many following lines it used."""
    match = _CALL.match(line)
    if match is None:
        return None, 0
    name = snake_name(match.group("name"))
    strict = match.group("keyword") == "CALL"
    if name not in params and not strict:
        return None, 0
    rest = match.group("rest").strip().rstrip("`").strip()
    used = 0
    call: TextCall | None
    if rest.startswith(("{", "({")):
        call, used = _json_call(name, "\n".join([rest, *following]))
    else:
        call = _inline_call(name, rest, params.get(name) or [""], strict)
    if call is not None and name not in params:
        known = ", ".join(params)
        call = TextCall(name, {}, call.raw, f"unknown tool {name!r} (tools: {known})")
    return call, used


def _json_call(name: str, text: str) -> tuple[TextCall, int]:
    """A call whose arguments open with `{` (maybe over several lines); lines consumed."""
    start = text.index("{")
    try:
        value, end = json.JSONDecoder().raw_decode(text, start)
    except json.JSONDecodeError:
        line = text.splitlines()[0]
        value, end = _literal(line[start:].rstrip(")").strip()), len(line)
    raw = text[start:end]
    if not isinstance(value, dict):
        error = f"the arguments of {name} are not a JSON object: {raw[:120]}"
        return TextCall(name, {}, raw, error), 0
    return TextCall(name, value, raw), text.count("\n", 0, end)


def _inline_call(name: str, rest: str, params: list[str], strict: bool) -> TextCall | None:
    """`name("x")`, `name(key="x", ...)`, `name "x"`, `name x`, or `name` with no arguments."""
    inner = rest[1:-1].strip() if rest.startswith("(") and rest.endswith(")") else rest
    if not inner:
        return TextCall(name, {}, rest) if strict or rest else None
    quoted = _unquote(inner)
    if quoted is not None:
        return TextCall(name, {params[0]: quoted}, rest)
    keywords = _keyword_args(inner, params)
    if keywords:
        return TextCall(name, keywords, rest)
    if not strict:
        return None  # "call describe_element next" is prose, not a call
    return TextCall(name, {params[0]: inner}, rest)


def _keyword_args(text: str, params: list[str]) -> dict[str, str] | None:
    """`selector="x", target=page` when the pairs cover all of `text` and name real params."""
    found: dict[str, str] = {}
    position = 0
    while position < len(text):
        match = _KEYWORD_ARG.match(text, position)
        if not match or match.end() == position or match.group(1) not in params:
            return None
        value = match.group(2).strip()
        unquoted = _unquote(value)
        found[match.group(1)] = value if unquoted is None else unquoted
        position = match.end()
    return found or None


def _unquote(text: str) -> str | None:
    for quote in ('"', "'", "`"):
        if len(text) >= 2 and text[0] == quote and text[-1] == quote:
            return text[1:-1]
    return None


def _literal(text: str) -> Any:
    """A Python-style dict ({'selector': 'x'}), or None."""
    try:
        return ast.literal_eval(text) if len(text) < 10_000 else None
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
