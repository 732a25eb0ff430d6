"""`Store`: the sessions database (events, items, feedback, LLM calls) over aiosqlite."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from types import TracebackType
from typing import Any

import aiosqlite
from pydantic import ValidationError

from tui_agent.analysis.models import FieldFeedback
from tui_agent.events import Event, EventSchemaError, FeedbackSubmitted, ItemsExtracted, LLMCall
from tui_agent.session import SessionState, SessionSummary, fold
from tui_agent.store.connection import open_connection
from tui_agent.store.errors import SessionNotFound, StoreError
from tui_agent.store.jsonl import read_jsonl, write_lines
from tui_agent.store.rows import (
    APPEND_EVENT,
    APPEND_ITEM,
    INSERT_EVENT,
    INSERT_FEEDBACK,
    INSERT_ITEM,
    INSERT_LLM_CALL,
    INSERT_SESSION,
    SELECT_SUMMARY,
    event_items,
    event_row,
    feedback_rows,
    item_json,
    llm_call_row,
    load_event,
    row_summary,
    summary_row,
)

_DERIVING = (ItemsExtracted, FeedbackSubmitted, LLMCall)
"""Events that imply rows besides their own (items, feedback, llm_calls)."""
_PREFIX_END = "\U0010ffff"  # sorts after every character an id can hold


async def _fetch(conn: aiosqlite.Connection, sql: str, params: Sequence[Any] = ()) -> list[Any]:
    return list(await conn.execute_fetchall(sql, params))


class Store:
    """The sessions database. Open with `await Store.open(path)`; close when done.

    One connection serves all calls of a `Store`; a lock keeps each call's statements
    together, so a reader never sees half of an append. Other processes may read and write
    the same file at the same time (WAL).
    """

    def __init__(self, path: Path, conn: aiosqlite.Connection) -> None:
        self.path = path
        self._conn = conn
        self._lock = asyncio.Lock()

    @classmethod
    async def open(cls, path: Path | str) -> Store:
        """Open (creating the file and its folders if needed) and migrate the database."""
        path = Path(path).expanduser()
        return cls(path, await open_connection(path))

    async def close(self) -> None:
        async with self._lock:
            await self._conn.close()

    async def __aenter__(self) -> Store:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # -- plumbing -------------------------------------------------------------------------

    @asynccontextmanager
    async def _use(self) -> AsyncIterator[aiosqlite.Connection]:
        """The connection, held exclusively; SQLite errors become one-line StoreErrors."""
        async with self._lock:
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise StoreError(f"database {self.path}: {exc}") from None

    @asynccontextmanager
    async def _transaction(self, conn: aiosqlite.Connection) -> AsyncIterator[None]:
        """A write transaction: all of it is committed, or none of it."""
        await conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            await conn.execute("COMMIT")
        except BaseException:
            # A cancelled COMMIT may have gone through anyway: then there is nothing to undo.
            with suppress(sqlite3.OperationalError):
                await conn.execute("ROLLBACK")
            raise

    def _not_found(self, session_id: str) -> SessionNotFound:
        return SessionNotFound(
            f"no session {session_id!r} in {self.path} (try `tui-agent sessions list`)"
        )

    async def _require(self, conn: aiosqlite.Connection, session_id: str) -> None:
        if not await _fetch(conn, "SELECT 1 FROM sessions WHERE id = ?", (session_id,)):
            raise self._not_found(session_id)

    def _load(self, session_id: str, rows: Iterable[Sequence[Any]]) -> list[Event]:
        """Events from (seq, json) rows; an event this version cannot read is a StoreError."""
        events = []
        for seq, text in rows:
            try:
                events.append(load_event(text))
            except (EventSchemaError, ValidationError) as exc:
                reason = str(exc).splitlines()[0]
                raise StoreError(
                    f"session {session_id} event {seq} in {self.path} is unreadable: {reason}"
                ) from None
        return events

    async def _event_rows(
        self, conn: aiosqlite.Connection, session_id: str, after_seq: int = 0
    ) -> list[Any]:
        return await _fetch(
            conn,
            "SELECT seq, json FROM events WHERE session_id = ? AND seq > ? ORDER BY seq",
            (session_id, after_seq),
        )

    # -- writing --------------------------------------------------------------------------

    async def append(self, event: Event, summary: SessionSummary | None = None) -> None:
        """Record one stamped event, its derived rows and the session's summary row.

        One transaction, committed before this returns (durable against the process being
        killed right after). Without `summary`, the session's stored events plus this one
        are re-read and folded to make it, which costs O(session length) per call: bulk
        writers pass the summary (as SessionRunner does) or use `import_jsonl`. Seqs must
        run on without gaps: a gap or a repeat is refused.
        Cancelling the caller does not cancel an append under way: the event is still
        recorded, so the stored stream never falls behind the caller's seq.
        """
        if not event.session_id:
            raise StoreError("cannot append an event without a session_id (stamp it first)")
        if summary is not None and summary.session_id != event.session_id:
            raise StoreError(
                f"summary of session {summary.session_id!r} given for an event of "
                f"session {event.session_id!r}"
            )
        await asyncio.shield(self._append(event, summary))

    async def _append(self, event: Event, summary: SessionSummary | None) -> None:
        row = event_row(event)
        async with self._use() as conn:
            try:
                if summary is not None and not isinstance(event, _DERIVING):
                    # A single statement commits on its own (autocommit): one round trip.
                    await conn.execute(APPEND_EVENT, summary_row(summary) + row[1:])
                    return
                async with self._transaction(conn):
                    if summary is None:
                        stored = self._load(
                            event.session_id, await self._event_rows(conn, event.session_id)
                        )
                        summary = fold([*stored, event]).summary()
                    await conn.execute(APPEND_EVENT, summary_row(summary) + row[1:])
                    await self._write_derived(conn, event, row[4])
            except sqlite3.IntegrityError as exc:
                if "events seq gap" not in str(exc):
                    raise
                rows = await _fetch(
                    conn,
                    "SELECT coalesce(max(seq), 0) FROM events WHERE session_id = ?",
                    (event.session_id,),
                )
                raise StoreError(
                    f"cannot append event {event.seq} to session {event.session_id}: "
                    f"its last event is {rows[0][0]} (seqs are gap-free)"
                ) from None

    async def _write_derived(self, conn: aiosqlite.Connection, event: Event, text: str) -> None:
        """The items / feedback / llm_calls rows an event implies."""
        if isinstance(event, ItemsExtracted):
            if event.replace:
                await conn.execute("DELETE FROM items WHERE session_id = ?", (event.session_id,))
            await conn.executemany(
                APPEND_ITEM, [(event.session_id, item) for item in event_items(text)]
            )
        elif isinstance(event, FeedbackSubmitted):
            await conn.executemany(INSERT_FEEDBACK, feedback_rows(event))
        elif isinstance(event, LLMCall):
            await conn.execute(INSERT_LLM_CALL, llm_call_row(event))

    async def delete(self, session_id: str) -> None:
        """Remove the session and every row of it."""
        async with self._use() as conn:
            cursor = await conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
            if cursor.rowcount == 0:
                raise self._not_found(session_id)

    async def import_jsonl(self, path: Path) -> str:
        """Import an exported session file; returns its session id.

        All or nothing: a bad file raises `JsonlError` naming its first bad line, a session
        id already in the database raises `StoreError`, and nothing is written.
        """
        events = await asyncio.to_thread(read_jsonl, Path(path))
        session_id = events[0].session_id
        state = fold(events)
        async with self._use() as conn, self._transaction(conn):
            if await _fetch(conn, "SELECT 1 FROM sessions WHERE id = ?", (session_id,)):
                raise StoreError(
                    f"session {session_id} already exists in {self.path}; delete it first "
                    f"(`tui-agent sessions delete {session_id}`)"
                )
            await conn.execute(INSERT_SESSION, summary_row(state.summary()))
            await conn.executemany(INSERT_EVENT, [event_row(e) for e in events])
            await conn.executemany(
                INSERT_ITEM,
                [(session_id, i, item_json(item)) for i, item in enumerate(state.items)],
            )
            await conn.executemany(
                INSERT_FEEDBACK,
                [r for e in events if isinstance(e, FeedbackSubmitted) for r in feedback_rows(e)],
            )
            await conn.executemany(
                INSERT_LLM_CALL, [llm_call_row(e) for e in events if isinstance(e, LLMCall)]
            )
        return session_id

    # -- reading --------------------------------------------------------------------------

    async def list_sessions(self) -> list[SessionSummary]:
        """Every session's summary, newest first."""
        async with self._use() as conn:
            rows = await _fetch(conn, f"{SELECT_SUMMARY} ORDER BY started_at DESC, id")
        return [row_summary(row) for row in rows]

    async def resolve(self, id_or_prefix: str) -> str:
        """The full id of the one session whose id is or starts with `id_or_prefix`."""
        async with self._use() as conn:
            rows = await _fetch(
                conn,
                "SELECT id FROM sessions WHERE id >= ? AND id < ? ORDER BY id LIMIT 6",
                (id_or_prefix, id_or_prefix + _PREFIX_END),
            )
        ids = [row[0] for row in rows]
        if id_or_prefix in ids:
            return id_or_prefix
        if not ids or not id_or_prefix:
            raise self._not_found(id_or_prefix)
        if len(ids) > 1:
            shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
            raise StoreError(
                f"session id prefix {id_or_prefix!r} is ambiguous ({shown}); give more characters"
            )
        return ids[0]

    async def events(self, session_id: str, after_seq: int = 0) -> list[Event]:
        """The session's events with seq > `after_seq`, in seq order."""
        async with self._use() as conn:
            rows = await self._event_rows(conn, session_id, after_seq)
            if not rows:
                await self._require(conn, session_id)
        return self._load(session_id, rows)

    async def state(self, session_id: str) -> SessionState:
        """The session folded from its stored events."""
        return fold(await self.events(session_id))

    async def items(self, session_id: str, offset: int = 0, limit: int | None = None) -> list[Any]:
        """The session's items from index `offset`, at most `limit` of them."""
        async with self._use() as conn:
            rows = await _fetch(
                conn,
                "SELECT json FROM items WHERE session_id = ? AND idx >= ? ORDER BY idx LIMIT ?",
                (session_id, offset, -1 if limit is None else limit),  # LIMIT -1: no limit
            )
            if not rows:
                await self._require(conn, session_id)
        return [json.loads(row[0]) for row in rows]

    async def item_count(self, session_id: str) -> int:
        """How many items the session holds now."""
        async with self._use() as conn:
            rows = await _fetch(
                conn,
                "SELECT coalesce(max(idx) + 1, 0) FROM items WHERE session_id = ?",
                (session_id,),
            )
            if not rows[0][0]:
                await self._require(conn, session_id)
        return int(rows[0][0])

    async def feedback(self, session_id: str) -> list[FieldFeedback]:
        """Every field feedback given on the session, in the order it was submitted."""
        async with self._use() as conn:
            rows = await _fetch(
                conn,
                "SELECT json FROM feedback WHERE session_id = ? ORDER BY seq, position",
                (session_id,),
            )
            if not rows:
                await self._require(conn, session_id)
        return [FieldFeedback.model_validate_json(row[0]) for row in rows]

    async def export_jsonl(self, session_id: str, path: Path) -> int:
        """Write the session's stored events, one per line, to `path`; returns how many."""
        async with self._use() as conn:
            rows = await self._event_rows(conn, session_id)
            if not rows:
                await self._require(conn, session_id)
        return await asyncio.to_thread(write_lines, Path(path), (row[1] for row in rows))
