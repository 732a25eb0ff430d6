"""Stream the fields of an action reply while its text is still arriving.

`IncrementalFields.feed(chunk)` returns what the new text added: `FieldDelta` pieces of the
top-level string values (decoded, escapes included, even when split across chunks) and a
`FieldComplete` when a value's closing quote arrives. Text before the first `{` (prose, a
``` fence) is skipped; nested values are skipped; everything after the object closes is
ignored. A `{` inside a Python code block is code, not the object: nothing is streamed from
it. It never raises: text that is not JSON just yields nothing.

`FencedFields` does the same for a fenced reply (reply_forms.py): the thought is the text
before the first code fence without its `Thought:` label (cut where another label, `Action:` or
`Final answer:`, starts); when a ```python fence opens, the thought completes and so does the
action, `execute_code`; the code then streams and completes when its fence closes. Text after
that is ignored. A reply that is a JSON object after all is streamed by `IncrementalFields`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

_QUOTE_OR_BACKSLASH = re.compile(r'["\\]')
_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{0,4}|[^u]|\Z)", re.DOTALL)
_HIGH_SURROGATE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}")
_FENCE_LINE = re.compile(r"^[ \t]*(?:```+|~~~+)[ \t]*([\w+.-]*)", re.MULTILINE)


@dataclass(frozen=True)
class FieldDelta:
    """New text of a top-level string field."""

    field: str
    text: str


@dataclass(frozen=True)
class FieldComplete:
    """A top-level string field whose closing quote arrived; `value` is all of it."""

    field: str
    value: str


FieldEvent = FieldDelta | FieldComplete


def _decodable_end(raw: str) -> int:
    """How much of an escaped string fragment can be decoded without more text.

    An escape cut by the chunk boundary waits for the rest, and a high surrogate waits for its
    low half, so a pair split across chunks still decodes to one character.
    """
    if "\\" not in raw:
        return len(raw)
    last = previous = None
    for match in _ESCAPE.finditer(raw):
        previous, last = last, match
    if last is None or last.end() != len(raw):
        return len(raw)
    escape = last.group()
    if _HIGH_SURROGATE.fullmatch(escape):
        return last.start()
    if escape == "\\" or (escape.startswith("\\u") and len(escape) < 6):
        adjacent = previous is not None and previous.end() == last.start()
        if adjacent and previous is not None and _HIGH_SURROGATE.fullmatch(previous.group()):
            return previous.start()
        return last.start()
    return len(raw)


def _decode(raw: str) -> str:
    if "\\" not in raw:
        return raw  # nothing escaped (control characters are taken as they are)
    try:
        return json.loads(f'"{raw}"', strict=False)
    except ValueError:
        return raw  # an invalid escape: show the text as written


class IncrementalFields:
    """Feed a reply's text chunk by chunk; get its top-level string fields as they grow."""

    def __init__(self) -> None:
        self._started = False
        self._done = False
        self._prefix = ""  # text before the first "{", to tell whether it opens a code block
        self._depth = 0  # 1 inside the top-level object
        self._expect_key = True
        self._key: str | None = None
        self._in_string = False
        self._string_is_key = False
        self._string_is_field = False
        self._escape_pending = False
        self._raw = ""  # escaped text of the current string not yet decoded
        self._parts: list[str] = []  # decoded text of the current string
        self.values: dict[str, str] = {}
        """Fields completed so far."""

    @property
    def done(self) -> bool:
        """Whether the top-level object has closed."""
        return self._done

    def feed(self, chunk: str) -> list[FieldEvent]:
        """Consume `chunk`; return the field events it produced, in order."""
        events: list[FieldEvent] = []
        i, n = 0, len(chunk)
        if not self._started:
            i = chunk.find("{")
            if i < 0:
                self._prefix += chunk
                return events
            self._prefix += chunk[:i]
            self._started, self._depth, i = True, 1, i + 1
            self._done = _inside_code(self._prefix)
        while i < n and not self._done:
            i = self._in_string_step(chunk, i, events) if self._in_string else self._step(chunk, i)
        if self._in_string and self._string_is_field:
            self._flush(events)
        return events

    def _step(self, chunk: str, i: int) -> int:
        """One structural character outside strings."""
        char = chunk[i]
        if char == '"':
            self._in_string = True
            top = self._depth == 1
            self._string_is_key = top and self._expect_key
            self._string_is_field = top and not self._expect_key and self._key is not None
            self._raw, self._parts = "", []
        elif char in "{[":
            self._depth += 1
        elif char in "}]":
            self._depth -= 1
            self._done = self._depth == 0
        elif self._depth == 1 and char == ":":
            self._expect_key = False
        elif self._depth == 1 and char == ",":
            self._expect_key, self._key = True, None
        return i + 1

    def _in_string_step(self, chunk: str, i: int, events: list[FieldEvent]) -> int:
        """Consume string text up to its closing quote or the chunk's end."""
        if self._escape_pending:
            if self._string_is_key or self._string_is_field:
                self._raw += chunk[i]
            self._escape_pending = False
            return i + 1
        keep = self._string_is_key or self._string_is_field  # nested strings are skipped
        match = _QUOTE_OR_BACKSLASH.search(chunk, i)
        if match is None:
            if keep:
                self._raw += chunk[i:]
            return len(chunk)
        j = match.start()
        if chunk[j] == "\\":
            if keep:
                self._raw += chunk[i : j + 1]
            self._escape_pending = True
            return j + 1
        if keep:
            self._raw += chunk[i:j]
        self._close_string(events)
        return j + 1

    def _flush(self, events: list[FieldEvent]) -> None:
        cut = _decodable_end(self._raw)
        if cut:
            text = _decode(self._raw[:cut])
            self._raw = self._raw[cut:]
            if text and self._key is not None:
                self._parts.append(text)
                events.append(FieldDelta(self._key, text))

    def _close_string(self, events: list[FieldEvent]) -> None:
        self._in_string = False
        if self._string_is_key:
            self._key = _decode(self._raw)
        elif self._string_is_field and self._key is not None:
            if self._raw:
                text = _decode(self._raw)
                self._parts.append(text)
                events.append(FieldDelta(self._key, text))
            value = "".join(self._parts)
            self.values[self._key] = value
            events.append(FieldComplete(self._key, value))
        self._raw, self._parts = "", []


def _inside_code(prefix: str) -> bool:
    """Whether `prefix` ends inside an open fenced block that is not JSON."""
    labels = _FENCE_LINE.findall(prefix)
    return len(labels) % 2 == 1 and labels[-1].lower() not in ("", "json", "json5")


# -- fenced replies ------------------------------------------------------------------------
_THOUGHT_LABEL = re.compile(r"\A[ \t>*_#-]*thought[*_]*[ \t]*:[*_]*[ \t]*", re.IGNORECASE)
_OTHER_LABEL = re.compile(
    r"^[ \t>*_#-]*(?:action|code|final[ _]answer|answer)[*_]*[ \t]*:",
    re.IGNORECASE | re.MULTILINE,
)
_ANSWER = re.compile(r"[ \t>*_#-]*(?:final[ _]answer|answer)", re.IGNORECASE)
_FENCE_OPEN = re.compile(r"^[ \t]*```[ \t]*([\w+.-]*)[ \t]*\n", re.MULTILINE)
_FENCE_CLOSE = re.compile(r"^[ \t]*```[ \t]*$", re.MULTILINE)
_CODE_LABELS = frozenset({"", "python", "py", "python3", "py3"})
_LABEL_WORDS = ("thought:", "action:", "code:", "final answer:", "answer:")


class FencedFields:
    """Feed a fenced reply's text chunk by chunk; get its thought and code as they grow."""

    def __init__(self) -> None:
        self._text = ""
        self._state = "start"  # start | thought | code | done
        self._json: IncrementalFields | None = None
        self._thought_sent = 0
        self._code_start = 0
        self._code_sent = 0

    def feed(self, chunk: str) -> list[FieldEvent]:
        """Consume `chunk`; return the field events it produced, in order."""
        if self._json is not None:
            return self._json.feed(chunk)
        self._text += chunk
        if self._state == "start":
            head = self._text.lstrip()
            if not head:
                return []
            if head.startswith("{"):
                self._json = IncrementalFields()
                return self._json.feed(self._text)
            self._state = "thought"
        events: list[FieldEvent] = []
        if self._state == "thought":
            self._thought(events)
        if self._state == "code":
            self._code(events)
        return events

    def _thought(self, events: list[FieldEvent]) -> None:
        fence = _FENCE_OPEN.search(self._text)
        text = self._text[: fence.start()] if fence else self._text
        label = _OTHER_LABEL.search(text)
        if label is not None:
            text = text[: label.start()]
        elif fence is None:
            text = _decided(text)
        thought = _THOUGHT_LABEL.sub("", text, count=1).strip()
        if len(thought) > self._thought_sent:
            events.append(FieldDelta("thought", thought[self._thought_sent :]))
            self._thought_sent = len(thought)
        if label is not None and fence is None and _ANSWER.match(self._text, label.start()):
            self._state = "done"
        if fence is None:
            return
        events.append(FieldComplete("thought", thought))
        if fence.group(1).lower() not in _CODE_LABELS:
            self._state = "done"
            return
        events.append(FieldComplete("action", "execute_code"))
        self._state, self._code_start = "code", fence.end()

    def _code(self, events: list[FieldEvent]) -> None:
        close = _FENCE_CLOSE.search(self._text, self._code_start)
        end = close.start() if close else len(self._text)
        body = self._text[self._code_start : end]
        if close is None:
            body = _decided(body)
        if len(body) > self._code_sent:
            events.append(FieldDelta("code", body[self._code_sent :]))
            self._code_sent = len(body)
        if close is not None:
            events.append(FieldComplete("code", body.rstrip("\n")))
            self._state = "done"


def _decided(text: str) -> str:
    """`text` without its last, unfinished line when that line may still become a fence or
    a label (a few characters of "```" or "Thought:")."""
    start = text.rfind("\n") + 1
    line = text[start:].lstrip(" \t>*_#-").lower()
    if line.startswith("`") or any(word.startswith(line) for word in _LABEL_WORDS):
        return text[:start]
    return text
