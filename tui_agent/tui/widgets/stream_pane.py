"""The stream pane: one card per timeline entry of a session, updated in place.

`sync(state)` brings the pane up to date with any SessionState — the next one of a live
session, the same one after an event was applied, or a fresh re-fold. Only the newest
`window` entries are mounted (a long session would otherwise mount thousands of widgets);
`e` shows more of the earlier ones, `o` unfolds (or folds) the artifacts shown.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from tui_agent.events import Artifact, VersionDecided
from tui_agent.session import SessionState, StepState
from tui_agent.tui.widgets.artifact_card import (
    ArtifactCard,
    ArtifactStatus,
    artifact_status,
    decisions,
)
from tui_agent.tui.widgets.entry_cards import CARD_KINDS, EntryCard
from tui_agent.tui.widgets.step_card import StepCard

WINDOW = 30
"""Timeline entries mounted at first; `e` adds this many more each time."""

Card = StepCard | EntryCard | ArtifactCard


class _Statuses:
    """Artifact statuses of one state, with its decisions collected on first use."""

    def __init__(self, state: SessionState) -> None:
        self._state = state
        self._decided: dict[tuple[str, int], VersionDecided] | None = None

    def __call__(self, artifact: Artifact) -> ArtifactStatus:
        if self._decided is None:
            self._decided = decisions(self._state)
        return artifact_status(artifact, self._decided, self._state.current_versions)


def card_for(entry: Any, state: SessionState) -> Card:
    """A new card for a timeline entry of `state`."""
    if isinstance(entry, StepState):
        return StepCard(entry)
    if isinstance(entry, Artifact):
        return ArtifactCard(entry, _Statuses(state)(entry))
    return EntryCard(entry, CARD_KINDS[type(entry)])


class StreamPane(VerticalScroll):
    """The session's timeline as cards, newest at the bottom (kept in view while it grows)."""

    BINDINGS = [
        Binding(
            "e",
            "show_earlier",
            "Earlier",
            id="stream.earlier",
            tooltip="Show earlier timeline entries that are not mounted",
            show=False,
        ),
        Binding(
            "o",
            "toggle_artifacts",
            "Unfold",
            id="stream.unfold",
            tooltip="Unfold the artifacts shown (strategy, recipe, code), or fold them again",
        ),
    ]

    def __init__(self, empty_text: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._empty_text = empty_text
        self._window = WINDOW
        self._first = 0
        self._cards: list[Card] = []
        self._state: SessionState | None = None

    def compose(self) -> ComposeResult:
        yield Static(classes="earlier")
        yield Static(self._empty_text, classes="empty")

    @property
    def card_count(self) -> int:
        """Cards mounted now."""
        return len(self._cards)

    @property
    def first_index(self) -> int:
        """Timeline index of the first mounted card."""
        return self._first

    async def sync(self, state: SessionState) -> None:
        """Mount, drop and update cards so the pane shows the newest entries of `state`."""
        self._state = state
        timeline = state.timeline
        total = len(timeline)
        first = max(0, total - self._window)
        end = self._first + len(self._cards)
        keep_from, keep_to = max(first, self._first), min(total, end)
        if keep_from >= keep_to:
            keep_from = keep_to = first
        stale = self._cards[: keep_from - self._first] + self._cards[keep_to - self._first :]
        kept = self._cards[keep_from - self._first : keep_to - self._first]
        if stale:
            await self.remove_children(stale)
        status = _Statuses(state)
        for index, card in zip(range(keep_from, keep_to), kept, strict=True):
            entry = timeline[index]
            if isinstance(card, ArtifactCard):
                await card.show(entry, status(entry))
            else:
                await card.show(entry)
        before = [card_for(entry, state) for entry in timeline[first:keep_from]]
        after = [card_for(entry, state) for entry in timeline[keep_to:total]]
        if before:
            await self.mount_all(before, before=kept[0] if kept else None)
        if after:
            await self.mount_all(after)
        self._cards = before + kept + after
        self._first = first
        self.query_one(".empty").display = total == 0
        earlier = self.query_one(".earlier", Static)
        earlier.display = first > 0
        earlier.update(
            f"▲ {first} earlier entr{'ies' if first != 1 else 'y'} not shown · e shows more"
        )
        self.call_after_refresh(self._fit_anchor)

    def _fit_anchor(self) -> None:
        """Follow the newest card once the cards overflow the pane; short content stays on top.

        (An anchored pane bottom-aligns content that does not fill it.)
        """
        overflowing = self.virtual_size.height > self.scrollable_content_region.height
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
        return True

    def _artifact_cards(self) -> list[ArtifactCard]:
        return [card for card in self._cards if isinstance(card, ArtifactCard)]

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
