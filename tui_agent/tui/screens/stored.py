"""Which screen shows a recorded session: a batch's on the batch screen, any other on the
session screen; replayed, on the replay screen of either."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from textual.screen import Screen

from tui_agent.events import Event, SessionStarted
from tui_agent.session import fold
from tui_agent.store import Store
from tui_agent.tui.batch.replay import BatchReplayScreen
from tui_agent.tui.batch.screen import BatchScreen
from tui_agent.tui.replay import Replay
from tui_agent.tui.screens.replay import ReplayScreen
from tui_agent.tui.screens.session import SessionScreen


def is_batch(events: Sequence[Event]) -> bool:
    first = events[0] if events else None
    return isinstance(first, SessionStarted) and first.kind == "batch"


def stored_screen(
    store: Store | None,
    events: Sequence[Event],
    mode: Literal["stored", "replay"],
    *,
    clock: Callable[[], float],
) -> Screen[None]:
    """The screen of the session `events` recorded: as it ended (`stored`) or played back.

    `events` are display copies (`Store.display_events`, or `visible_event` of each)."""
    if mode == "replay":
        replay = Replay(events)
        if is_batch(events):
            return BatchReplayScreen(store, replay, clock=clock)
        return ReplayScreen(store, replay, clock=clock)
    state = fold(events)
    if state.kind == "batch":
        return BatchScreen(store, state, clock=clock)
    return SessionScreen(store, state, clock=clock)
