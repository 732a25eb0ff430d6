"""What the stream pane shows: a session's timeline with its tool calls grouped into cards.

A phase and the calls made in it (a planner's probes, a recipe's set-up commands) are one
card; in a recipe run, the commands of one list item (CLICK, WAIT_FOR, EXTRACT_DETAILS, SAVE,
MARK_DONE) are one card per item. Info logs written between those calls fold into the same
card. Every other timeline entry is shown as it is. No widgets here.

`StreamGroups.entries(state)` is incremental: the fold only ever appends to a timeline, so
only the entries added since the last call are grouped (a different or shorter timeline, as
after a replay steps back, is grouped again from the start).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tui_agent.events import Log
from tui_agent.session import PhaseState, SessionState, TimelineEntry, ToolCallState

FOLDED_LEVELS = ("debug", "info")
"""Log levels folded into a call group; warnings and errors stay cards of their own."""


@dataclass(eq=False)
class CallGroup:
    """Tool calls made one after another in one phase for one list item (`item` > 0), or
    outside any item (`item` 0); `phase` is set when the group opens that phase's card.

    `entries` are the calls and the info logs, in order.
    """

    phase_name: str
    item: int = 0
    phase: PhaseState | None = None
    entries: list[ToolCallState | Log] = field(default_factory=list)

    @property
    def calls(self) -> list[ToolCallState]:
        return [entry for entry in self.entries if isinstance(entry, ToolCallState)]

    @property
    def failed(self) -> int:
        """Calls that ended in failure."""
        return sum(1 for call in self.calls if call.result is not None and not call.result.ok)

    @property
    def waiting(self) -> bool:
        """Whether a call still waits for its result."""
        return any(call.result is None for call in self.calls)

    @property
    def duration(self) -> float:
        """Seconds the calls took, added up."""
        return sum(call.result.duration for call in self.calls if call.result is not None)

    @property
    def single(self) -> bool:
        """A lone call outside any phase: shown as one tool call, not as a group."""
        return self.phase is None and not self.phase_name and len(self.entries) == 1

    def key(self) -> tuple[object, ...]:
        """Changes whenever something the card shows changed."""
        phase = self.phase
        results = tuple(
            entry.result if isinstance(entry, ToolCallState) else entry for entry in self.entries
        )
        return (phase.finished if phase else None, len(self.entries), results)


StreamEntry = TimelineEntry | CallGroup
"""One card of the stream pane."""


class StreamGroups:
    """The stream pane's entries for a session state, grouped as the timeline grows."""

    def __init__(self) -> None:
        self._timeline: list[TimelineEntry] | None = None
        self._seen = 0
        self._entries: list[StreamEntry] = []

    def entries(self, state: SessionState) -> list[StreamEntry]:
        """The cards' entries for `state`, oldest first (the list is shared: do not change it)."""
        timeline = state.timeline
        if timeline is not self._timeline or len(timeline) < self._seen:
            self._timeline, self._seen, self._entries = timeline, 0, []
        for entry in timeline[self._seen :]:
            self._add(entry)
        self._seen = len(timeline)
        return self._entries

    def _add(self, entry: TimelineEntry) -> None:
        last = self._entries[-1] if self._entries else None
        if isinstance(entry, PhaseState):
            self._entries.append(CallGroup(entry.name, phase=entry))
        elif isinstance(entry, ToolCallState):
            item = (entry.call.recipe_item or 0) if entry.phase else 0
            if (
                isinstance(last, CallGroup)
                and entry.phase
                and (last.phase_name, last.item) == (entry.phase, item)
            ):
                last.entries.append(entry)
            else:
                self._entries.append(CallGroup(entry.phase, item, entries=[entry]))
        elif (
            isinstance(entry, Log)
            and entry.level in FOLDED_LEVELS
            and isinstance(last, CallGroup)
            and last.phase_name
        ):
            last.entries.append(entry)
        else:
            self._entries.append(entry)
