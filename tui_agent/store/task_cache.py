"""The task executor's cache of generated code, in the sessions database.

An entry is the code that completed a task, keyed by a hash of (normalised task text, the
context's schema, model); entries with the same schema and model are the candidates for a
match by meaning. Entries outlive the session that wrote them. `TaskCache` opens its own
connection on first use, so an agent can hold one before any session is recorded.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite

from tui_agent.store.connection import open_connection
from tui_agent.store.queries import fetch

COLUMNS = (
    "key",
    "task",
    "normalised_task",
    "schema_hash",
    "schema_json",
    "model",
    "task_code",
    "analysis_code",
    "session_id",
    "created_at",
    "last_used_at",
    "hits",
)
SELECT = f"SELECT {', '.join(COLUMNS)} FROM task_cache"
UPSERT = (
    f"INSERT INTO task_cache ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"
    " ON CONFLICT (key) DO UPDATE SET task = excluded.task, task_code = excluded.task_code,"
    " analysis_code = excluded.analysis_code, session_id = excluded.session_id,"
    " created_at = excluded.created_at, last_used_at = excluded.last_used_at, hits = 0"
)
MAX_CANDIDATES = 200


@dataclass(frozen=True)
class TaskCacheEntry:
    """One cached piece of generated code and what it was generated for."""

    key: str
    task: str
    normalised_task: str
    schema_hash: str
    schema_json: str
    model: str
    task_code: str
    analysis_code: str | None
    session_id: str
    created_at: float
    last_used_at: float
    hits: int = 0

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> TaskCacheEntry:
        return cls(*row)

    def row(self) -> tuple[Any, ...]:
        return tuple(getattr(self, column) for column in COLUMNS)


class TaskCache:
    """The task_cache table of the database at `path`."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path).expanduser()
        self._conn: aiosqlite.Connection | None = None
        self._lock = asyncio.Lock()

    async def _connection(self) -> aiosqlite.Connection:
        if self._conn is None:
            self._conn = await open_connection(self.path)
        return self._conn

    async def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        async with self._lock:
            return await fetch(await self._connection(), sql, params)

    async def _write(self, sql: str, params: Sequence[Any] = ()) -> int:
        async with self._lock:
            cursor = await (await self._connection()).execute(sql, params)
            return cursor.rowcount

    async def get(self, key: str) -> TaskCacheEntry | None:
        """The entry stored under `key`."""
        rows = await self._query(f"{SELECT} WHERE key = ?", (key,))
        return TaskCacheEntry.from_row(rows[0]) if rows else None

    async def candidates(self, schema_hash: str, model: str) -> list[TaskCacheEntry]:
        """Entries for contexts of this schema and this model, most recently used first."""
        rows = await self._query(
            f"{SELECT} WHERE schema_hash = ? AND model = ? ORDER BY last_used_at DESC LIMIT ?",
            (schema_hash, model, MAX_CANDIDATES),
        )
        return [TaskCacheEntry.from_row(row) for row in rows]

    async def put(
        self,
        *,
        key: str,
        task: str,
        normalised_task: str,
        schema_hash: str,
        schema_json: str,
        model: str,
        task_code: str,
        analysis_code: str | None,
        session_id: str,
    ) -> None:
        """Store (or replace) the code for `key`."""
        now = time.time()
        entry = TaskCacheEntry(
            key,
            task,
            normalised_task,
            schema_hash,
            schema_json,
            model,
            task_code,
            analysis_code,
            session_id,
            now,
            now,
        )
        await self._write(UPSERT, entry.row())

    async def used(self, key: str) -> None:
        """Count a hit on `key`."""
        await self._write(
            "UPDATE task_cache SET hits = hits + 1, last_used_at = ? WHERE key = ?",
            (time.time(), key),
        )

    async def remove(self, key: str) -> None:
        """Forget the entry under `key` (its code failed)."""
        await self._write("DELETE FROM task_cache WHERE key = ?", (key,))

    async def entries(self) -> list[TaskCacheEntry]:
        """Every entry, most recently used first."""
        rows = await self._query(f"{SELECT} ORDER BY last_used_at DESC, key")
        return [TaskCacheEntry.from_row(row) for row in rows]

    async def clear(self) -> int:
        """Remove every entry; returns how many there were."""
        return await self._write("DELETE FROM task_cache")

    async def close(self) -> None:
        async with self._lock:
            if self._conn is not None:
                await self._conn.close()
                self._conn = None
