"""Stream the string fields of a JSON object while its text is still arriving.

`IncrementalFields.feed(chunk)` returns what the new text added: `FieldDelta` pieces of the
top-level string values (decoded, escapes included, even when split across chunks) and a
`FieldComplete` when a value's closing quote arrives. Text before the first `{` (prose, a
``` fence) is skipped; nested values are skipped; everything after the object closes is
ignored. A `{` inside a Python code block is code, not the object: nothing is streamed from
it. It never raises: text that is not JSON just yields nothing.
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
