"""A line diff of two texts (difflib), unified or side by side, with long unchanged runs folded.

`diff_rows` pairs the lines of both versions (what the side-by-side view shows); the unified
view is difflib's. Both columns of the side-by-side view have one line per row and do not
wrap, so they stay aligned while the view scrolls.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from itertools import zip_longest
from typing import Literal

from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.widgets import Static

CONTEXT = 3
"""Unchanged lines kept around each change; longer unchanged runs are folded."""

RowTag = Literal["equal", "delete", "insert", "replace", "fold"]


@dataclass(frozen=True)
class DiffRow:
    """One row of the side-by-side view: a line of each side (None where a side has none);
    a `fold` row stands for `folded` unchanged lines."""

    tag: RowTag
    old_number: int | None = None
    old: str | None = None
    new_number: int | None = None
    new: str | None = None
    folded: int = 0


def diff_rows(old: str, new: str, context: int = CONTEXT) -> list[DiffRow]:
    """The two texts' lines paired up, changed lines side by side, unchanged runs folded."""
    a, b = old.split("\n"), new.split("\n")
    rows: list[DiffRow] = []
    opcodes = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    for index, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        if tag == "equal":
            rows += _equal_rows(a, i1, i2, j1, context, index == 0, index == len(opcodes) - 1)
            continue
        olds, news = range(i1, i2), range(j1, j2)
        for i, j in zip_longest(olds, news):
            rows.append(
                DiffRow(
                    tag,
                    None if i is None else i + 1,
                    None if i is None else a[i],
                    None if j is None else j + 1,
                    None if j is None else b[j],
                )
            )
    return rows


def _equal_rows(
    a: list[str], i1: int, i2: int, j1: int, context: int, first: bool, last: bool
) -> list[DiffRow]:
    """Unchanged lines: `context` of them next to each change, the rest folded into one row."""
    lines = [DiffRow("equal", i + 1, a[i], j1 + i - i1 + 1, a[i]) for i in range(i1, i2)]
    head = 0 if first else context
    tail = 0 if last else context
    if len(lines) <= head + tail + 1:
        return lines
    folded = DiffRow("fold", folded=len(lines) - head - tail)
    return [*lines[:head], folded, *lines[len(lines) - tail :]]


def unified_content(old: str, new: str, old_label: str, new_label: str) -> Content:
    """difflib's unified diff, coloured: removed lines red, added green, hunks in the accent."""
    lines = difflib.unified_diff(
        old.split("\n"), new.split("\n"), old_label, new_label, lineterm="", n=CONTEXT
    )
    parts: list[tuple[str, str]] = []
    for line in lines:
        if line.startswith(("---", "+++")):
            style = "bold"
        elif line.startswith("@@"):
            style = "$text-accent"
        elif line.startswith("-"):
            style = "$text-error on $error 15%"
        elif line.startswith("+"):
            style = "$text-success on $success 15%"
        else:
            style = "$text-muted"
        parts.append((line + "\n", style))
    return Content.assemble(*parts).rstrip("\n") if parts else Content("(no difference)")


SIDE_STYLES = {
    "delete": "$text-error on $error 15%",
    "insert": "$text-success on $success 15%",
    "replace": "on $warning 12%",
    "equal": "",
}


def side_content(rows: list[DiffRow], side: Literal["old", "new"]) -> Content:
    """One column of the side-by-side view: numbered lines, blank where the side has none."""
    width = len(str(max((r.old_number or r.new_number or 0) for r in rows))) if rows else 1
    parts: list[tuple[str, str]] = []
    for row in rows:
        if row.tag == "fold":
            parts.append((f"{'⋯':>{width}}   {row.folded} unchanged lines\n", "dim italic"))
            continue
        number = row.old_number if side == "old" else row.new_number
        text = row.old if side == "old" else row.new
        if text is None:
            parts.append(("\n", ""))
            continue
        style = SIDE_STYLES[row.tag]
        if row.tag == "replace":
            style = "$text-error " + style if side == "old" else "$text-success " + style
        parts += [(f"{number:>{width}} │ ", "$text-muted"), (text + "\n", style)]
    return Content.assemble(*parts).rstrip("\n")


class DiffView(VerticalScroll):
    """Two versions of a text, side by side (`split`) or as a unified diff whose long lines
    wrap."""

    def __init__(
        self,
        old: str,
        new: str,
        old_label: str,
        new_label: str,
        *,
        split: bool = True,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self._texts = (old, new)
        self._labels = (old_label, new_label)
        self._split = split
        self.rows = diff_rows(old, new)

    @property
    def split(self) -> bool:
        """Whether the view shows the versions side by side (else one unified diff)."""
        return self._split

    def compose(self) -> ComposeResult:
        old_label, new_label = self._labels
        with Horizontal(classes="diff-split"):
            yield Static(
                Content.assemble((old_label, "bold"), "\n", side_content(self.rows, "old")),
                classes="diff-side -old",
            )
            yield Static(
                Content.assemble((new_label, "bold"), "\n", side_content(self.rows, "new")),
                classes="diff-side -new",
            )
        yield Static(unified_content(*self._texts, *self._labels), classes="diff-unified")

    def on_mount(self) -> None:
        self._show()

    def toggle(self) -> None:
        """Switch between the side-by-side and the unified view."""
        self._split = not self._split
        self._show()

    def _show(self) -> None:
        self.query_one(".diff-split").display = self._split
        self.query_one(".diff-unified").display = not self._split
