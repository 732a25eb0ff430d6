"""The stream pane: one card per stream entry of a session, updated in place.

Entries are the timeline with tool calls grouped (stream_groups.py): a phase with its probes,
one card per list item with its commands. `sync(state)` brings the pane up to date with any
SessionState — the next one of a live session, the same one after an event was applied, or
a fresh re-fold. Only the newest `window` entries are mounted (a long session would
otherwise mount thousands of widgets); `e` shows more of the earlier ones, `o` unfolds (or
folds) the artifacts shown. Up and down move a cursor over the cards (the pane follows the
newest card again at `end`); Enter unfolds the card under it.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from tui_agent.events import OPEN_STATUSES, Artifact, VersionDecided
from tui_agent.session import SessionState, StepState
from tui_agent.tui.stream_groups import CallGroup, StreamEntry, StreamGroups
from tui_agent.tui.widgets.artifact_card import (
    ArtifactCard,
    ArtifactStatus,
    artifact_status,
    decisions,
)
from tui_agent.tui.widgets.entry_cards import CARD_KINDS, EntryCard
from tui_agent.tui.widgets.group_card import GroupCard
from tui_agent.tui.widgets.mounting import mount_into, on_screen
from tui_agent.tui.widgets.status_line import STATUS_STYLES
from tui_agent.tui.widgets.step_card import StepCard

WINDOW = 30
"""Timeline entries mounted at first; `e` adds this many more each time."""

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
        ),
        Binding(
            "e",
            "show_earlier",
            "Earlier",
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
            tooltip="Drop the cursor and follow the newest card",
            show=False,
        ),
    ]

    def __init__(self, empty_text: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._empty_text = empty_text
        self._window = WINDOW
        self._first = 0
        self._cards: list[Card] = []
        self._state: SessionState | None = None
        self._groups = StreamGroups()
        self._cursor: int | None = None
        """Stream index of the card under the cursor (None: following the newest)."""
        self._earlier = Static(classes="earlier")
        self._empty = Static(self._empty_text, classes="empty")
        self._ended = Static(classes="ended")

    def compose(self) -> ComposeResult:
        yield self._earlier
        yield self._empty
        yield self._ended

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
        first = max(0, total - self._window)
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
        if action == "follow":
            return self._cursor is not None
        return True

    def _artifact_cards(self) -> list[ArtifactCard]:
        return [card for card in self._cards if isinstance(card, ArtifactCard)]

    def _target(self) -> ArtifactCard | GroupCard | StepCard | None:
        """The card Enter acts on: the one under the cursor (a step: when it has an image to
        open), else the newest foldable one."""
        if self._cursor is not None:
            card = self._cards[self._cursor - self._first]
            if isinstance(card, StepCard):
                return card if card.files.openable else None
            foldable = isinstance(card, ArtifactCard | GroupCard) and card.foldable
            return card if foldable else None  # type: ignore[return-value]
        for card in reversed(self._cards):
            if isinstance(card, ArtifactCard | GroupCard) and card.foldable:
                return card
        return None

    async def action_toggle_card(self) -> None:
        card = self._target()
        if isinstance(card, StepCard):
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
