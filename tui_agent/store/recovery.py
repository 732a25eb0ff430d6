"""Ending sessions whose recording process died (kill -9, a lost SSH connection, a power cut).

Run whenever a database is opened: a session still "running" whose owners (owners.py) are
all known to be gone gets a `SessionEnded(status="interrupted")` appended with its next seq,
so its earlier events stay as they were and replay shows the end. Sessions with an owner that
lives, or that cannot be checked from here (another host), are left alone.
"""

from __future__ import annotations

import time
from collections import defaultdict
from pathlib import Path

import aiosqlite

from tui_agent.events import SessionEnded
from tui_agent.session import fold
from tui_agent.store.owners import RELEASE, RUNNING_OWNERS, Owner, liveness, this_process
from tui_agent.store.queries import event_rows, fetch, write_transaction
from tui_agent.store.rows import APPEND_EVENT, event_row, load_events, summary_row

STOPPED_REASON = "process_gone"


async def _orphans(conn: aiosqlite.Connection) -> dict[str, list[Owner]]:
    """Running sessions whose owners are all gone, with those owners."""
    owners: dict[str, list[Owner]] = defaultdict(list)
    for session_id, *columns in await fetch(conn, RUNNING_OWNERS):
        owners[session_id].append(Owner(*columns))
    return {
        session_id: found
        for session_id, found in owners.items()
        if all(liveness(owner) == "gone" for owner in found)
    }


async def interrupt_orphans(conn: aiosqlite.Connection, path: Path) -> list[str]:
    """End every running session whose owners are all gone as "interrupted"; their ids.

    The candidates are read again inside the write transaction, so processes opening the
    database at the same time end each session once: the later ones find it ended.
    """
    if not await _orphans(conn):  # the usual case: no write lock taken
        return []
    ended = []
    async with write_transaction(conn):
        for session_id, owners in (await _orphans(conn)).items():
            state = fold(load_events(path, session_id, await event_rows(conn, session_id)))
            end = SessionEnded(
                status="interrupted",
                stopped_reason=STOPPED_REASON,
                summary=_why(owners),
                session_id=session_id,
                seq=state.last_seq + 1,
                # The last moment the session is known to have run: its duration stays true.
                ts=state.last_ts,
            )
            state.apply(end)
            await conn.execute(APPEND_EVENT, summary_row(state.summary()) + event_row(end)[1:])
            await conn.execute(RELEASE, (session_id,))
            ended.append(session_id)
    return ended


def _why(owners: list[Owner]) -> str:
    gone = ", ".join(owner.describe() for owner in owners)
    noticed = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime())
    return (
        f"the process recording it ({gone}) stopped without ending it; "
        f"noticed by {this_process().describe()} at {noticed}"
    )
