"""Text from a sandbox, a page, a model or a file, made safe to write to a terminal.

Recorded text is kept as it came (the store, exports and `--json` are faithful); it is made
safe where it meets the terminal. Unsafe characters are those a terminal acts on or that
change what the reader sees: C0 controls other than newline and tab (ESC starts every
title, clipboard, query and DCS sequence), DEL, C1 controls (a lone 0x9B is a CSI) and the
bidi embeddings, overrides and isolates that reorder a line ("Trojan Source").

- `visible` shows them: C0 and DEL as control pictures (ESC -> ␛), C1 as `\\x9b`, bidi
  controls as `\\u202e`. A CR that ends a line is dropped (CRLF output); any other CR
  shows as ␍, so text cannot overwrite its own line.
- `visible_event` is an event (or any pydantic model) with all its text made visible: the
  display copy a view shows. Its `session_id` is kept: it is the key sessions are looked
  up by; where an id is shown, it goes through `visible`.
- `without_unsafe` drops them: the last net under a renderer, after layout (every unsafe
  character is zero cells wide there, so dropping one moves nothing).
- `json_may_be_unsafe` says, from an event's JSON text, whether its display copy can differ
  from it (False is certain), so a stored session's events skip the walk when they are plain.
- `terminal_json` escapes the ones JSON leaves raw (DEL, C1, bidi) in JSON text, which
  still parses to the same values.

Zero-width joiners and spaces are left alone: they drive no terminal, and emoji and several
scripts need them.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

from pydantic import BaseModel

T = TypeVar("T")

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_LINE_END_CR = re.compile("\r+(?=\n|$)")
_RAW_IN_JSON = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_UNSAFE_IN_JSON = re.compile(r"\\[bfru]|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""An unsafe character in JSON text: escaped (`\\u001b`, `\\r`, ...) or raw."""
KEPT_FIELDS = frozenset({"session_id"})
"""Fields `visible_event` leaves as they are (keys, not text to read)."""


def _picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ … ␟ (␛ for ESC)
    if code == 0x7F:
        return "\u2421"  # ␡
    if code <= 0x9F:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


def visible(text: str) -> str:
    """`text` with every unsafe character shown instead of acted on (the same object when
    there is none)."""
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(_picture, _LINE_END_CR.sub("", text))


def without_unsafe(text: str) -> str:
    """`text` with every unsafe character left out (all are zero cells wide); the same
    object when there is none."""
    return _UNSAFE.sub("", text)


def terminal_json(text: str) -> str:
    """JSON text with DEL, C1 and bidi controls written as `\\u` escapes (JSON escapes C0
    itself; outside strings JSON has none of these, so the values read back the same)."""
    return _RAW_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def json_may_be_unsafe(text: str) -> bool:
    """Whether the JSON `text` may hold a string with an unsafe character, escaped or raw.

    False is certain: the values it parses to are their own display copies. True may be wrong
    (an escaped backslash before `r`): the caller then makes the copy, which changes nothing.
    """
    if text.isascii() and text.isprintable():  # the common case: no raw control, no regex
        return "\\u" in text or "\\r" in text or "\\b" in text or "\\f" in text
    return _UNSAFE_IN_JSON.search(text) is not None


def visible_event(event: T) -> T:
    """The display copy of `event` (any pydantic model, dict, list or string): its text made
    `visible`, nested values and dict keys included, `KEPT_FIELDS` kept. Parts with nothing
    to change are shared, not copied."""
    return _visible_value(event)


def _visible_value(value: Any) -> Any:
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, BaseModel):
        changed = {}
        for name in type(value).model_fields:
            if name in KEPT_FIELDS:
                continue
            old = getattr(value, name)
            new = _visible_value(old)
            if new is not old:
                changed[name] = new
        return value.model_copy(update=changed) if changed else value
    if isinstance(value, dict):
        pairs = [(_visible_value(k), _visible_value(v)) for k, v in value.items()]
        same = all(
            new_k is k and new_v is v
            for (new_k, new_v), (k, v) in zip(pairs, value.items(), strict=True)
        )
        return value if same else dict(pairs)
    if isinstance(value, list | tuple):
        items = [_visible_value(item) for item in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return items if isinstance(value, list) else tuple(items)
    return value
