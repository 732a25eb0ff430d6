"""Conversions between events / summaries and table rows (pure, no database)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from tui_agent.events import (
    EVENT_ADAPTER,
    SCHEMA_VERSION,
    Event,
    EventSchemaError,
    FeedbackSubmitted,
    LLMCall,
    TaskResult,
    dump_event,
    parse_event,
)
from tui_agent.session import SessionSummary
from tui_agent.store.errors import StoreError
from tui_agent.terminal_text import json_may_be_unsafe, visible_event

SUMMARY_COLUMNS = (
    "id",
    "kind",
    "title",
    "status",
    "model",
    "started_at",
    "ended_at",
    "duration",
    "step_count",
    "item_count",
    "prompt_tokens",
    "completion_tokens",
    "cost",
    "cost_complete",
    "event_count",
    "stopped_reason",
    "parent",
    "batch",
)

INSERT_SESSION = (
    f"INSERT INTO sessions ({', '.join(SUMMARY_COLUMNS)})"
    f" VALUES ({', '.join('?' * len(SUMMARY_COLUMNS))})"
)
APPEND_EVENT = (
    f"INSERT INTO events_with_session ({', '.join(SUMMARY_COLUMNS)}, seq, type, ts, json)"
    f" VALUES ({', '.join('?' * (len(SUMMARY_COLUMNS) + 4))})"
)
"""Upsert the summary row and insert the event in one statement; parameters: the summary
row, then the event row without its session_id (see the migration)."""
SELECT_SUMMARY = f"SELECT {', '.join(SUMMARY_COLUMNS)} FROM sessions"
SELECT_EVENTS = "SELECT seq, json FROM events WHERE session_id = ? AND seq > ? ORDER BY seq"
"""(seq, json) of a session's events after a seq, in order; parameters: session id, seq."""


def summary_row(summary: SessionSummary) -> tuple[Any, ...]:
    """The sessions row of a summary, in `SUMMARY_COLUMNS` order."""
    s = summary
    return (
        s.session_id,
        s.kind,
        s.title,
        s.status,
        s.model,
        s.started_at,
        s.ended_at,
        s.duration,
        s.step_count,
        s.item_count,
        s.prompt_tokens,
        s.completion_tokens,
        s.cost,
        int(s.cost_complete),
        s.event_count,
        s.stopped_reason,
        s.parent,
        s.batch,
    )


def row_summary(row: Sequence[Any]) -> SessionSummary:
    """The summary of a sessions row selected with `SELECT_SUMMARY`."""
    values = dict(zip(SUMMARY_COLUMNS, row, strict=True))
    values["session_id"] = values.pop("id")
    values["cost_complete"] = bool(values["cost_complete"])
    return SessionSummary(**values)


INSERT_EVENT = "INSERT INTO events (session_id, seq, type, ts, json) VALUES (?, ?, ?, ?, ?)"
APPEND_ITEM = (
    "INSERT INTO items (session_id, idx, json)"
    " SELECT ?1, coalesce(max(idx) + 1, 0), ?2 FROM items WHERE session_id = ?1"
)
"""Add an item after the session's last one; parameters: session id, item JSON."""
DELETE_ITEMS = "DELETE FROM items WHERE session_id = ?"
INSERT_ITEM = "INSERT INTO items (session_id, idx, json) VALUES (?, ?, ?)"
INSERT_FEEDBACK = (
    "INSERT INTO feedback (session_id, seq, position, field, issue, json) VALUES (?, ?, ?, ?, ?, ?)"
)
INSERT_LLM_CALL = (
    "INSERT INTO llm_calls (session_id, seq, model, prompt_tokens, completion_tokens, cost,"
    " latency, cached, purpose, step) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


INSERT_CHAIN_OF_WORK = (
    "INSERT INTO chain_of_work (session_id, seq, node_id, node_type, code_executed,"
    " input_context, output_result, execution_time, status, error_message, ai_metadata,"
    " timestamp) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
CHAIN_OF_WORK_COLUMNS = (
    "node_id",
    "node_type",
    "code_executed",
    "input_context",
    "output_result",
    "execution_time",
    "status",
    "error_message",
    "ai_metadata",
    "timestamp",
)
SELECT_CHAIN_OF_WORK = (
    f"SELECT {', '.join(CHAIN_OF_WORK_COLUMNS)} FROM chain_of_work WHERE session_id = ?"
    " ORDER BY seq"
)
METADATA_KEY = "_ai_metadata"


def chain_of_work_row(event: TaskResult) -> tuple[Any, ...]:
    """The chain_of_work row of a task's result: the code it ran, its input and output (the
    context without `_ai_metadata`), and the metadata as JSON."""
    metadata = event.context.get(METADATA_KEY) or {}
    output = {key: value for key, value in event.context.items() if key != METADATA_KEY}
    total_ms = metadata.get("total_time_ms") or 0
    return (
        event.session_id,
        event.seq,
        event.node,
        event.node_type,
        str(metadata.get("generated_code") or ""),
        item_json(event.input_context),
        item_json(output),
        float(total_ms) / 1000,
        event.status,
        metadata.get("final_error"),
        item_json(metadata),
        event.ts,
    )


def chain_of_work_record(row: Sequence[Any]) -> dict[str, Any]:
    """A chain_of_work row selected with SELECT_CHAIN_OF_WORK, its JSON columns parsed."""
    record = dict(zip(CHAIN_OF_WORK_COLUMNS, row, strict=True))
    for column in ("input_context", "output_result", "ai_metadata"):
        record[column] = json.loads(record[column])
    return record


def event_row(event: Event) -> tuple[str, int, str, float, str]:
    """The events row: the stored JSON is exactly `dump_event(event)`."""
    return (event.session_id, event.seq, event.type, event.ts, dump_event(event))


def feedback_rows(event: FeedbackSubmitted) -> list[tuple[Any, ...]]:
    """One feedback row per field feedback of the event, in order."""
    return [
        (event.session_id, event.seq, i, f.field, f.issue, f.model_dump_json())
        for i, f in enumerate(event.feedback)
    ]


def llm_call_row(event: LLMCall) -> tuple[Any, ...]:
    """The llm_calls row of the event (cost stays NULL when unknown)."""
    e = event
    return (
        e.session_id,
        e.seq,
        e.model,
        e.prompt_tokens,
        e.completion_tokens,
        e.cost,
        e.latency,
        int(e.cached),
        e.purpose,
        e.step,
    )


def item_json(item: Any) -> str:
    """The stored text of one item (a JSON-safe value, as found in an event's JSON)."""
    return json.dumps(item, ensure_ascii=False, separators=(",", ":"))


def event_items(event_json: str) -> list[str]:
    """The stored texts of an ItemsExtracted event's items, taken from its stored JSON."""
    return [item_json(item) for item in json.loads(event_json)["items"]]


def load_event(text: str) -> Event:
    """An event from its stored JSON (fast path; a newer schema is still refused)."""
    try:
        event = EVENT_ADAPTER.validate_json(text)
    except ValidationError:
        return parse_event(text)  # raises the precise error (EventSchemaError included)
    if event.schema_version > SCHEMA_VERSION:
        return parse_event(text)
    return event


def load_display_event(text: str) -> Event:
    """The display copy (`visible_event`) of an event, from its stored JSON; the event itself
    when the JSON shows no unsafe character (most are: no walk through its values)."""
    event = load_event(text)
    return visible_event(event) if json_may_be_unsafe(text) else event


def load_events(
    path: Path, session_id: str, rows: Iterable[Sequence[Any]], *, display: bool = False
) -> list[Event]:
    """Events (their display copies when `display`) from stored (seq, json) rows; one this
    version cannot read is a StoreError."""
    events = []
    load = load_display_event if display else load_event
    for seq, text in rows:
        try:
            events.append(load(text))
        except (EventSchemaError, ValidationError) as exc:
            reason = str(exc).splitlines()[0]
            raise StoreError(
                f"session {session_id} event {seq} in {path} is unreadable: {reason}"
            ) from None
    return events
