"""`Store`: the sessions database (events, items, feedback, LLM calls) over aiosqlite."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

import aiosqlite

from tui_agent.analysis.shapes import FieldFeedback
from tui_agent.events import Event, FeedbackSubmitted, LLMCall, TaskResult
from tui_agent.session import SessionState, SessionSummary, fold
from tui_agent.store.appends import Append
from tui_agent.store.connection import open_connection
from tui_agent.store.errors import SessionExists, SessionNotFound, StoreError
from tui_agent.store.jsonl import MAX_FILE_MB, parse_jsonl, read_jsonl, write_lines
from tui_agent.store.queries import event_rows, fetch, write_transaction
from tui_agent.store.rows import (
    INSERT_CHAIN_OF_WORK,
    INSERT_EVENT,
    INSERT_FEEDBACK,
    INSERT_ITEM,
    INSERT_LLM_CALL,
    INSERT_SESSION,
    SELECT_CHAIN_OF_WORK,
    SELECT_SUMMARY,
    chain_of_work_record,
    chain_of_work_row,
    event_row,
    feedback_rows,
    item_json,
    llm_call_row,
    load_events,
    row_summary,
    summary_row,
)
from tui_agent.store.writer import AppendWriter

_PREFIX_END = "\U0010ffff"  # sorts after every character an id can hold
SHORT_ID = 8
"""How many characters of an id `sessions list` shows: no two sessions may share them."""
IMPORTED_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
"""The ids an imported session may have (recorded ones are 12 hex digits)."""


class Store:
    """The sessions database. Open with `await Store.open(path)`; close when done.

    Appends are group-committed by a writer with its own connection (writer.py): those that
    arrive while a commit runs share the next transaction. Every other call goes through one
    connection, held by one call at a time. Readers see only committed transactions, so
    never half of an append. Other processes may read and write the same file at the same
    time (WAL).
    """

    def __init__(self, path: Path, conn: aiosqlite.Connection, writer: AppendWriter) -> None:
        self.path = path
        self._conn = conn
        self._lock = asyncio.Lock()
        self._writer = writer

    @classmethod
    async def open(cls, path: Path | str) -> Store:
        """Open (creating the file and its folders if needed) and migrate the database.

        Sessions left "running" by a process that is gone are ended as "interrupted" here.
        """
        path = Path(path).expanduser()
        conn = await open_connection(path)
        try:
            writer = await AppendWriter.open(path)
        except BaseException:
            await conn.close()
            raise
        return cls(path, conn, writer)

    async def close(self) -> None:
        """Write what is queued, then close the connections."""
        await self._writer.close()
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

    def _not_found(self, session_id: str) -> SessionNotFound:
        return SessionNotFound(
            f"no session {session_id!r} in {self.path} (try `tui-agent sessions list`)"
        )

    async def _require(self, conn: aiosqlite.Connection, session_id: str) -> None:
        if not await fetch(conn, "SELECT 1 FROM sessions WHERE id = ?", (session_id,)):
            raise self._not_found(session_id)

    # -- writing --------------------------------------------------------------------------

    async def append(self, event: Event, summary: SessionSummary | None = None) -> None:
        """Record one stamped event, its derived rows and the session's summary row.

        Committed before this returns (durable against the process being killed right
        after), in a transaction it may share with appends made meanwhile. Without `summary`,
        the session's stored events plus this one are re-read and folded to make it, which
        costs O(session length) per call: bulk writers pass the summary (as SessionRecorder
        does) or use `import_jsonl`. Seqs must run on without gaps: a gap or a repeat is
        refused. The first append to a running session records this process as its owner
        (owners.py); its SessionEnded forgets the owners.
        Cancelling the caller does not cancel an append under way: the event is still
        recorded, so the stored stream never falls behind the caller's seq.
        """
        await self._writer.submit([self._checked(event, summary)])[0]

    async def append_many(self, records: Iterable[tuple[Event, SessionSummary | None]]) -> None:
        """Record a burst of stamped events at once, in order, as `append` records each.

        For producers that hold many events at once: they share transactions (as few as the
        batch limit allows) and this returns once all are committed. A refused event raises
        its StoreError once the rest are written: the events before it are recorded, and so
        are the later ones its refusal does not affect (other sessions'). Cancelling the
        caller does not cancel the appends.
        """
        futures = self._writer.submit([self._checked(event, summary) for event, summary in records])
        for outcome in await asyncio.gather(*futures, return_exceptions=True):
            if isinstance(outcome, BaseException):
                raise outcome

    @staticmethod
    def _checked(event: Event, summary: SessionSummary | None) -> Append:
        if not event.session_id:
            raise StoreError("cannot append an event without a session_id (stamp it first)")
        if summary is not None and summary.session_id != event.session_id:
            raise StoreError(
                f"summary of session {summary.session_id!r} given for an event of "
                f"session {event.session_id!r}"
            )
        return Append.of(event, summary)

    async def delete(self, session_id: str) -> None:
        """Remove the session and every row of it."""
        async with self._use() as conn:
            cursor = await conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
            if cursor.rowcount == 0:
                raise self._not_found(session_id)

    async def import_jsonl(self, path: Path, max_mb: float = MAX_FILE_MB) -> str:
        """Import an exported session file (at most `max_mb` MB); returns its session id.

        All or nothing: a bad file raises `JsonlError` naming its first bad line; an id already
        in the database raises `SessionExists`, and one that shares its short id (the first
        `SHORT_ID` characters) with a stored session, or begins or extends one's id, a
        `StoreError`; nothing is written. The session is marked as imported (`imported_from`):
        its settings and code are the file's, not what a user typed here.
        """
        events, state = await asyncio.to_thread(_read_and_fold, Path(path), max_mb)
        session_id = events[0].session_id
        if not IMPORTED_ID.fullmatch(session_id):
            raise StoreError(
                f"{path}: session id {session_id[:80]!r} is not 1 to 64 letters, digits, "
                "'_', '.' or '-'"
            )
        async with self._use() as conn, write_transaction(conn):
            await self._refuse_existing(conn, session_id)
            await self._refuse_short_id_clash(conn, session_id)
            await _insert_session(conn, events, state, imported_from=str(Path(path).resolve()))
        return session_id

    async def add_recorded(self, lines: list[str]) -> str:
        """Store a session recorded elsewhere (a batch item a worker ran), given as its exported
        lines; returns its id. All or nothing, checked as an import is; unlike an import, it is
        not marked as imported: it ran on the user's behalf, its id made here. A session already
        stored raises `SessionExists`."""
        events, state = await asyncio.to_thread(_parse_and_fold, lines)
        session_id = events[0].session_id
        async with self._use() as conn, write_transaction(conn):
            await self._refuse_existing(conn, session_id)
            await _insert_session(conn, events, state, imported_from=None)
        return session_id

    async def _refuse_existing(self, conn: aiosqlite.Connection, session_id: str) -> None:
        if await fetch(conn, "SELECT 1 FROM sessions WHERE id = ?", (session_id,)):
            raise SessionExists(
                f"session {session_id} already exists in {self.path}; delete it first "
                f"(`tui-agent sessions delete {session_id}`)",
                session_id,
            )

    async def _refuse_short_id_clash(self, conn: aiosqlite.Connection, session_id: str) -> None:
        """A StoreError when a stored session would read as `session_id` where ids are shown
        short or typed as a prefix: same first SHORT_ID characters, or one id begins the other."""
        rows = await fetch(
            conn,
            "SELECT id FROM sessions WHERE substr(id, 1, ?1) = substr(?2, 1, ?1)"
            " OR (id > ?2 AND id < ?2 || ?3) OR instr(?2, id) = 1 ORDER BY id LIMIT 1",
            (SHORT_ID, session_id, _PREFIX_END),
        )
        if rows:
            other = rows[0][0]
            raise StoreError(
                f"import refused: session {session_id} could be taken for session {other}, "
                f"already in {self.path} (`sessions list` shows {SHORT_ID} characters of an "
                f"id, and a prefix names a session); delete that one first "
                f"(`tui-agent sessions delete {other}`) or import into another --db"
            )

    async def imported_from(self, session_id: str) -> str | None:
        """The file the session was imported from; None when it was recorded here."""
        async with self._use() as conn:
            rows = await fetch(
                conn, "SELECT imported_from FROM sessions WHERE id = ?", (session_id,)
            )
        if not rows:
            raise self._not_found(session_id)
        return rows[0][0]

    # -- reading --------------------------------------------------------------------------

    async def list_sessions(self) -> list[SessionSummary]:
        """Every session's summary, newest first."""
        async with self._use() as conn:
            rows = await fetch(conn, f"{SELECT_SUMMARY} ORDER BY started_at DESC, id")
        return [row_summary(row) for row in rows]

    async def resolve(self, id_or_prefix: str) -> str:
        """The full id of the one session whose id is or starts with `id_or_prefix`.

        Several sessions whose ids start with it (one of them may be it exactly) are a
        StoreError listing them: the text names none of them for sure.
        """
        async with self._use() as conn:
            rows = await fetch(
                conn,
                "SELECT id FROM sessions WHERE id >= ? AND id < ? ORDER BY id LIMIT 6",
                (id_or_prefix, id_or_prefix + _PREFIX_END),
            )
        ids = [row[0] for row in rows]
        if not ids or not id_or_prefix:
            raise self._not_found(id_or_prefix)
        if len(ids) > 1:
            shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
            raise StoreError(
                f"session id {id_or_prefix!r} is ambiguous: several sessions' ids start with "
                f"it ({shown}); give more characters"
            )
        return ids[0]

    async def events(self, session_id: str, after_seq: int = 0) -> list[Event]:
        """The session's events with seq > `after_seq`, in seq order."""
        return await self._events(session_id, after_seq, display=False)

    async def display_events(self, session_id: str) -> list[Event]:
        """The session's events as a screen shows them: their display copies
        (`terminal_text.visible_event`), made only for events whose JSON needs one."""
        return await self._events(session_id, 0, display=True)

    async def _events(self, session_id: str, after_seq: int, *, display: bool) -> list[Event]:
        async with self._use() as conn:
            rows = await event_rows(conn, session_id, after_seq)
            if not rows:
                await self._require(conn, session_id)
        return load_events(self.path, session_id, rows, display=display)

    async def state(self, session_id: str) -> SessionState:
        """The session folded from its stored events."""
        return fold(await self.events(session_id))

    async def items(self, session_id: str, offset: int = 0, limit: int | None = None) -> list[Any]:
        """The session's items from index `offset`, at most `limit` of them."""
        async with self._use() as conn:
            rows = await fetch(
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
            rows = await fetch(
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
            rows = await fetch(
                conn,
                "SELECT json FROM feedback WHERE session_id = ? ORDER BY seq, position",
                (session_id,),
            )
            if not rows:
                await self._require(conn, session_id)
        return [FieldFeedback.model_validate_json(row[0]) for row in rows]

    async def chain_of_work(self, session_id: str) -> list[dict[str, Any]]:
        """The session's chain-of-work records (one per task or workflow node), in order."""
        async with self._use() as conn:
            rows = await fetch(conn, SELECT_CHAIN_OF_WORK, (session_id,))
            if not rows:
                await self._require(conn, session_id)
        return [chain_of_work_record(row) for row in rows]

    async def export_jsonl(self, session_id: str, path: Path) -> int:
        """Write the session's stored events, one per line, to `path`; returns how many."""
        async with self._use() as conn:
            rows = await event_rows(conn, session_id)
            if not rows:
                await self._require(conn, session_id)
        return await asyncio.to_thread(write_lines, Path(path), (row[1] for row in rows))


def _read_and_fold(path: Path, max_mb: float) -> tuple[list[Event], SessionState]:
    events = read_jsonl(path, max_mb)
    return events, fold(events)


def _parse_and_fold(lines: list[str]) -> tuple[list[Event], SessionState]:
    events = parse_jsonl(lines, "the recorded session")
    return events, fold(events)


async def _insert_session(
    conn: aiosqlite.Connection,
    events: list[Event],
    state: SessionState,
    imported_from: str | None,
) -> None:
    """Every row of a whole session: its summary, events, items, feedback, calls, records."""
    session_id = events[0].session_id
    await conn.execute(INSERT_SESSION, summary_row(state.summary()))
    if imported_from is not None:
        await conn.execute(
            "UPDATE sessions SET imported_from = ? WHERE id = ?", (imported_from, session_id)
        )
    await conn.executemany(INSERT_EVENT, [event_row(e) for e in events])
    await conn.executemany(
        INSERT_ITEM, [(session_id, i, item_json(item)) for i, item in enumerate(state.items)]
    )
    await conn.executemany(
        INSERT_FEEDBACK,
        [r for e in events if isinstance(e, FeedbackSubmitted) for r in feedback_rows(e)],
    )
    await conn.executemany(
        INSERT_LLM_CALL, [llm_call_row(e) for e in events if isinstance(e, LLMCall)]
    )
    await conn.executemany(
        INSERT_CHAIN_OF_WORK, [chain_of_work_row(e) for e in events if isinstance(e, TaskResult)]
    )
