"""What recording appended events writes, as SQL statements (pure, no database).

Each append upserts its session's summary row and inserts its event (`APPEND_EVENT`); some
events also imply rows elsewhere (items, feedback, LLM calls) or change who owns the session.
A batch inserts all its events first, then those other statements grouped by table.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tui_agent.events import (
    OPEN_STATUSES,
    Event,
    FeedbackSubmitted,
    ItemsExtracted,
    LLMCall,
    SessionEnded,
    TaskResult,
)
from tui_agent.session import SessionSummary
from tui_agent.store.owners import CLAIM, RELEASE, Owner
from tui_agent.store.rows import (
    APPEND_ITEM,
    DELETE_ITEMS,
    INSERT_CHAIN_OF_WORK,
    INSERT_FEEDBACK,
    INSERT_LLM_CALL,
    chain_of_work_row,
    event_items,
    event_row,
    feedback_rows,
    llm_call_row,
    summary_row,
)

Statement = tuple[str, list[tuple[Any, ...]]]
"""SQL and the parameter rows it runs with (one `executemany`)."""

_TABLE_OF = {
    DELETE_ITEMS: 0,
    APPEND_ITEM: 0,
    INSERT_FEEDBACK: 1,
    INSERT_LLM_CALL: 2,
    CLAIM: 3,
    RELEASE: 3,
    INSERT_CHAIN_OF_WORK: 4,
}
"""Statements touching the same table keep their order; different tables are independent."""


@dataclass(frozen=True)
class Append:
    """One stamped event to record, its session's summary with it (None: fold to get it) and
    its events row (the event's JSON, serialized once)."""

    event: Event
    summary: SessionSummary | None
    row: tuple[str, int, str, float, str]

    @classmethod
    def of(cls, event: Event, summary: SessionSummary | None) -> Append:
        return cls(event, summary, event_row(event))

    @property
    def session_id(self) -> str:
        return self.event.session_id

    @property
    def json(self) -> str:
        """The event as stored."""
        return self.row[4]

    def event_params(self, summary: SessionSummary) -> tuple[Any, ...]:
        """Parameters of `APPEND_EVENT`: the summary row, then the event row."""
        return summary_row(summary) + self.row[1:]


def derived_statements(event: Event, text: str) -> list[Statement]:
    """The items / feedback / llm_calls / chain_of_work rows an event implies (`text`: its
    stored JSON)."""
    if isinstance(event, ItemsExtracted):
        items: list[tuple[Any, ...]] = [(event.session_id, item) for item in event_items(text)]
        append = (APPEND_ITEM, items)
        return [(DELETE_ITEMS, [(event.session_id,)]), append] if event.replace else [append]
    if isinstance(event, FeedbackSubmitted):
        return [(INSERT_FEEDBACK, feedback_rows(event))]
    if isinstance(event, LLMCall):
        return [(INSERT_LLM_CALL, [llm_call_row(event)])]
    if isinstance(event, TaskResult):
        return [(INSERT_CHAIN_OF_WORK, [chain_of_work_row(event)])]
    return []


def owner_statements(
    event: Event, summary: SessionSummary, owner: Owner, claimed: set[str]
) -> list[Statement]:
    """Claim a running session for `owner` on its first append here (`claimed`: the sessions
    it owns already, updated); a SessionEnded releases the session from every owner."""
    session_id = event.session_id
    if isinstance(event, SessionEnded):
        claimed.discard(session_id)
        return [(RELEASE, [(session_id,)])]
    if summary.status in OPEN_STATUSES and session_id not in claimed:
        claimed.add(session_id)
        return [(CLAIM, [(session_id, *owner.row())])]
    return []


def grouped(statements: Iterable[Statement]) -> list[Statement]:
    """`statements` reordered by table (each table's in order) with runs of the same SQL
    merged, so a batch runs a handful of `executemany` calls, not one call per event."""
    out: list[Statement] = []
    for sql, params in sorted(statements, key=lambda statement: _TABLE_OF[statement[0]]):
        if out and out[-1][0] == sql:
            out[-1][1].extend(params)
        else:
            out.append((sql, list(params)))
    return out
