"""Writing one batch of appends over a plain sqlite3 connection, in one transaction.

All of a batch goes in one transaction: the events rows in one `executemany`, then the rows
they imply grouped by table. If one event is refused (a seq gap), the batch is written again
with a savepoint per event: the refused one is undone alone and gets its error, the others
are committed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from tui_agent.session import fold
from tui_agent.store.appends import Append, Statement, derived_statements, grouped, owner_statements
from tui_agent.store.errors import StoreError
from tui_agent.store.owners import Owner
from tui_agent.store.rows import APPEND_EVENT, SELECT_EVENTS, load_events

Outcome = StoreError | None
"""What became of one append: None once committed, else why it was not."""


@contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        with suppress(sqlite3.OperationalError):
            conn.execute("ROLLBACK")
        raise


class BatchWriter:
    """Writes batches of appends over `conn` for `owner`, the process recording them."""

    def __init__(self, conn: sqlite3.Connection, path: Path, owner: Owner) -> None:
        self.conn = conn
        self._path = path
        self._owner = owner
        self._claimed: set[str] = set()
        """Sessions this writer has recorded `owner` as an owner of."""

    def write(self, batch: list[Append]) -> list[Outcome]:
        """Record `batch`, committed when this returns; what became of each append."""
        try:
            if all(append.summary is not None for append in batch):
                with suppress(sqlite3.IntegrityError):  # some event is refused: find which
                    self._write_together(batch)
                    return [None] * len(batch)
            return self._write_each(batch)
        except sqlite3.Error as exc:
            error = exc
        return [self._failure(error) for _ in batch]

    def _write_together(self, batch: list[Append]) -> None:
        claimed = set(self._claimed)
        params = []
        implied: list[Statement] = []
        for append in batch:
            assert append.summary is not None
            params.append(append.event_params(append.summary))
            implied += derived_statements(append.event, append.json)
            implied += owner_statements(append.event, append.summary, self._owner, claimed)
        if len(batch) == 1 and not implied:
            self.conn.execute(APPEND_EVENT, params[0])  # one statement commits on its own
        else:
            with _transaction(self.conn):
                self.conn.executemany(APPEND_EVENT, params)
                for sql, rows in grouped(implied):
                    self.conn.executemany(sql, rows)
        self._claimed = claimed

    def _write_each(self, batch: list[Append]) -> list[Outcome]:
        conn, claimed, outcomes = self.conn, set(self._claimed), []
        with _transaction(conn):
            for append in batch:
                conn.execute("SAVEPOINT append")
                before = set(claimed)
                refused: sqlite3.IntegrityError | StoreError | None = None
                try:
                    self._write_one(append, claimed)
                except (sqlite3.IntegrityError, StoreError) as exc:
                    refused = exc
                if refused is not None:
                    conn.execute("ROLLBACK TO append")
                    claimed = before
                outcomes.append(None if refused is None else self._refusal(append, refused))
                conn.execute("RELEASE append")
        self._claimed = claimed
        return outcomes

    def _write_one(self, append: Append, claimed: set[str]) -> None:
        summary = append.summary
        if summary is None:
            cursor = self.conn.execute(SELECT_EVENTS, (append.session_id, 0))
            stored = load_events(self._path, append.session_id, cursor)
            summary = fold([*stored, append.event]).summary()
        self.conn.execute(APPEND_EVENT, append.event_params(summary))
        implied = derived_statements(append.event, append.json)
        implied += owner_statements(append.event, summary, self._owner, claimed)
        for sql, rows in implied:
            self.conn.executemany(sql, rows)

    def _refusal(self, append: Append, exc: sqlite3.IntegrityError | StoreError) -> StoreError:
        if isinstance(exc, StoreError):
            return exc
        if "events seq gap" not in str(exc):
            return self._failure(exc)
        (last,) = self.conn.execute(
            "SELECT coalesce(max(seq), 0) FROM events WHERE session_id = ?",
            (append.session_id,),
        ).fetchone()
        return StoreError(
            f"cannot append event {append.event.seq} to session {append.session_id}: "
            f"its last event is {last} (seqs are gap-free)"
        )

    def _failure(self, exc: sqlite3.Error) -> StoreError:
        return StoreError(f"database {self._path}: {exc}")
