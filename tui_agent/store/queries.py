"""Helpers over an open connection shared by the store's readers and writers."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress
from typing import Any

import aiosqlite

from tui_agent.store.rows import SELECT_EVENTS


async def fetch(conn: aiosqlite.Connection, sql: str, params: Sequence[Any] = ()) -> list[Any]:
    """Every row of one query."""
    return list(await conn.execute_fetchall(sql, params))


async def event_rows(
    conn: aiosqlite.Connection, session_id: str, after_seq: int = 0
) -> list[tuple[int, str]]:
    """(seq, json) of the session's stored events with seq > `after_seq`, in seq order."""
    return await fetch(conn, SELECT_EVENTS, (session_id, after_seq))


@asynccontextmanager
async def write_transaction(conn: aiosqlite.Connection) -> AsyncIterator[None]:
    """A write transaction (the write lock taken at once): all of it is committed, or none."""
    await conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        await conn.execute("COMMIT")
    except BaseException:
        # A cancelled COMMIT may have gone through anyway: then there is nothing to undo.
        with suppress(sqlite3.OperationalError):
            await conn.execute("ROLLBACK")
        raise
