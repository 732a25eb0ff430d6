"""A batch session's state, folded from its BatchQueued and BatchItem events."""

from __future__ import annotations

from dataclasses import dataclass, field

from tui_agent.events import BatchItem, BatchQueued


@dataclass
class ItemState:
    """One item of a batch: what it is, its session, where it got to."""

    item: int
    label: str
    child: str
    state: str = "queued"
    """queued, started, finished, failed, retrying or cancelled."""
    status: str = ""
    """The child session's status once finished."""
    line: str = ""
    seconds: float = 0.0
    attempt: int = 0
    worker: str = ""
    passed: bool | None = None
    ended_at: float | None = None
    stored: bool = False
    """Its session is in the store (an item refused or lost before it ran has none)."""


@dataclass
class BatchState:
    """Every item of a batch, and the totals its progress bar, rate and ETA come from."""

    total: int = 0
    items: dict[int, ItemState] = field(default_factory=dict)
    first_start: float | None = None
    last_end: float | None = None

    def count(self, *states: str) -> int:
        return sum(1 for item in self.items.values() if item.state in states)

    @property
    def done(self) -> int:
        """Items that will not run again: finished or failed."""
        return self.count("finished", "failed")

    @property
    def failures(self) -> list[ItemState]:
        return [item for item in self.items.values() if item.state == "failed"]

    @property
    def rate(self) -> float | None:
        """Items done per second since the first started. While items are left, None until
        two are done a second or more apart from the start (one item refused at once says
        nothing of the rest); once all are done, the whole batch's, however short."""
        if self.first_start is None or self.last_end is None:
            return None
        elapsed = self.last_end - self.first_start
        if self.done == self.total and elapsed > 0:
            return self.done / elapsed
        return self.done / elapsed if self.done >= 2 and elapsed >= 1.0 else None

    def eta(self) -> float | None:
        """Seconds until every item is done at the rate so far; None when unknown."""
        rate = self.rate
        return None if rate is None else max(0, self.total - self.done) / rate

    def queued(self, e: BatchQueued) -> None:
        self.total = e.total
        for entry in e.entries:
            self.items[entry.item] = ItemState(entry.item, entry.label, entry.child)

    def changed(self, e: BatchItem) -> None:
        item = self.items.get(e.item)
        if item is None:
            item = self.items[e.item] = ItemState(e.item, str(e.item), e.child)
        item.state = e.state
        item.attempt = max(item.attempt, e.attempt)
        item.worker = e.worker or item.worker
        if e.state == "started":
            self.first_start = e.ts if self.first_start is None else self.first_start
            return
        item.status, item.line, item.seconds, item.passed = e.status, e.line, e.seconds, e.passed
        if e.state in ("finished", "failed"):
            item.stored = bool(e.child)
            item.ended_at = e.ts
            self.last_end = e.ts
