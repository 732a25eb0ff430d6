"""Where a searched string occurs in a text made of blocks of lines (the stream's cards, or
one card's lines), and which occurrence is the current one. No widgets here.

Search ignores case (`str.lower`). An occurrence is (block, line, column); the current one
moves with `step(±1)` and wraps around at either end. At most MAX_HITS are collected (a
one-letter search in 100,000 lines would otherwise stall every keystroke).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate
from typing import NamedTuple

MAX_HITS = 10_000
"""Occurrences collected at most; the count then says `10,000+`."""


class Hit(NamedTuple):
    """One occurrence: its block, its line in the block, its column in the line."""

    block: int
    line: int
    column: int


class Block:
    """Lines searched as one: lowered and joined once, on the first search."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self._text: str | None = None
        self._starts: list[int] = []

    def text(self) -> str:
        """The lines lowered, joined by newlines."""
        if self._text is None:
            lines = self.lines
            joined = "\n".join(lines)
            self._text = joined.lower()
            if len(self._text) != len(joined):  # a letter lowered to two: lower line by line
                lines = [line.lower() for line in lines]
                self._text = "\n".join(lines)
            self._starts = list(accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
        return self._text

    def position(self, offset: int) -> tuple[int, int]:
        """The line and column of `offset` in `text()`."""
        line = bisect_right(self._starts, offset) - 1
        return line, offset - self._starts[line]


def find(blocks: Sequence[Block], query: str, limit: int = MAX_HITS) -> list[Hit]:
    """The first `limit` occurrences of `query` in `blocks`, in reading order (none for an
    empty query)."""
    if not query:
        return []
    needle = query.lower()
    hits: list[Hit] = []
    for index, block in enumerate(blocks):
        text = block.text()
        at = text.find(needle)
        while at >= 0:
            hits.append(Hit(index, *block.position(at)))
            if len(hits) >= limit:
                return hits
            at = text.find(needle, at + len(needle))
    return hits


class Matches:
    """The occurrences of the string searched for and the current one."""

    def __init__(self) -> None:
        self.query = ""
        self.hits: list[Hit] = []
        self.index: int | None = None
        """Position of the current occurrence in `hits` (None: none chosen yet)."""

    @property
    def current(self) -> Hit | None:
        return self.hits[self.index] if self.index is not None else None

    def search(self, blocks: Sequence[Block], query: str, start: Hit | None = None) -> None:
        """Find `query`; the current occurrence is the first at or after `start` (wrapping),
        else the first."""
        self.query = query
        self.hits = find(blocks, query)
        if not self.hits:
            self.index = None
            return
        self.index = 0
        if start is not None:
            self.index = next((i for i, hit in enumerate(self.hits) if hit >= start), 0)

    def step(self, delta: int) -> Hit | None:
        """Make the next (`delta` 1) or previous (-1) occurrence current; wraps around."""
        if not self.hits:
            return None
        if self.index is None:
            self.index = 0 if delta > 0 else len(self.hits) - 1
        else:
            self.index = (self.index + delta) % len(self.hits)
        return self.current

    def clear(self) -> None:
        self.query, self.hits, self.index = "", [], None

    def count_text(self) -> str:
        """`3/17`, or `no matches` (nothing for an empty query)."""
        if not self.query:
            return ""
        if not self.hits:
            return "no matches"
        more = "+" if len(self.hits) >= MAX_HITS else ""
        return f"{(self.index or 0) + 1:,}/{len(self.hits):,}{more}"

    def in_block(self, block: int) -> list[Hit]:
        """The occurrences in one block, in order."""
        return [hit for hit in self.hits if hit.block == block]
