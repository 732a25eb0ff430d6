"""The search over a stream pane's cards: its bar, its matches over every card's whole text,
and the current match's card unfolded, marked and scrolled to. The pane keeps the cards and
the cursor; it hands each search, step and clear to a `StreamSearch`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from textual.containers import ScrollableContainer
from textual.widget import Widget

from tui_agent.tui.stream.entry_text import EntryTexts
from tui_agent.tui.stream.marks import CardMarks, Spot
from tui_agent.tui.stream.matches import Block, Hit, Matches
from tui_agent.tui.stream.search_bar import SearchBar
from tui_agent.tui.stream_groups import StreamEntry
from tui_agent.tui.widgets.artifact_card import ArtifactCard
from tui_agent.tui.widgets.group_card import GroupCard
from tui_agent.tui.widgets.step_card import StepCard


class StreamSearch:
    """One search over the stream shown by `pane`; `card_at(index)` puts stream entry
    `index`'s card under the pane's cursor, mounted if need be (None: too far back)."""

    def __init__(
        self, pane: ScrollableContainer, card_at: Callable[[int], Awaitable[Widget | None]]
    ) -> None:
        self._pane = pane
        self._card_at = card_at
        self.bar = SearchBar(id="stream-search")
        self.matches = Matches()
        """The matches across the stream (blocks are stream indexes)."""
        self._marks = CardMarks()
        self._texts = EntryTexts()
        self._blocks: list[Block] = []
        """The text of every card as the search last saw it."""
        self._unshown = False
        """Whether the current match is in text its card does not show (`v` shows it)."""

    @property
    def unshown_hit(self) -> Hit | None:
        """The current match when its card leaves it out (the output screen shows it)."""
        return self.matches.current if self._unshown else None

    async def search(
        self, query: str, entries: list[StreamEntry], closed: str | None, start: int
    ) -> None:
        """Search every entry's text for `query`, from the current match (else from stream
        index `start`), and show the match found (`closed`: how the session ended)."""
        hit = self.matches.current
        self._blocks = self._texts.blocks(entries, closed)
        self.matches.search(self._blocks, query, hit if hit is not None else Hit(start, 0, 0))
        await self._show()

    async def step(self, delta: int) -> None:
        """Go `delta` matches on (back when negative), wrapping around."""
        self.matches.step(delta)
        await self._show()

    def clear(self) -> None:
        """Close the bar, drop the matches and their marks."""
        self.bar.close()
        self.matches.clear()
        self._marks.clear()
        self._blocks = []
        self._unshown = False

    async def _show(self) -> None:
        """Put the cursor on the current match's card, unfold and mark it, scroll the match
        into view and say where it stands (`3/17`)."""
        self._marks.clear()
        hit = self.matches.current
        self._unshown = False
        if hit is not None:
            card = await self._card_at(hit.block)
            if (
                isinstance(card, ArtifactCard | GroupCard | StepCard)
                and card.foldable
                and not card.expanded
            ):
                await card.set_expanded(True)
            in_card = self.matches.in_block(hit.block)
            line = self._blocks[hit.block].lines[hit.line]
            spot = Spot(in_card.index(hit), len(in_card), line, hit.column)
            shown = card is not None and self._marks.mark(card, self.matches.query, spot)
            self._unshown = not shown
            if card is not None:
                self._pane.call_after_refresh(self._scroll_to_match, card)
        text = self.matches.count_text()
        self.bar.show_count(text + (" · v shows it" if self._unshown else ""))

    def _scroll_to_match(self, card: Widget, tries: int = 5) -> None:
        """Scroll the current match into view (centred when it was out of view), once the
        card unfolded for it is laid out."""
        pane = self._pane
        row = self._marks.current_row(pane)
        if row is None:
            card.scroll_visible(animate=False, top=True)
            return
        height = pane.scrollable_content_region.height
        if row > pane.max_scroll_y + height and tries:  # laid out before the card unfolded
            pane.call_after_refresh(self._scroll_to_match, card, tries - 1)
            return
        if not pane.scroll_y <= row < pane.scroll_y + height:
            pane.scroll_to(y=max(0, row - height // 2), animate=False, immediate=True)
