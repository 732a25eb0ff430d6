"""A scrape's items against a layout's ground truth: how many, and how many field values."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from corpus.layouts import Record, Value

EXAMPLES = 2
"""Misses shown per field."""


@dataclass
class Score:
    """Items found of those expected; truth values found at the same index under the same
    field name; where the misses are."""

    found: int
    expected: int
    values: int = 0
    matched: int = 0
    as_string: int = 0
    """Multi-valued truths found only as one string holding every member (not matched)."""
    misses: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)
    others: Counter[str] = field(default_factory=Counter)
    """Field names the items have beyond the truth's, and in how many items."""

    @property
    def items(self) -> float:
        return min(self.found, self.expected) / self.expected if self.expected else 1.0

    @property
    def recall(self) -> float:
        return self.matched / self.values if self.values else 1.0

    def miss_summary(self) -> str:
        """`field xmisses (e.g. expected → got)` for each field that missed, worst first, and
        the other fields the items have."""
        misses = [
            f"{name} x{count} ({', '.join(self.examples[name])})"
            for name, count in self.misses.most_common()
        ]
        if self.others:
            misses.append(f"other fields: {', '.join(sorted(self.others))}")
        return "; ".join(misses)


def _text(value: Any) -> str:
    return re.sub(r"\s+", " ", str(value)).strip()


def _key(name: str) -> str:
    return re.sub(r"[\s_-]+", "_", name.strip().lower())


def _members(value: Any) -> set[str] | None:
    if isinstance(value, list | tuple):
        return {_text(v) for v in value}
    return None


def _holds_all(text: Any, members: set[str]) -> bool:
    words = set(re.split(r"[\s,;|/]+", _text(text)))
    return bool(members) and members <= words


def score(items: Sequence[dict[str, Any]], truth: Sequence[Record]) -> Score:
    """Compare `items` with `truth`, index by index: field names match case-insensitively
    (spaces, `-` and `_` alike) and values with whitespace normalised; a multi-valued truth
    matches a list with the same members."""
    result = Score(found=len(items), expected=len(truth))
    names = {_key(name) for record in truth for name in record}
    result.others.update(k for item in items for k in {_key(k) for k in item} - names)
    for index, record in enumerate(truth):
        item = {_key(k): v for k, v in items[index].items()} if index < len(items) else {}
        for name, expected in record.items():
            result.values += 1
            got = item.get(_key(name))
            if _matches(got, expected):
                result.matched += 1
                continue
            if isinstance(expected, tuple) and got is not None and _holds_all(got, {*expected}):
                result.as_string += 1
            result.misses[name] += 1
            shown = result.examples.setdefault(name, [])
            if len(shown) < EXAMPLES:
                shown.append(f"{_show(expected)} → {_show(got)}")
    return result


def _matches(got: Any, expected: Value) -> bool:
    if got is None:
        return False
    if isinstance(expected, tuple):
        return _members(got) == {_text(v) for v in expected}
    return _members(got) is None and _text(got) == _text(expected)


def _show(value: Any) -> str:
    if value is None:
        return "missing"
    text = repr(list(value)) if isinstance(value, list | tuple) else repr(_text(value))
    return text if len(text) <= 40 else text[:37] + "..."
