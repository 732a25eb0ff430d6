"""The occurrences of a searched string marked on one card of the stream pane, and the row
of the current one (for the pane to scroll to).

A card is marked in its text widgets as they stand, a thought's or an answer's Markdown
blocks included (as rendered: a match across markup, as in `**nee**dle`, is scrolled to, not
marked); the text each had is kept and put back by `clear`, unless the card re-rendered it
since.
"""

from __future__ import annotations

from math import ceil
from typing import NamedTuple

from rich.cells import cell_len
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Markdown, Static

from tui_agent.tui.stream.text_view import CURRENT_STYLE, MATCH_STYLE


def _texts(card: Widget) -> list[Static]:
    """The card's text widgets shown, in reading order (itself first if it is one); of a
    Markdown view, the blocks that hold text (a list or a quote holds blocks, not text)."""
    found = [card] if isinstance(card, Static) else []
    found += [
        widget
        for widget in card.query(Static)
        if widget.display and isinstance(widget.content, Content) and not widget.children
    ]
    return [widget for widget in found if isinstance(widget, Static)]


def _rows(content: Content, offset: int, width: int) -> int:
    """The row of `content` that character `offset` is on, wrapped at `width` cells."""
    lines = content.plain[:offset].split("\n")
    if width <= 0:
        return len(lines) - 1
    return sum(max(1, ceil(cell_len(line) / width)) for line in lines[:-1]) + (
        cell_len(lines[-1]) // width
    )


def _top(widget: Widget, pane: Widget) -> int:
    """The row of `widget`'s content in `pane`'s scrolled content."""
    y = widget.virtual_region.y
    node = widget.parent
    while isinstance(node, Widget) and node is not pane:
        y += node.styles.margin.top + node.styles.border.spacing.top
        y += node.virtual_region_with_margin.y
        node = node.parent
    return y


class Spot(NamedTuple):
    """The current match on its card: the `ordinal`-th of the card's `total` matches, in
    `line` of the card's whole text at `column`."""

    ordinal: int
    total: int
    line: str
    column: int


def _plain(widget: Static) -> str:
    content = widget.content
    assert isinstance(content, Content)
    return content.plain


def _locate(texts: list[Static], line: str, column: int) -> tuple[Static, int] | None:
    """Where the card shows `line` (its indentation aside), and the offset of `column` in it;
    None when it does not show the line."""
    stripped = line.lstrip()
    if not stripped:
        return None
    shift = column - (len(line) - len(stripped))
    for widget in texts:
        at = _plain(widget).find(stripped)
        if at >= 0 and shift >= 0:
            return widget, at + shift
    return None


def _in_markdown(card: Widget, line: str) -> bool:
    """Whether `line` is in the card's Markdown (shown there, though not marked)."""
    stripped = line.strip()
    return bool(stripped) and any(stripped in view.source for view in card.query(Markdown))


class CardMarks:
    """The marks of a search on one card at a time."""

    def __init__(self) -> None:
        self._marked: dict[Static, tuple[Content, Content]] = {}
        """Each marked widget: the text it had, and the marked text it shows."""
        self._current: tuple[Static, int] | None = None
        """The widget and the offset of the occurrence marked most strongly."""

    def clear(self) -> None:
        """Put back the text of the widgets marked (those not re-rendered since)."""
        self._restore(self._marked)
        self._marked = {}
        self._current = None

    @staticmethod
    def _restore(marked: dict[Static, tuple[Content, Content]]) -> None:
        for widget, (original, shown) in marked.items():
            if widget.is_attached and widget.content is shown:
                widget.update(original, layout=False)  # marks change no size

    def mark(self, card: Widget, query: str, current: Spot) -> bool:
        """Mark every occurrence of `query` on `card`, the one at `current` most strongly;
        whether the card shows that one (not when it is in text the card leaves out)."""
        before, self._marked = self._marked, {}
        needle = query.lower()
        texts = _texts(card)
        originals = {
            widget: original
            for widget, (original, shown) in before.items()
            if widget.content is shown
        }
        spots: list[tuple[Static, int]] = []
        for widget in texts:
            text = _plain(widget).lower()  # the marks change no character
            at = text.find(needle) if needle else -1
            while at >= 0:
                spots.append((widget, at))
                at = text.find(needle, at + len(needle))
        chosen = spots[current.ordinal] if len(spots) == current.total else None
        if chosen is None:  # the card shows part of its text: find the match's line in it
            chosen = _locate(texts, current.line, current.column)
        self._current = chosen if chosen in spots else None
        for widget in dict.fromkeys(spot[0] for spot in spots):
            original = originals.get(widget, widget.content)
            assert isinstance(original, Content)
            shown = original
            for spot in spots:
                if spot[0] is widget:
                    style = CURRENT_STYLE if spot == self._current else MATCH_STYLE
                    shown = shown.stylize(style, spot[1], spot[1] + len(needle))
            widget.update(shown, layout=False)
            self._marked[widget] = (original, shown)
        self._restore({w: marks for w, marks in before.items() if w not in self._marked})
        return self._current is not None or _in_markdown(card, current.line)

    def current_row(self, pane: Widget) -> int | None:
        """The row in `pane`'s content of the occurrence marked most strongly."""
        if self._current is None:
            return None
        widget, offset = self._current
        content = self._marked[widget][0]
        return _top(widget, pane) + _rows(content, offset, widget.content_region.width)
