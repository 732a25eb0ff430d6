"""Bounds on JSON read from files anyone may have written (imported sessions, recipes).

Python's parser meets a document nested 100,000 levels deep with a RecursionError, and every
reader of the data walks it recursively after that; so JSON nested more than `MAX_DEPTH`
levels is refused with one line, whatever parsed it.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

MAX_DEPTH = 100
"""The most levels of arrays and objects nested in one another that a file's JSON may have."""

_STRING = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


class JsonTooDeep(ValueError):
    """JSON nested deeper than the limit; the message says so in one line."""


def _too_deep(limit: int) -> JsonTooDeep:
    return JsonTooDeep(f"JSON nested more than {limit} levels deep")


def nesting_depth(text: str) -> int:
    """How many arrays and objects nest in one another in the valid JSON `text` (brackets in
    strings do not count). Linear in the text's length (only for text a parser accepted:
    unterminated strings could make the scan quadratic)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(1 if c in "[{" else -1 for c in brackets), default=0)


def check_depth(text: str, limit: int = MAX_DEPTH) -> None:
    """JsonTooDeep when the valid JSON `text` nests more than `limit` levels; cheap for text
    with few brackets (most lines of a session file)."""
    if text.count("[") + text.count("{") > limit and nesting_depth(text) > limit:
        raise _too_deep(limit)


def loads(text: str, limit: int = MAX_DEPTH) -> Any:
    """`json.loads(text)`, refusing nesting deeper than `limit` with JsonTooDeep (a ValueError
    like json's own errors) instead of a RecursionError."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise _too_deep(limit) from None
    check_depth(text, limit)
    return data
