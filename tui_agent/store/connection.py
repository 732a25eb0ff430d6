"""Opening a session database: checks first, then WAL, then migrations, then the sessions
left running by a process that died are ended (recovery.py).

Every check that can refuse a file runs before anything is written to it, so a foreign,
corrupt or newer database is never modified.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import aiosqlite

from tui_agent.store.errors import StoreError
from tui_agent.store.migrations import APPLICATION_ID, SCHEMA_VERSION, apply_migrations
from tui_agent.store.recovery import interrupt_orphans

SQLITE_MAGIC = b"SQLite format 3\x00"
BUSY_TIMEOUT_MS = 10_000
"""How long a writer waits for another process's write transaction before failing."""


def check_file(path: Path) -> None:
    """Refuse a directory, an unreadable file or a file that is not SQLite; create parents."""
    if path.is_dir():
        raise StoreError(f"cannot open database {path}: it is a directory")
    if path.exists():
        try:
            with path.open("rb") as f:
                header = f.read(len(SQLITE_MAGIC))
        except OSError as exc:
            raise StoreError(f"cannot read database {path}: {exc.strerror}") from None
        if header and header != SQLITE_MAGIC:
            raise StoreError(f"{path} is not a tui-agent database (not an SQLite file)")
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise StoreError(
            f"cannot create database {path}: {path.parent} is not a directory"
        ) from None
    except OSError as exc:
        raise StoreError(f"cannot create database {path}: {exc.strerror}") from None


async def _check_ours(conn: aiosqlite.Connection, path: Path) -> None:
    """Refuse an SQLite file that belongs to something else or to a newer tui-agent."""
    # One statement, so one snapshot, even while another process runs migration 1.
    async with conn.execute(
        "SELECT (SELECT user_version FROM pragma_user_version),"
        " (SELECT application_id FROM pragma_application_id),"
        " (SELECT count(*) FROM sqlite_schema)"
    ) as cursor:
        version, app_id, objects = await cursor.fetchone() or (0, 0, 0)
    if (version == 0 and objects) or (version and app_id != APPLICATION_ID):
        raise StoreError(f"{path} is an SQLite database but not a tui-agent one")
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"database {path} was written by a newer tui-agent "
            f"(schema {version} > {SCHEMA_VERSION}); upgrade tui-agent"
        )


def connect_writer(path: Path) -> sqlite3.Connection:
    """A second, plain connection to a database `open_connection` has opened (the store's
    writer, used from one thread), in autocommit mode with the same settings."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA synchronous = NORMAL")  # see open_connection
    except BaseException:
        conn.close()
        raise
    return conn


async def open_connection(path: Path) -> aiosqlite.Connection:
    """A connection to the tui-agent database at `path`, created and migrated as needed.

    The connection is in autocommit mode (`isolation_level=None`): callers open their own
    transactions.
    """
    check_file(path)
    try:
        conn = await aiosqlite.connect(path, isolation_level=None)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open database {path}: {exc}") from None
    try:
        await conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        await conn.execute("PRAGMA foreign_keys = ON")
        await _check_ours(conn, path)
        async with conn.execute("PRAGMA journal_mode = WAL") as cursor:
            (mode,) = await cursor.fetchone() or ("",)
        if mode.lower() != "wal":
            raise StoreError(f"cannot use database {path}: WAL mode unavailable ({mode})")
        # In WAL mode, synchronous=NORMAL makes every COMMIT a write() of the WAL frames
        # into the OS page cache before it returns, so a committed event survives the death
        # of the process (kill -9) at any instant; only a power loss or kernel crash can
        # roll back the last commits, and it never corrupts the file. FULL would fsync the
        # WAL on every commit too: a few hundred commits/s here (benchmarks/store.py), far
        # below the rest of an append, paid on every streamed token batch.
        await conn.execute("PRAGMA synchronous = NORMAL")
        await apply_migrations(conn)
        await interrupt_orphans(conn, path)
    except sqlite3.DatabaseError as exc:
        await conn.close()
        raise StoreError(f"cannot use database {path}: {exc}") from None
    except BaseException:
        await conn.close()
        raise
    return conn
