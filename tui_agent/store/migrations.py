"""The database schema as an ordered list of migrations.

`MIGRATIONS[i]` takes a database from schema version `i` to `i + 1`; the version lives in
`PRAGMA user_version` and the file is marked as ours with `PRAGMA application_id`. Never edit a
released migration: append a new one.
"""

from __future__ import annotations

from collections.abc import Sequence

import aiosqlite

Migration = tuple[str, ...]
"""The SQL statements of one migration, run in order inside one transaction."""

APPLICATION_ID = 0x54554941
"""`PRAGMA application_id` of a tui-agent database ("TUIA")."""

_V1: Migration = (
    f"PRAGMA application_id = {APPLICATION_ID}",
    """
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        title TEXT NOT NULL,
        status TEXT NOT NULL,
        model TEXT,
        started_at REAL NOT NULL,
        ended_at REAL,
        duration REAL NOT NULL,
        step_count INTEGER NOT NULL,
        item_count INTEGER NOT NULL,
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        cost REAL,
        cost_complete INTEGER NOT NULL,
        event_count INTEGER NOT NULL,
        stopped_reason TEXT
    )
    """,
    "CREATE INDEX sessions_by_start ON sessions (started_at DESC, id)",
    """
    CREATE TABLE events (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        type TEXT NOT NULL,
        ts REAL NOT NULL,
        json TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
    )
    """,
    # Seqs are gap-free per session whoever writes: a stream with a hole cannot be replayed.
    """
    CREATE TRIGGER events_seq_gap_free BEFORE INSERT ON events
    WHEN NEW.seq <> 1 + (SELECT coalesce(max(seq), 0) FROM events
                         WHERE session_id = NEW.session_id)
    BEGIN
        SELECT RAISE(ABORT, 'events seq gap');
    END
    """,
    # Appending is one INSERT into this view: its trigger upserts the session's summary row
    # and inserts the event, atomically, in a single statement (one round trip per event).
    """
    CREATE VIEW events_with_session AS
    SELECT s.id, s.kind, s.title, s.status, s.model, s.started_at, s.ended_at, s.duration,
           s.step_count, s.item_count, s.prompt_tokens, s.completion_tokens, s.cost,
           s.cost_complete, s.event_count, s.stopped_reason, e.seq, e.type, e.ts, e.json
    FROM events AS e JOIN sessions AS s ON s.id = e.session_id
    """,
    """
    CREATE TRIGGER events_with_session_insert INSTEAD OF INSERT ON events_with_session
    BEGIN
        INSERT INTO sessions (id, kind, title, status, model, started_at, ended_at, duration,
                              step_count, item_count, prompt_tokens, completion_tokens, cost,
                              cost_complete, event_count, stopped_reason)
        VALUES (NEW.id, NEW.kind, NEW.title, NEW.status, NEW.model, NEW.started_at,
                NEW.ended_at, NEW.duration, NEW.step_count, NEW.item_count, NEW.prompt_tokens,
                NEW.completion_tokens, NEW.cost, NEW.cost_complete, NEW.event_count,
                NEW.stopped_reason)
        ON CONFLICT (id) DO UPDATE SET
            kind = excluded.kind, title = excluded.title, status = excluded.status,
            model = excluded.model, started_at = excluded.started_at,
            ended_at = excluded.ended_at, duration = excluded.duration,
            step_count = excluded.step_count, item_count = excluded.item_count,
            prompt_tokens = excluded.prompt_tokens,
            completion_tokens = excluded.completion_tokens, cost = excluded.cost,
            cost_complete = excluded.cost_complete, event_count = excluded.event_count,
            stopped_reason = excluded.stopped_reason;
        INSERT INTO events (session_id, seq, type, ts, json)
        VALUES (NEW.id, NEW.seq, NEW.type, NEW.ts, NEW.json);
    END
    """,
    """
    CREATE TABLE items (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        json TEXT NOT NULL,
        PRIMARY KEY (session_id, idx)
    )
    """,
    """
    CREATE TABLE feedback (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        position INTEGER NOT NULL,
        field TEXT NOT NULL,
        issue TEXT NOT NULL,
        json TEXT NOT NULL,
        PRIMARY KEY (session_id, seq, position)
    )
    """,
    """
    CREATE TABLE llm_calls (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        model TEXT NOT NULL,
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        cost REAL,
        latency REAL NOT NULL,
        cached INTEGER NOT NULL,
        purpose TEXT NOT NULL,
        step INTEGER NOT NULL,
        PRIMARY KEY (session_id, seq)
    )
    """,
)

# The processes recording each running session (see owners.py), so that a session whose
# process died can be ended as "interrupted" by the next process to open the database. A table
# rather than columns of `sessions`: a session can have several owners at once (the process
# running it and one resuming it to add feedback), and it is interrupted only once all are gone.
# Rows are written with a session's first append and deleted with its SessionEnded.
_V2: Migration = (
    """
    CREATE TABLE session_owners (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        host TEXT NOT NULL,
        boot_id TEXT NOT NULL,
        pid_ns TEXT NOT NULL,
        pid INTEGER NOT NULL,
        start_ticks INTEGER NOT NULL,
        PRIMARY KEY (session_id, host, boot_id, pid_ns, pid, start_ticks)
    ) WITHOUT ROWID
    """,
)

# The task executor: one chain-of-work row per task or workflow node (derived from its
# TaskResult event, like items from ItemsExtracted), and the cache of generated code. Cache
# entries outlive the session that made them, so they do not reference it.
_V3: Migration = (
    """
    CREATE TABLE chain_of_work (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        node_id TEXT NOT NULL,
        node_type TEXT NOT NULL,
        code_executed TEXT NOT NULL,
        input_context TEXT NOT NULL,
        output_result TEXT NOT NULL,
        execution_time REAL NOT NULL,
        status TEXT NOT NULL,
        error_message TEXT,
        ai_metadata TEXT NOT NULL,
        timestamp REAL NOT NULL,
        PRIMARY KEY (session_id, seq)
    )
    """,
    """
    CREATE TABLE task_cache (
        key TEXT PRIMARY KEY,
        task TEXT NOT NULL,
        normalised_task TEXT NOT NULL,
        schema_hash TEXT NOT NULL,
        schema_json TEXT NOT NULL,
        model TEXT NOT NULL,
        task_code TEXT NOT NULL,
        analysis_code TEXT,
        session_id TEXT NOT NULL,
        created_at REAL NOT NULL,
        last_used_at REAL NOT NULL,
        hits INTEGER NOT NULL DEFAULT 0
    )
    """,
    "CREATE INDEX task_cache_by_schema ON task_cache (schema_hash, model)",
)

# Where a session came from when it was imported from a file rather than recorded here: its
# settings (network, URL) and code are the file's, so running it again re-checks them and asks.
_V4: Migration = ("ALTER TABLE sessions ADD COLUMN imported_from TEXT",)

# The command `code` is recorded as kind `code` (it was `codeact`), as SessionStarted reads it.
_V5: Migration = ("UPDATE sessions SET kind = 'code' WHERE kind = 'codeact'",)

# A fork's parent ("ID@STEP"), so lists show lineage without reading events; the summary
# view and its insert trigger carry the column like the others.
_V6: Migration = (
    "ALTER TABLE sessions ADD COLUMN parent TEXT",
    "DROP TRIGGER events_with_session_insert",
    "DROP VIEW events_with_session",
    """
    CREATE VIEW events_with_session AS
    SELECT s.id, s.kind, s.title, s.status, s.model, s.started_at, s.ended_at, s.duration,
           s.step_count, s.item_count, s.prompt_tokens, s.completion_tokens, s.cost,
           s.cost_complete, s.event_count, s.stopped_reason, s.parent,
           e.seq, e.type, e.ts, e.json
    FROM events AS e JOIN sessions AS s ON s.id = e.session_id
    """,
    """
    CREATE TRIGGER events_with_session_insert INSTEAD OF INSERT ON events_with_session
    BEGIN
        INSERT INTO sessions (id, kind, title, status, model, started_at, ended_at, duration,
                              step_count, item_count, prompt_tokens, completion_tokens, cost,
                              cost_complete, event_count, stopped_reason, parent)
        VALUES (NEW.id, NEW.kind, NEW.title, NEW.status, NEW.model, NEW.started_at,
                NEW.ended_at, NEW.duration, NEW.step_count, NEW.item_count, NEW.prompt_tokens,
                NEW.completion_tokens, NEW.cost, NEW.cost_complete, NEW.event_count,
                NEW.stopped_reason, NEW.parent)
        ON CONFLICT (id) DO UPDATE SET
            kind = excluded.kind, title = excluded.title, status = excluded.status,
            model = excluded.model, started_at = excluded.started_at,
            ended_at = excluded.ended_at, duration = excluded.duration,
            step_count = excluded.step_count, item_count = excluded.item_count,
            prompt_tokens = excluded.prompt_tokens,
            completion_tokens = excluded.completion_tokens, cost = excluded.cost,
            cost_complete = excluded.cost_complete, event_count = excluded.event_count,
            stopped_reason = excluded.stopped_reason, parent = excluded.parent;
        INSERT INTO events (session_id, seq, type, ts, json)
        VALUES (NEW.id, NEW.seq, NEW.type, NEW.ts, NEW.json);
    END
    """,
)

# The batch a session is an item of, so the home screen groups items under their batch
# without reading events; the summary view and its insert trigger carry it too.
_V7: Migration = (
    "ALTER TABLE sessions ADD COLUMN batch TEXT",
    "CREATE INDEX sessions_by_batch ON sessions (batch)",
    "DROP TRIGGER events_with_session_insert",
    "DROP VIEW events_with_session",
    """
    CREATE VIEW events_with_session AS
    SELECT s.id, s.kind, s.title, s.status, s.model, s.started_at, s.ended_at, s.duration,
           s.step_count, s.item_count, s.prompt_tokens, s.completion_tokens, s.cost,
           s.cost_complete, s.event_count, s.stopped_reason, s.parent, s.batch,
           e.seq, e.type, e.ts, e.json
    FROM events AS e JOIN sessions AS s ON s.id = e.session_id
    """,
    """
    CREATE TRIGGER events_with_session_insert INSTEAD OF INSERT ON events_with_session
    BEGIN
        INSERT INTO sessions (id, kind, title, status, model, started_at, ended_at, duration,
                              step_count, item_count, prompt_tokens, completion_tokens, cost,
                              cost_complete, event_count, stopped_reason, parent, batch)
        VALUES (NEW.id, NEW.kind, NEW.title, NEW.status, NEW.model, NEW.started_at,
                NEW.ended_at, NEW.duration, NEW.step_count, NEW.item_count, NEW.prompt_tokens,
                NEW.completion_tokens, NEW.cost, NEW.cost_complete, NEW.event_count,
                NEW.stopped_reason, NEW.parent, NEW.batch)
        ON CONFLICT (id) DO UPDATE SET
            kind = excluded.kind, title = excluded.title, status = excluded.status,
            model = excluded.model, started_at = excluded.started_at,
            ended_at = excluded.ended_at, duration = excluded.duration,
            step_count = excluded.step_count, item_count = excluded.item_count,
            prompt_tokens = excluded.prompt_tokens,
            completion_tokens = excluded.completion_tokens, cost = excluded.cost,
            cost_complete = excluded.cost_complete, event_count = excluded.event_count,
            stopped_reason = excluded.stopped_reason, parent = excluded.parent,
            batch = excluded.batch;
        INSERT INTO events (session_id, seq, type, ts, json)
        VALUES (NEW.id, NEW.seq, NEW.type, NEW.ts, NEW.json);
    END
    """,
)

MIGRATIONS: tuple[Migration, ...] = (_V1, _V2, _V3, _V4, _V5, _V6, _V7)
SCHEMA_VERSION = len(MIGRATIONS)
"""The schema version this code writes."""


async def schema_version(conn: aiosqlite.Connection) -> int:
    """The database's `PRAGMA user_version`."""
    async with conn.execute("PRAGMA user_version") as cursor:
        row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def apply_migrations(
    conn: aiosqlite.Connection, migrations: Sequence[Migration] = MIGRATIONS
) -> int:
    """Bring the database up to `len(migrations)`; returns the version it was at.

    Runs in one write transaction (concurrent openers wait on it, then find nothing to do);
    a failing migration rolls back completely. `conn` must be in autocommit mode
    (`isolation_level=None`). A database newer than `migrations` is left untouched.
    """
    await conn.execute("BEGIN IMMEDIATE")
    try:
        start = await schema_version(conn)
        for version in range(start, len(migrations)):
            for statement in migrations[version]:
                await conn.execute(statement)
            await conn.execute(f"PRAGMA user_version = {version + 1}")
        await conn.execute("COMMIT")
    except BaseException:
        await conn.execute("ROLLBACK")
        raise
    return start
