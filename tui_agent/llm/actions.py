"""The CodeAct action schema and a tolerant parser for model replies.

A reply should be one JSON object `{"thought", "action", "code" | "final_answer"}`. Models
wrap it in prose or ``` fences, leave trailing commas, use Python quoting, or say
`continue_debugging`; `parse_action` repairs those and lists what it repaired. Many models
answer with a fenced ```python block instead (with prose around it): with no JSON action in the
reply, that block (or a reply that is all Python) is the code, and a dict literal inside code is
never taken for the action. With `prose_answers` (CodeAct), a reply holding neither an action
nor code is the final answer, unless it is a broken attempt at one or holds no words.
What cannot be repaired raises `ActionParseError` with one line meant to be sent back to the
model.
"""

from __future__ import annotations

import ast
import json
import re
import textwrap
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

ActionName = Literal["execute_code", "debug_error", "provide_answer"]
ACTION_NAMES: tuple[str, ...] = ("execute_code", "debug_error", "provide_answer")
CODE_ACTIONS = frozenset({"execute_code", "debug_error"})
ALIASES = {
    "continue_debugging": "debug_error",
    "final_answer": "provide_answer",
    "answer": "provide_answer",
}
FIELDS = ("thought", "action", "code", "final_answer")

ACTION_FORMAT = """\
Answer every turn with exactly one JSON object and nothing else:
{"thought": "your reasoning", "action": "execute_code" | "debug_error" | "provide_answer", \
"code": "Python code", "final_answer": "the answer for the user"}
- execute_code: run new Python code (code is required).
- debug_error: run fixed code after an error (code is required).
- provide_answer: give the final answer (final_answer is required, no code)."""
"""Instructions for a system prompt; they mention JSON, which JSON mode requires."""

_LITERAL_EVAL_LIMIT = 200_000
_MAX_RESCANS = 8
_CODE_FENCE = re.compile(r"^\s*```[\w+-]*[ \t]*\n(.*?)\n?```\s*$", re.DOTALL)
_OPEN_FENCE = re.compile(r"\A\s*```[\w+-]*[ \t]*\n")
_CLOSE_FENCE = re.compile(r"\n[ \t]*```[ \t]*\s*\Z")
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_OPENER = re.compile(r"[{\[]")
_STRUCTURAL = re.compile(r"[\"'{}\[\]]")
_DOUBLE_QUOTED_STOP = re.compile(r'["\\]')
_SINGLE_QUOTED_STOP = re.compile(r"['\\\n]")
_TRIPLE_QUOTES = ('"""', "'''")
_TRIPLE_QUOTED = re.compile(r'(?P<quote>"""|\'\'\')(?P<body>.*?)(?P=quote)', re.DOTALL)


class Action(BaseModel):
    """One step the model asks for."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    thought: str = ""
    action: ActionName
    code: str | None = None
    final_answer: str | None = None

    @model_validator(mode="after")
    def _fields_match_action(self) -> Action:
        if self.action in CODE_ACTIONS and not (self.code or "").strip():
            raise ValueError(f"code is required when action is {self.action}")
        if self.action == "provide_answer" and not (self.final_answer or "").strip():
            raise ValueError("final_answer is required when action is provide_answer")
        return self

    def as_json(self) -> str:
        """The canonical JSON form (for the assistant turn in the conversation history)."""
        return json.dumps(self.model_dump(exclude_none=True), ensure_ascii=False)


@dataclass(frozen=True)
class ParsedAction:
    """A valid action and the repairs the parser made to get it (empty when none)."""

    action: Action
    repairs: tuple[str, ...]


class ActionParseError(ValueError):
    """A reply that holds no usable action; the message is one line for the model to read."""


def parse_action(
    text: str,
    *,
    finish_reason: str | None = None,
    prose_answers: bool = False,
    fenced: bool = False,
) -> ParsedAction:
    """The action in a model reply; raises `ActionParseError` (one line) when there is none.

    A JSON action wins; without one, labelled lines (`Thought:`, `Action:`, `Final answer:`)
    with the code in a fenced block, else the reply's Python code blocks are an
    `execute_code` action (the prose around them its thought); without code either,
    `prose_answers` makes the whole reply a `provide_answer`. `fenced` says the model was
    asked for that form (reply_forms.py): reading a reply so is then no repair to note.
    """
    repairs: list[str] = []
    notes = _FormNotes(repairs, fenced)
    text, reasoning = _without_reasoning(text, repairs)
    if not text.strip():
        raise ActionParseError(
            "the reply held only reasoning (<think>), no action"
            if reasoning
            else "the reply was empty"
        )
    blocks = fenced_blocks(text)
    if finish_reason == "length" and any(b.is_code and not b.closed for b in blocks):
        raise ActionParseError("the reply was cut off at the token limit inside its code block")
    if any(b.is_code and not b.closed for b in blocks):
        repairs.append("read a code block whose ``` fence was never closed")
    if not blocks and _is_bare_code(text):  # `x = {"action": ...}` is code, not the action
        action = Action(action="execute_code", code=text.strip("\n"))
        return ParsedAction(action, ("took the whole reply as Python code (no JSON action)",))
    outside_code = text
    for block in blocks:
        if block.is_code:  # blanked out: a dict literal in code is never the action
            width = block.end - block.start
            outside_code = outside_code[: block.start] + " " * width + outside_code[block.end :]
    try:
        data = _select_object(outside_code, finish_reason, repairs)
    except ActionParseError as no_action:
        labelled = _labelled_fields(outside_code, blocks)
        if labelled is None:
            return _without_json(text, blocks, no_action, prose_answers, notes)
        data = labelled
        notes.add("read the action from labelled lines (no JSON)")
    if reasoning and not str(data.get("thought") or "").strip():
        data = {**data, "thought": reasoning}
        repairs.append("took the <think> block as the thought")
    normalized = _normalize(data, repairs)
    try:
        action = Action.model_validate(normalized)
    except ValidationError as exc:
        raise ActionParseError(_describe_validation(exc)) from None
    return ParsedAction(action, tuple(repairs))


# -- code blocks ---------------------------------------------------------------------------
_FENCE = re.compile(
    r"^[ \t]*(```+|~~~+)[ \t]*([\w+.-]*)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.DOTALL | re.MULTILINE
)
_UNCLOSED_FENCE = re.compile(
    r"^[ \t]*(```+|~~~+)[ \t]*([\w+.-]*)[^\n]*\n(.*)\Z", re.DOTALL | re.MULTILINE
)
_PYTHON_LABELS = frozenset({"python", "py", "python3", "py3", "ipython", "pycon"})


@dataclass(frozen=True)
class FencedBlock:
    """One fenced block of a reply: where it stands, its label and its body."""

    start: int
    end: int
    label: str
    body: str
    closed: bool = True

    @property
    def is_code(self) -> bool:
        """Python code: labelled so, or unlabelled and not a JSON object but valid Python."""
        if self.label in _PYTHON_LABELS:
            return True
        if self.label:
            return False
        if self.body.lstrip().startswith(("{", "[")) and _is_json_like(self.body):
            return False
        return is_python(self.body)


def fenced_blocks(text: str) -> list[FencedBlock]:
    """The reply's fenced blocks (``` or ~~~), in order; a fence opened after the last one
    and never closed (small models forget it; a cut reply ends inside it) runs to the end."""
    blocks = [
        FencedBlock(
            m.start(), m.end(), m.group(2).lower(), textwrap.dedent(m.group(3)).rstrip("\n")
        )
        for m in _FENCE.finditer(text)
    ]
    rest = blocks[-1].end if blocks else 0
    if (tail := _UNCLOSED_FENCE.search(text, rest)) is not None:
        body = textwrap.dedent(tail.group(3)).rstrip("\n")
        blocks.append(FencedBlock(tail.start(), len(text), tail.group(2).lower(), body, False))
    return blocks


def code_from_reply(text: str) -> tuple[str | None, str]:
    """(the Python code of the reply's code blocks, joined; the prose around them).

    The code is None when no block holds Python. Used wherever code is expected but the
    reply is not a JSON action.
    """
    blocks = [b for b in fenced_blocks(text) if b.is_code and b.body.strip()]
    if not blocks:
        return None, text.strip()
    prose, last = [], 0
    for block in blocks:
        prose.append(text[last : block.start])
        last = block.end
    prose.append(text[last:])
    code = "\n\n".join(block.body for block in blocks)
    return code, re.sub(r"\n{3,}", "\n\n", "".join(prose)).strip()


def _is_bare_code(text: str) -> bool:
    """The whole reply is Python code (not a JSON object or array, which also parse)."""
    return not text.lstrip().startswith(("{", "[")) and is_python(text)


_QUOTED_FIELD_KEY = re.compile(r"[\"'](?:thought|action|code|final_answer)[\"']\s*:")


def _not_prose(text: str, blocks: list[FencedBlock]) -> bool:
    """The reply tried to be a JSON action and failed (a broken object, a ```json block, a
    quoted action key), or holds no word at all: something to re-ask, never a final answer."""
    return (
        text.lstrip().startswith(("{", "[", "}", "]"))
        or any(block.label == "json" for block in blocks)
        or _QUOTED_FIELD_KEY.search(text) is not None
        or re.search(r"[^\W_]", text) is None
    )


def _is_json_like(body: str) -> bool:
    try:
        _load(body.strip(), [])
    except ValueError:
        return False
    return True


def is_python(body: str) -> bool:
    """Valid Python that does something: a statement, or a call (prose such as "It is 42."
    can parse as an expression, so a lone expression other than a call does not count, nor
    does an annotation without a value, which is how "Action: x" parses).
    Parsing a model's text never prints a warning (an invalid escape such as "\\ ")."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(body)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return any(_does_something(node) for node in tree.body)


def _does_something(node: ast.stmt) -> bool:
    """Not a lone non-call expression, nor a bare annotation ("Action: debug_error")."""
    if isinstance(node, ast.Expr):
        return isinstance(node.value, ast.Call | ast.Await)
    return not (isinstance(node, ast.AnnAssign) and node.value is None)


def _without_json(
    text: str,
    blocks: list[FencedBlock],
    no_action: ActionParseError,
    prose_answers: bool,
    notes: _FormNotes,
) -> ParsedAction:
    """A reply with no JSON action: its code blocks, or (CodeAct) its prose."""
    code, prose = code_from_reply(text)
    if code is not None:
        action = Action(thought=prose, action="execute_code", code=code)
        notes.add("took the Python code block as the code (no JSON action)")
        return ParsedAction(action, tuple(notes.repairs))
    cut = "cut off" in str(no_action) or "limit" in str(no_action)
    if prose_answers and not cut and not _not_prose(text, blocks):
        action = Action(action="provide_answer", final_answer=text.strip())
        notes.add("took the reply as the final answer (no action, no code)")
        return ParsedAction(action, tuple(notes.repairs))
    raise no_action


@dataclass(frozen=True)
class _FormNotes:
    """The repairs of one parse; reading a reply in the form it was asked in is none."""

    repairs: list[str]
    fenced: bool

    def add(self, note: str) -> None:
        """Note reading a reply without its JSON action, unless the fenced form was asked."""
        if not self.fenced:
            self.repairs.append(note)


# -- reasoning blocks and labelled lines ---------------------------------------------------
_REASONING = re.compile(r"<(think|thinking|reasoning)>(.*?)(?:</\1>|\Z)", re.DOTALL | re.I)
_REASONING_END = re.compile(r"^(.*?)</(?:think|thinking|reasoning)>", re.DOTALL | re.I)


def _without_reasoning(text: str, repairs: list[str]) -> tuple[str, str]:
    """(the reply without its <think> blocks, their text). Reasoning models send one before
    the answer; some servers drop its opening tag, leaving only `</think>`."""
    found: list[str] = []

    def keep(match: re.Match[str]) -> str:
        found.append(match.group(2).strip())
        return ""

    cleaned = _REASONING.sub(keep, text)
    if not found and (orphan := _REASONING_END.match(cleaned)) is not None:
        found.append(orphan.group(1).strip())
        cleaned = cleaned[orphan.end() :]
    if found:
        repairs.append("removed a <think> block")
    return cleaned, "\n\n".join(part for part in found if part)


_LABEL = re.compile(
    r"^[ \t>*_#-]*(thought|action|final[ _]answer|answer)[*_]*[ \t]*:[*_]*[ \t]*(.*)$",
    re.IGNORECASE | re.MULTILINE,
)


def _labelled_fields(text: str, blocks: list[FencedBlock]) -> dict[str, Any] | None:
    """An action written as labelled lines ("Action: execute_code", "Thought: ...",
    "Final answer: ..."), its code in a fenced block. Without an `Action:` line naming one,
    code under a `Thought:` or with a `Final answer:` line is run, and a `Final answer:` line
    with no code is the answer; anything else is None."""
    labels = list(_LABEL.finditer(text))
    values: dict[str, str] = {}
    for index, match in enumerate(labels):
        name = _canonical(match.group(1))
        name = "final_answer" if name == "answer" else name
        end = labels[index + 1].start() if index + 1 < len(labels) else len(text)
        if name == "thought":  # what follows the code (an imagined result...) is no thought
            end = min([end, *(b.start for b in blocks if b.is_code and b.start >= match.end())])
        body = (match.group(2) + text[match.end() : end]).strip()
        values.setdefault(name, body)
    code = [block.body for block in blocks if block.is_code and block.body.strip()]
    action = _canonical(values.get("action", "").strip("`\"' .").split(" ")[0])
    if ALIASES.get(action, action) not in ACTION_NAMES:
        if code and ("thought" in values or "final_answer" in values):
            action = "execute_code"
        elif not code and values.get("final_answer"):
            action = "provide_answer"
        else:
            return None
    data: dict[str, Any] = {"action": action, "thought": values.get("thought", "")}
    if "final_answer" in values:
        data["final_answer"] = values["final_answer"]
    if code:
        data["code"] = "\n\n".join(code)
    return data


# -- finding the JSON ----------------------------------------------------------------------
@dataclass(frozen=True)
class _Span:
    start: int
    end: int  # -1 when the text ended before the span closed


def _spans(text: str) -> list[_Span]:
    """Top-level {...} / [...] spans, aware of quoted strings inside them."""
    spans: list[_Span] = []
    pos, rescans = 0, 0
    while pos < len(text):
        opener = _OPENER.search(text, pos)
        if opener is None:
            break
        start = opener.start()
        end = _span_end(text, start)
        spans.append(_Span(start, end))
        if end >= 0:
            pos = end
        elif rescans < _MAX_RESCANS:
            rescans += 1  # an opener that never closes may be prose: look inside it once more
            pos = start + 1
        else:
            break
    return spans


def _span_end(text: str, start: int) -> int:
    """Index just past the bracket closing the one at `start`, or -1."""
    depth, i = 0, start
    while (match := _STRUCTURAL.search(text, i)) is not None:
        i, char = match.start(), match.group()
        if char in "\"'":
            i = _string_end(text, i)
            if i < 0:
                return -1
            continue
        depth += 1 if char in "{[" else -1
        if depth == 0:
            return i + 1
        i += 1
    return -1


def _string_end(text: str, start: int) -> int:
    """Index just past the string opened at `start`, or -1 when it never closes; a Python
    triple-quoted string (models write code values so) runs to its closing triple."""
    triple = text[start : start + 3]
    if triple in _TRIPLE_QUOTES:
        close = text.find(triple, start + 3)
        return close + 3 if close >= 0 else -1
    quote, i = text[start], start + 1
    pattern = _DOUBLE_QUOTED_STOP if quote == '"' else _SINGLE_QUOTED_STOP
    while (match := pattern.search(text, i)) is not None:
        i, char = match.start(), match.group()
        if char == "\\":
            i += 2
            continue
        return i + 1  # the closing quote; for ' also a newline (an apostrophe in prose)
    return -1


def _load(fragment: str, repairs: list[str]) -> Any:
    """The fragment as JSON, repaired if needed; raises ValueError when it is not."""
    try:
        return json.loads(fragment, strict=False)
    except (ValueError, RecursionError):
        pass
    without_commas = _TRAILING_COMMA.sub(r"\1", fragment)
    if without_commas != fragment:
        try:
            value = json.loads(without_commas, strict=False)
        except (ValueError, RecursionError):
            pass
        else:
            repairs.append("removed trailing commas")
            return value
    uncommented = _without_comments(without_commas)
    if uncommented != without_commas:
        try:
            value = json.loads(_TRAILING_COMMA.sub(r"\1", uncommented), strict=False)
        except (ValueError, RecursionError):
            pass
        else:
            repairs.append("removed comments from the JSON")
            return value
    if len(fragment) <= _LITERAL_EVAL_LIMIT:
        try:
            value = ast.literal_eval(fragment)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            pass
        else:
            repairs.append("read Python-style quoting")
            return value
    requoted = _TRIPLE_QUOTED.sub(lambda match: json.dumps(match["body"]), fragment)
    attempts = (requoted, _TRAILING_COMMA.sub(r"\1", requoted)) if requoted != fragment else ()
    for attempt in attempts:
        try:
            value = json.loads(attempt, strict=False)
        except (ValueError, RecursionError):
            continue
        repairs.append('read a Python """string""" as a JSON string')
        return value
    raise ValueError("not JSON")


_COMMENT_OR_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|//[^\n]*|/\*.*?\*/|#[^\n]*', re.DOTALL)


def _without_comments(fragment: str) -> str:
    """JSON with its //, /* */ and # comments removed (strings left alone)."""

    def keep_strings(match: re.Match[str]) -> str:
        return match.group() if match.group().startswith('"') else ""

    return _COMMENT_OR_STRING.sub(keep_strings, fragment)


def json_objects(text: str) -> list[tuple[dict[str, Any], str]]:
    """The JSON objects written in `text` (alone or in a top-level array), each with the text
    it was read from, read as leniently as an action: comments, trailing commas, Python
    quoting and triple-quoted strings."""
    return [(obj, text[span.start : span.end]) for span, obj, _ in _objects(text, _spans(text))]


def _objects(text: str, spans: list[_Span]) -> Iterator[tuple[_Span, dict[str, Any], list[str]]]:
    """Each object the closed `spans` of `text` hold (an array's objects one by one), with the
    repairs its reading took."""
    for span in spans:
        if span.end < 0:
            continue
        repairs: list[str] = []
        try:
            value = _load(text[span.start : span.end], repairs)
        except ValueError:
            continue
        objects = [v for v in value if isinstance(v, dict)] if isinstance(value, list) else [value]
        if isinstance(value, list) and objects:
            repairs.append("took the object out of a JSON array")
        for obj in objects:
            if isinstance(obj, dict):
                yield span, obj, repairs


def _select_object(text: str, finish_reason: str | None, repairs: list[str]) -> dict[str, Any]:
    spans = _spans(text)
    found: list[tuple[_Span, dict[str, Any]]] = []
    for span, obj, attempt in _objects(text, spans):
        found.append((span, obj))
        repairs.extend(r for r in attempt if r not in repairs)
    candidates = [(s, o) for s, o in found if any(_canonical(str(k)) in FIELDS for k in o)]
    if not candidates:
        raise ActionParseError(_nothing_found(text, spans, finish_reason, bool(found)))
    distinct = {json.dumps(o, sort_keys=True, default=str) for _, o in candidates}
    if len(distinct) > 1:
        raise ActionParseError(
            f"the reply holds {len(candidates)} different JSON objects; send exactly one action"
        )
    span, obj = candidates[0]
    if text[: span.start].strip() or text[span.end :].strip():
        outside = text[: span.start] + text[span.end :]
        only_fences = not re.sub(r"```(json)?", "", outside).strip()
        repairs.append("removed a ``` fence" if only_fences else "ignored text around the JSON")
    return obj


def _nothing_found(
    text: str, spans: list[_Span], finish_reason: str | None, found_other: bool
) -> str:
    if any(span.end < 0 and text[span.start] == "{" for span in spans):
        if finish_reason == "length":
            return "the reply hit the output limit before its JSON object closed; keep it shorter"
        return "the JSON object is cut off (the reply ended before it closed)"
    if found_other:
        return f"the JSON object has none of the fields {', '.join(FIELDS)}"
    if spans:
        return "the reply holds no valid JSON object"
    return "the reply holds no JSON object"


# -- normalizing the object ----------------------------------------------------------------
def _canonical(name: str) -> str:
    return re.sub(r"[\s\-]+", "_", name.strip().lower())


def _normalize(data: dict[str, Any], repairs: list[str]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    extra: list[str] = []
    for key, value in data.items():
        name = _canonical(str(key))
        if name in FIELDS and name not in result:
            if name != key:
                repairs.append(f"read key {key!r} as {name!r}")
            result[name] = value
        else:
            extra.append(str(key))
    if extra:
        repairs.append(f"ignored extra keys: {', '.join(extra)}")
    _normalize_action(result, repairs)
    _normalize_code(result, repairs)
    if "thought" not in result:
        repairs.append("no thought given")
    action = result.get("action") if isinstance(result.get("action"), str) else None
    if action == "provide_answer" and result.pop("code", None) is not None:
        repairs.append("dropped code from provide_answer")
    if action in CODE_ACTIONS and "final_answer" in result:
        answer = result.pop("final_answer")
        if isinstance(answer, str) and answer.strip():  # small models answer beside the code
            result["final_answer"] = answer
            repairs.append(f"kept final_answer beside the code of {action}")
    return result


def _normalize_action(result: dict[str, Any], repairs: list[str]) -> None:
    action = result.get("action")
    if action is None:
        has_code = bool(result.get("code"))
        has_answer = bool(result.get("final_answer"))
        if has_code != has_answer:
            result["action"] = "execute_code" if has_code else "provide_answer"
            repairs.append(f"no action given; took {result['action']} from the fields present")
        return
    if not isinstance(action, str):
        return
    name = _canonical(action)
    name = ALIASES.get(name, name)
    if name != action and name in ACTION_NAMES:
        repairs.append(f"read action {action!r} as {name!r}")
        result["action"] = name


def _normalize_code(result: dict[str, Any], repairs: list[str]) -> None:
    code = result.get("code")
    if isinstance(code, list) and all(isinstance(line, str) for line in code):
        result["code"] = code = "\n".join(code)
        repairs.append("joined code given as a list of lines")
    if isinstance(code, str):
        result["code"], cleaned = clean_code(code)
        repairs += cleaned


def clean_code(code: str) -> tuple[str, list[str]]:
    """(the code without what small models leave around it: a ``` fence, closed or not, a
    stray closing fence, a `python` label line; the repairs made)."""
    repairs: list[str] = []
    fenced = _CODE_FENCE.match(code)
    if fenced:
        code = fenced.group(1)
        repairs.append("removed a ``` fence around the code")
    opening = _OPEN_FENCE.match(code)
    if opening is not None:  # a fence opened and never closed, or closed and never opened
        code = code[opening.end() :]
        repairs.append("removed an unclosed ``` fence from the code")
    closing = _CLOSE_FENCE.search(code)
    if closing is not None:
        code = code[: closing.start()]
        repairs.append("removed a stray closing ``` from the code")
    first, newline, rest = code.lstrip("\n").partition("\n")
    if newline and first.strip().lower() in _PYTHON_LABELS and rest.strip():
        code = rest
        repairs.append(f"removed a stray {first.strip()!r} line (a fence label) from the code")
    escaped = _newlines_escaped_in_strings(code)
    if escaped is not None:
        code = escaped
        repairs.append("read line breaks inside string literals as \\n (JSON had unescaped them)")
    return code, repairs


_MAX_ESCAPES = 50


def _newlines_escaped_in_strings(code: str) -> str | None:
    """`code` with each line break that cuts a one-line string literal written as ``\\n``, when
    that is what keeps it from compiling: a model that writes ``'\\n'`` in Python inside a JSON
    string as ``"\\n"`` gets a real line break once the JSON is decoded. None when the code
    compiles as it is, or fails for another reason."""
    lines = code.split("\n")
    for _ in range(_MAX_ESCAPES):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                compile("\n".join(lines), "<code>", "exec", dont_inherit=True)
        except SyntaxError as exc:
            cut = exc.lineno
            if "unterminated string literal" not in str(exc.msg) or cut is None:
                return None
            if cut >= len(lines):
                return None
            lines[cut - 1 : cut + 1] = [lines[cut - 1] + "\\n" + lines[cut]]
            continue
        except (ValueError, MemoryError, RecursionError):
            return None
        joined = "\n".join(lines)
        return joined if joined != code else None
    return None


def _describe_validation(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "missing":
            problems.append(f"{where} is missing")
        elif error["type"] == "literal_error":
            got = error.get("input")
            problems.append(f"action {got!r:.60} is not one of {', '.join(ACTION_NAMES)}")
        elif where:
            got = type(error.get("input")).__name__
            problems.append(f"{where}: {message} (got {got})")
        else:
            problems.append(message)
    return "; ".join(problems)
