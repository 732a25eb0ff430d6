"""The stream pane: one card per stream entry of a session, updated in place.

Entries are the timeline with tool calls grouped (stream_groups.py): a phase with its probes,
one card per list item with its commands. `sync(state)` brings the pane up to date with any
SessionState — the next one of a live session, the same one after an event was applied, or
a fresh re-fold. Only the newest `window` entries are mounted (a long session would
otherwise mount thousands of widgets); `e` shows more of the earlier ones, `o` unfolds (or
folds) the artifacts shown. Up and down move a cursor over the cards (the pane follows the
newest card again at `end`); Enter unfolds the card under it, `v` shows its whole text on
a screen of its own (tui/stream/output_screen.py). `/` searches the whole text of every card
(folded output included): the current match's card is unfolded, marked and scrolled to;
Enter / `n` and shift+Enter / `N` step through the matches, Escape leaves the input, then
clears the search.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from tui_agent.events import OPEN_STATUSES, Artifact, VersionDecided
from tui_agent.session import SessionState, StepState
from tui_agent.tui.export.clipboard import copy_text
from tui_agent.tui.stream.entry_text import entry_lines, entry_title
from tui_agent.tui.stream.matches import Hit, Matches
from tui_agent.tui.stream.output_screen import OutputScreen
from tui_agent.tui.stream.search_bar import SearchBar
from tui_agent.tui.stream.search_state import StreamSearch
from tui_agent.tui.stream_groups import CallGroup, StreamEntry, StreamGroups
from tui_agent.tui.widgets.artifact_card import (
    ArtifactCard,
    ArtifactStatus,
    artifact_status,
    decisions,
)
from tui_agent.tui.widgets.entry_cards import CARD_KINDS, EntryCard
from tui_agent.tui.widgets.group_card import GroupCard
from tui_agent.tui.widgets.mounting import (
    FIRST_WINDOW,
    first_mounted,
    grown_window,
    mount_into,
    on_screen,
)
from tui_agent.tui.widgets.status_line import STATUS_STYLES
from tui_agent.tui.widgets.step_card import StepCard

WINDOW = 30
"""Timeline entries mounted at first; `e` adds this many more each time."""
FARTHEST_JUMP = 300
"""Most cards a search mounts to reach an earlier match; one farther back is shown whole on
the output screen (`v`) instead."""

Card = StepCard | EntryCard | ArtifactCard | GroupCard


class _Statuses:
    """Artifact statuses of one state, with its decisions collected on first use."""

    def __init__(self, state: SessionState) -> None:
        self._state = state
        self._decided: dict[tuple[str, int], VersionDecided] | None = None

    def __call__(self, artifact: Artifact) -> ArtifactStatus:
        if self._decided is None:
            self._decided = decisions(self._state)
        return artifact_status(artifact, self._decided, self._state.current_versions)


def ended_content(state: SessionState) -> Content:
    """`■ cancelled · 34 items kept`: how the session ended, at the foot of its stream."""
    reason = state.stopped_reason
    text = f"■ {state.status}" + (f": {reason}" if reason and reason != state.status else "")
    count = len(state.items)
    if count:
        kept = "kept" if state.status != "completed" else "extracted"
        text += f" · {count:,} item{'s' if count != 1 else ''} {kept}"
    return Content.styled(text, f"bold {STATUS_STYLES.get(state.status, '')}")


def _update(widget: Static, content: Content) -> None:
    """Update a one-line `widget` only when `content` differs, with no relayout (it stays
    one line)."""
    if widget.content != content:
        widget.update(content, layout=not widget.display)


def card_for(entry: StreamEntry, state: SessionState, closed: str | None = None) -> Card:
    """A new card for a stream entry of `state` (`closed`: how the session ended)."""
    if isinstance(entry, StepState):
        return StepCard(entry)
    if isinstance(entry, CallGroup):
        return GroupCard(entry, closed)
    if isinstance(entry, Artifact):
        return ArtifactCard(entry, _Statuses(state)(entry))
    return EntryCard(entry, CARD_KINDS[type(entry)])


class StreamPane(VerticalScroll):
    """The session's stream as cards, newest at the bottom (kept in view while it grows)."""

    DEFAULT_CSS = """
    StreamPane > SearchBar {
        dock: bottom;
    }
    """

    BINDINGS = [
        Binding(
            "enter",
            "toggle_card",
            "Unfold",
            id="stream.unfold-card",
            tooltip="Unfold the card under the cursor (the newest without one), or fold it",
        ),
        Binding(
            "o",
            "toggle_artifacts",
            "Unfold all",
            id="stream.unfold",
            tooltip="Unfold the artifacts shown (strategy, recipe, code), or fold them again",
            show=False,  # in the palette: an 80-column footer keeps the session's own keys
        ),
        Binding(
            "v",
            "view_text",
            "Full text",
            id="stream.full-text",
            tooltip="The whole text of the card under the cursor (or of the current match), "
            "paged and searchable",
            show=False,  # a folded card says `v shows them all`; in the palette too
        ),
        Binding(
            "y",
            "copy_card",
            "Copy",
            id="stream.copy-card",
            tooltip="Copy the card under the cursor (the newest without one), whole, as plain text",
            show=False,
        ),
        Binding(
            "slash",
            "search",
            "Search",
            id="stream.search",
            tooltip="Search the text of every card, folded output included",
        ),
        Binding(
            "n",
            "step_match(1)",
            "Next match",
            id="stream.next-match",
            tooltip="Go to the next match of the search",
        ),
        Binding(
            "N",
            "step_match(-1)",
            "Prev match",
            id="stream.previous-match",
            tooltip="Go to the previous match of the search",
        ),
        Binding(
            "escape",
            "clear_search",
            "Clear search",
            id="stream.clear-search",
            tooltip="Clear the search and its marks (Escape again goes back)",
        ),
        Binding(
            "e",
            "show_earlier",
            "Earlier",
            show=False,  # the pane's first line says it, where the earlier entries would be
            id="stream.earlier",
            tooltip="Show earlier timeline entries that are not mounted",
        ),
        Binding(
            "up",
            "cursor(-1)",
            "Previous card",
            id="stream.previous",
            tooltip="Move the cursor to the card above",
            show=False,
        ),
        Binding(
            "down",
            "cursor(1)",
            "Next card",
            id="stream.next",
            tooltip="Move the cursor to the card below",
            show=False,
        ),
        Binding(
            "end",
            "follow",
            "Follow",
            id="stream.follow",
            tooltip="Go to the end: drop the cursor and follow the newest card",
            show=False,
        ),
    ]

    def __init__(self, empty_text: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._empty_text = empty_text
        self._window = FIRST_WINDOW
        self._first = 0
        self._cards: list[Card] = []
        self._state: SessionState | None = None
        self._groups = StreamGroups()
        self._cursor: int | None = None
        """Stream index of the card under the cursor (None: following the newest)."""
        self._earlier = Static(classes="earlier")
        self._empty = Static(self._empty_text, classes="empty")
        self._ended = Static(classes="ended")
        self._search = StreamSearch(self, self._card_at)
        self._bar = self._search.bar

    def compose(self) -> ComposeResult:
        yield self._earlier
        yield self._empty
        yield self._ended
        yield self._bar

    @property
    def search_bar(self) -> SearchBar:
        return self._bar

    @property
    def matches(self) -> Matches:
        """The search's matches across the stream (blocks are stream indexes)."""
        return self._search.matches

    @property
    def card_count(self) -> int:
        """Cards mounted now."""
        return len(self._cards)

    @property
    def first_index(self) -> int:
        """Stream index of the first mounted card."""
        return self._first

    @property
    def cursor(self) -> int | None:
        """Stream index of the card under the cursor, or None while following the newest."""
        return self._cursor

    @property
    def cursor_card(self) -> Card | None:
        """The card under the cursor (None while following the newest)."""
        if self._cursor is None:
            return None
        return self._cards[self._cursor - self._first]

    def bindings_key(self) -> tuple[bool, ...]:
        """What this pane's keys depend on (the footer is rebuilt only when it changes)."""
        return (
            self._first > 0,
            self._cursor is not None,
            self._target() is not None,
            any(card.foldable for card in self._artifact_cards()),
            self._bar.is_open,
        )

    def action_copy_card(self) -> None:
        """Copy the card under the cursor (the newest without one) whole, as plain text."""
        if self._state is None:
            return
        stream = self.entries(self._state)
        if stream:
            entry = stream[self._cursor if self._cursor is not None else -1]
            copy_text(
                self.app, "\n".join(entry_lines(entry, self._session_end())), entry_title(entry)
            )

    def entries(self, state: SessionState) -> list[StreamEntry]:
        """The stream entries (one per card) of `state`."""
        return self._groups.entries(state)

    async def sync(self, state: SessionState) -> None:
        """Mount, drop and update cards so the pane shows the newest entries of `state`
        (nothing once the pane is leaving its screen)."""
        if not on_screen(self):
            return
        self._state = state
        stream = self._groups.entries(state)
        total = len(stream)
        if self._cursor is not None and self._cursor >= total:
            self._cursor = None
        first = first_mounted(total, self._window, WINDOW)
        if self._cursor is not None:
            first = min(first, self._cursor)
        end = self._first + len(self._cards)
        keep_from, keep_to = max(first, self._first), min(total, end)
        if keep_from >= keep_to:
            keep_from = keep_to = first
        stale = self._cards[: keep_from - self._first] + self._cards[keep_to - self._first :]
        kept = self._cards[keep_from - self._first : keep_to - self._first]
        if stale:
            await self.remove_children(stale)
        status = _Statuses(state)
        closed = None if state.status in OPEN_STATUSES else state.status
        for index, card in zip(range(keep_from, keep_to), kept, strict=True):
            entry = stream[index]
            card.closed = closed
            if isinstance(card, ArtifactCard):
                await card.show(entry, status(entry))  # type: ignore[arg-type]
            else:
                await card.show(entry)  # type: ignore[arg-type]
        before = [card_for(entry, state, closed) for entry in stream[first:keep_from]]
        after = [card_for(entry, state, closed) for entry in stream[keep_to:total]]
        ended = self._ended
        for card in before + after:
            card.closed = closed
        if not await mount_into(self, before, before=kept[0] if kept else ended):
            return
        if not await mount_into(self, after, before=ended):
            return
        self._cards = before + kept + after
        self._first = first
        self._mark_cursor()
        self._empty.display = total == 0
        ended.display = closed is not None and state.event_count > 0
        if ended.display:
            _update(ended, ended_content(state))
        earlier = self._earlier
        earlier.display = first > 0
        _update(
            earlier,
            Content(
                f"▲ {first} earlier entr{'ies' if first != 1 else 'y'} not shown · e shows more"
            ),
        )
        self.call_after_refresh(self._fit_anchor)

    def on_resize(self) -> None:
        """A pane made shorter (the message line grew) may overflow now: follow the newest."""
        self.call_after_refresh(self._fit_anchor)

    def watch_virtual_size(self) -> None:
        """Cards that grew after the last sync (a Markdown thought laid out later) may overflow
        the pane now: no resize says so, as the pane's own size did not change."""
        self.call_after_refresh(self._fit_anchor)

    def _fit_anchor(self) -> None:
        """Follow the newest card once the cards overflow the pane; short content stays on top.

        (An anchored pane bottom-aligns content that does not fill it.)
        """
        if self._cursor is not None:
            return
        window = grown_window(self, self._window, self._first, WINDOW)
        if window != self._window and self._state is not None:
            self._window = window
            self.call_later(self.sync, self._state)
            return
        # max_scroll_y comes from the sizes set with the last layout, as the anchor's scrolling
        # does; the on-screen region may still be the previous frame's.
        overflowing = self.max_scroll_y > 0
        if overflowing and not self.is_anchored:
            self.anchor()
        elif not overflowing and self.is_anchored:
            self.anchor(False)
            self.scroll_home(animate=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Cards wrap, so left/right never scroll here: leave those keys to the screen.
        if action in ("scroll_left", "scroll_right"):
            return self.allow_horizontal_scroll
        if action == "show_earlier":
            return self._first > 0
        if action == "toggle_artifacts":
            return any(card.foldable for card in self._artifact_cards())
        if action == "toggle_card":
            return self._target() is not None
        if action in ("step_match", "clear_search"):
            return self._bar.is_open
        if action == "search":  # in the input, `/` is text
            return not self._bar.has_focus_within
        if action == "view_text":
            return bool(self._cards)
        return True

    def _artifact_cards(self) -> list[ArtifactCard]:
        return [card for card in self._cards if isinstance(card, ArtifactCard)]

    def _target(self) -> ArtifactCard | GroupCard | StepCard | None:
        """The card Enter acts on: the one under the cursor (a step: when it leaves text out
        or has an image to open), else the newest foldable one."""
        if self._cursor is not None:
            card = self._cards[self._cursor - self._first]
            if isinstance(card, StepCard) and card.files.openable:
                return card
            foldable = isinstance(card, ArtifactCard | GroupCard | StepCard) and card.foldable
            return card if foldable else None  # type: ignore[return-value]
        for card in reversed(self._cards):
            if isinstance(card, ArtifactCard | GroupCard | StepCard) and card.foldable:
                return card
        return None

    async def action_toggle_card(self) -> None:
        card = self._target()
        if isinstance(card, StepCard) and not card.foldable:
            card.files.open_first()
        elif card is not None:
            await card.set_expanded(not card.expanded)
            if self._cursor is not None:
                card.scroll_visible(animate=False, top=True)

    async def action_cursor(self, delta: int) -> None:
        """Move the cursor `delta` cards (from the newest when there is none yet)."""
        if not self._cards or self._state is None:
            return
        last = self._first + len(self._cards) - 1
        start = last + 1 if self._cursor is None else self._cursor
        wanted = max(0, min(last, start + delta))
        if wanted < self._first:
            self._window += WINDOW
            self._cursor = wanted
            await self.sync(self._state)
        self._cursor = wanted
        self.anchor(False)
        self._mark_cursor()
        self._cards[wanted - self._first].scroll_visible(animate=False)
        self.refresh_bindings()

    def action_follow(self) -> None:
        """Drop the cursor and follow the newest card again."""
        self._cursor = None
        self._mark_cursor()
        self.scroll_end(animate=False)
        self.call_after_refresh(self._fit_anchor)
        self.refresh_bindings()

    def _mark_cursor(self) -> None:
        for index, card in enumerate(self._cards, start=self._first):
            card.set_class(index == self._cursor, "-cursor")

    async def action_toggle_artifacts(self) -> None:
        """Unfold every folded artifact shown; when none is folded, fold them all."""
        cards = [card for card in self._artifact_cards() if card.foldable]
        expand = not all(card.expanded for card in cards)
        for card in cards:
            await card.set_expanded(expand)

    async def action_show_earlier(self) -> None:
        if self._state is None:
            return
        self._window += WINDOW
        await self.sync(self._state)

    def action_view_text(self) -> None:
        """Show the whole text of the current match's card when the card leaves the match
        out, else of the card under the cursor (the newest without one)."""
        if self._state is None or not self._cards:
            return
        entries = self._groups.entries(self._state)
        hit = self._search.unshown_hit
        if hit is not None:
            index = hit.block
        else:
            index = self._cursor if self._cursor is not None else len(entries) - 1
        entry = entries[index]
        query = self._search.matches.query
        at = Hit(0, hit.line, hit.column) if hit is not None else None
        screen = OutputScreen(
            entry_title(entry), entry_lines(entry, self._session_end()), query, at
        )
        self.app.push_screen(screen)

    def _session_end(self) -> str | None:
        state = self._state
        return None if state is None or state.status in OPEN_STATUSES else state.status

    def action_search(self) -> None:
        """Open the search input (on the search's string, if there is one)."""
        self._bar.open()
        self.refresh_bindings()

    async def action_step_match(self, delta: int) -> None:
        await self._search.step(delta)
        self.refresh_bindings()

    async def action_clear_search(self) -> None:
        self._search.clear()
        self.refresh_bindings()

    @on(SearchBar.Changed)
    async def _searched(self, message: SearchBar.Changed) -> None:
        message.stop()
        if self._state is None:
            return
        entries = self._groups.entries(self._state)
        start = self._first if self._cursor is None else self._cursor
        await self._search.search(message.query, entries, self._session_end(), start)
        self.refresh_bindings()

    @on(SearchBar.Stepped)
    async def _stepped(self, message: SearchBar.Stepped) -> None:
        message.stop()
        await self.action_step_match(message.delta)

    @on(SearchBar.Left)
    def _search_left(self, message: SearchBar.Left) -> None:
        message.stop()
        self.focus()
        self.refresh_bindings()

    async def _card_at(self, index: int) -> Card | None:
        """The card of stream entry `index` under the cursor, mounted if need be (None: it
        is too far back to mount)."""
        if self._state is None or index < self._first - FARTHEST_JUMP:
            return None
        total = len(self._groups.entries(self._state))
        self._window = max(self._window, total - index)
        self._cursor = index
        if index < self._first:
            await self.sync(self._state)
        self.anchor(False)
        self._mark_cursor()
        return self._cards[index - self._first]
