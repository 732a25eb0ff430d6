"""The replay controller: a position in a recorded event list, its folded state and its clock.

No widgets here. Moving forward applies only the new events to the current state; moving
backward re-folds from the start (the fold has no undo). The events are display copies
(`terminal_text.visible_event`, as `Store.display_events` loads them). The recorded gaps
between events, capped and divided by the speed, say how long to wait before the next event
while playing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from tui_agent.events import Event
from tui_agent.session import SessionState, fold

SPEEDS: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
"""Playback speeds that `faster` / `slower` step through."""

MAX_GAP = 2.0
"""Longest recorded gap (seconds) waited for at 1x; longer pauses are cut to this."""


@dataclass(frozen=True)
class ReplayMove:
    """What a move did: the events applied to the state, or a re-fold from the start."""

    applied: list[Event] = field(default_factory=list)
    refolded: bool = False

    @property
    def changed(self) -> bool:
        return self.refolded or bool(self.applied)


def format_speed(speed: float) -> str:
    """`2x`, `0.5x`, `0.25x`."""
    return f"{speed:g}x"


class Replay:
    """A position in `events` (0 = nothing applied, len(events) = all) and the state there.

    `events` are display copies (their controls drawn, not acted on); `state` always equals
    `fold(events[:position])`.
    """

    def __init__(
        self, events: Sequence[Event], *, speed: float = 1.0, max_gap: float = MAX_GAP
    ) -> None:
        if speed not in SPEEDS:
            raise ValueError(f"speed must be one of {', '.join(map(format_speed, SPEEDS))}")
        self._events = list(events)
        self.speed = speed
        self.max_gap = max_gap
        self.position = 0
        self.state = SessionState()

    @property
    def total(self) -> int:
        return len(self._events)

    @property
    def first(self) -> Event | None:
        """The first event (None: there are no events)."""
        return self._events[0] if self._events else None

    @property
    def session_id(self) -> str:
        return self._events[0].session_id if self._events else ""

    @property
    def at_end(self) -> bool:
        return self.position >= self.total

    @property
    def indicator(self) -> str:
        """`event 12/80 · 2x`."""
        return f"event {self.position}/{self.total} · {format_speed(self.speed)}"

    def seek(self, position: int) -> ReplayMove:
        """Move to `position` (clamped): forward applies the new events, backward re-folds."""
        position = max(0, min(position, self.total))
        if position == self.position:
            return ReplayMove()
        if position > self.position:
            applied = self._events[self.position : position]
            apply = self.state.apply
            for event in applied:
                apply(event)
            self.position = position
            return ReplayMove(applied=applied)
        self.state = fold(self._events[:position])
        self.position = position
        return ReplayMove(refolded=True)

    def forward(self, count: int = 1) -> ReplayMove:
        return self.seek(self.position + count)

    def back(self, count: int = 1) -> ReplayMove:
        return self.seek(self.position - count)

    def home(self) -> ReplayMove:
        return self.seek(0)

    def end(self) -> ReplayMove:
        return self.seek(self.total)

    def faster(self) -> float:
        """Next speed up (stays at the fastest)."""
        index = SPEEDS.index(self.speed)
        self.speed = SPEEDS[min(index + 1, len(SPEEDS) - 1)]
        return self.speed

    def slower(self) -> float:
        """Next speed down (stays at the slowest)."""
        index = SPEEDS.index(self.speed)
        self.speed = SPEEDS[max(index - 1, 0)]
        return self.speed

    def delay(self, index: int | None = None) -> float | None:
        """Seconds to wait before event `index` (default: the next one); None past the end.

        The recorded gap to the event before it, capped at `max_gap`, divided by the speed.
        """
        index = self.position if index is None else index
        if index >= self.total:
            return None
        if index == 0:
            return 0.0
        gap = self._events[index].ts - self._events[index - 1].ts
        return min(max(gap, 0.0), self.max_gap) / self.speed

    def advance(self, frame: float) -> ReplayMove:
        """Apply the next event and any after it that fall due within `frame` seconds.

        Playing calls this from one timer: events recorded closer together than a frame
        (streamed thought tokens) are applied as one batch instead of one timer each.
        """
        if self.at_end:
            return ReplayMove()
        end = self.position + 1
        waited = 0.0
        while end < self.total:
            gap = self.delay(end)
            assert gap is not None
            waited += gap
            if waited > frame:
                break
            end += 1
        return self.seek(end)
