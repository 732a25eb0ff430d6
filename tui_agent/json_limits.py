"""Bounds on JSON read from files anyone may have written (imported sessions, recipes).

Python's parser meets a document nested 100,000 levels deep with a RecursionError, and every
reader of the data walks it recursively after that; so nesting is measured on the text first,
without recursion, and refused past `MAX_DEPTH` with one line.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

MAX_DEPTH = 100
"""The most levels of arrays and objects nested in one another that a file's JSON may have."""

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


class JsonTooDeep(ValueError):
    """JSON nested deeper than the limit; the message says how deep, in one line."""


def nesting_depth(text: str) -> int:
    """How many arrays and objects nest in one another in the JSON `text` (brackets inside
    strings do not count)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(1 if c in "[{" else -1 for c in brackets), default=0)


def check_depth(text: str, limit: int = MAX_DEPTH) -> None:
    """JsonTooDeep when `text` nests more than `limit` levels; cheap for text with few
    brackets (most lines of a session file)."""
    if text.count("[") + text.count("{") <= limit:
        return
    depth = nesting_depth(text)
    if depth > limit:
        raise JsonTooDeep(f"JSON nested {depth:,} levels deep (at most {limit})")


def loads(text: str, limit: int = MAX_DEPTH) -> Any:
    """`json.loads(text)`, refusing nesting deeper than `limit` (JsonTooDeep, a ValueError
    like json's own errors) before the parser can recurse."""
    check_depth(text, limit)
    return json.loads(text)
