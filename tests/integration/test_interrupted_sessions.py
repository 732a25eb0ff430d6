"""Sessions whose recording process died: real writer processes, SIGKILL, real SQLite files."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

from support.requirements import require
from writer_process import DEADLINE, go_on, kill, read_line, read_until, start_writer

from tui_agent.events import SessionEnded
from tui_agent.session import SessionState, fold
from tui_agent.store import Store

SID = "0123456789ab"


def query(db: Path, sql: str) -> list[tuple]:
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute(sql, (SID,)).fetchall()


def stored_rows(db: Path) -> list[tuple[int, str]]:
    return query(db, "SELECT seq, json FROM events WHERE session_id = ? ORDER BY seq")


def owners(db: Path) -> list[tuple[str, int]]:
    return sorted(query(db, "SELECT host, pid FROM session_owners WHERE session_id = ?"))


async def state_after_open(db: Path) -> SessionState:
    async with await Store.open(db) as store:
        return await store.state(SID)


async def orphan(db: Path) -> asyncio.subprocess.Process:
    """A session left running by a writer killed while it waited (the killed writer)."""
    proc = await start_writer(db, SID, db.with_name("never"), "hold")
    await read_until(proc, "holding")
    await kill(proc)
    return proc


async def test_a_killed_writers_session_is_ended_as_interrupted(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    proc = await start_writer(db, SID, tmp_path / "never")
    reported = [int(await read_line(proc)) for _ in range(40)]
    assert [pid for _, pid in owners(db)] == [proc.pid]
    await kill(proc)  # mid-session: the writer was appending as fast as it could
    before = stored_rows(db)
    assert len(before) >= reported[-1]

    async with await Store.open(db) as store:
        events = await store.events(SID)
        [summary] = await store.list_sessions()
    assert [(e.seq, e.model_dump_json()) for e in events[:-1]] == before  # untouched
    end = events[-1]
    assert isinstance(end, SessionEnded)
    assert (end.seq, end.status) == (len(before) + 1, "interrupted")
    assert end.stopped_reason == "process_gone"
    assert f"pid {proc.pid} on " in end.summary
    assert end.ts == events[-2].ts  # its duration is the time the session really ran
    assert summary == fold(events).summary()
    assert summary.status == "interrupted"
    assert owners(db) == []
    assert (await state_after_open(db)).event_count == len(events)  # ended once only


async def test_a_live_writers_session_is_left_running(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    proc = await start_writer(db, SID, tmp_path / "never", "hold")
    await read_until(proc, "holding")
    state = await state_after_open(db)
    assert state.status == "running" and state.event_count == len(stored_rows(db))
    assert [pid for _, pid in owners(db)] == [proc.pid]
    assert await go_on(proc) == "done"
    assert (await state_after_open(db)).status == "completed"
    assert owners(db) == []  # the end releases the session


async def test_a_session_resumed_by_a_live_process_is_not_interrupted(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    first = await start_writer(db, SID, tmp_path / "never", "hold")
    await read_until(first, "holding")
    second = await start_writer(db, SID, tmp_path / "never", "resume")
    [seq] = await read_until(second, "holding")  # its feedback, appended to the running session
    assert [pid for _, pid in owners(db)] == sorted([first.pid, second.pid])
    await kill(first)
    state = await state_after_open(db)
    assert (state.status, state.last_seq) == ("running", int(seq))
    await kill(second)
    async with await Store.open(db) as store:
        end = (await store.events(SID))[-1]
    assert isinstance(end, SessionEnded)
    assert (end.status, end.seq) == ("interrupted", int(seq) + 1)
    assert f"pid {first.pid} on " in end.summary and f"pid {second.pid} on " in end.summary


def bwrap(*options: str) -> list[str]:
    """bubblewrap running the writer in new namespaces (`options`: which, and mounts over
    the host's root); the writer dies with bwrap."""
    command = ["bwrap", "--unshare-user", "--dev-bind", "/", "/", *options, "--die-with-parent"]
    try:
        probe = subprocess.run([*command, "true"], capture_output=True, text=True, timeout=30)
    except FileNotFoundError:
        require(False, "bubblewrap", "bwrap is not installed")
    else:
        require(probe.returncode == 0, "bubblewrap", probe.stderr.strip())
    return command


async def test_a_session_recorded_on_another_host_is_left_alone(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    wrap = bwrap("--unshare-uts", "--hostname", "elsewhere")
    proc = await start_writer(db, SID, tmp_path / "never", "hold", wrap)
    await read_until(proc, "holding")
    [(host, pid)] = owners(db)
    assert host == "elsewhere"
    os.kill(pid, signal.SIGKILL)  # the writer itself (bwrap exits once it has reaped it)
    await asyncio.wait_for(proc.communicate(), DEADLINE)
    state = await state_after_open(db)
    assert state.status == "running"  # its process is gone, but we cannot tell from here
    assert owners(db) == [(host, pid)]


async def test_a_session_recorded_in_another_pid_namespace_is_left_alone(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    wrap = bwrap("--unshare-pid", "--proc", "/proc")
    proc = await start_writer(db, SID, tmp_path / "never", "hold", wrap)
    await read_until(proc, "holding")
    await kill(proc)
    assert (await state_after_open(db)).status == "running"  # its pid means nothing here


OPEN_ON_CUE = """
import asyncio, sys
from tui_agent.store import Store

async def main():
    async with await Store.open(sys.argv[1]):
        pass

print("ready", flush=True)
sys.stdin.readline()
asyncio.run(main())
"""


async def test_processes_opening_the_store_at_once_end_the_session_once(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    await orphan(db)
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            OPEN_ON_CUE,
            str(db),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for _ in range(6)
    ]
    for proc in procs:  # all started up: now they open the store at the same moment
        assert await read_line(proc) == "ready"
    results = await asyncio.gather(*(proc.communicate(b"go\n") for proc in procs))
    for proc, (_, err) in zip(procs, results, strict=True):
        assert proc.returncode == 0, err.decode()
    rows = stored_rows(db)
    assert [seq for seq, _ in rows] == list(range(1, len(rows) + 1))
    ends = [json.loads(text) for _, text in rows if '"session_ended"' in text]
    assert [end["status"] for end in ends] == ["interrupted"]


def tui_agent(db: Path, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "tui_agent", "--db", str(db), *args],
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        env={**os.environ, "TUI_AGENT_CONFIG_FILE": str(db.parent / "none.toml")},
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


async def test_the_cli_lists_and_shows_an_interrupted_session(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    writer = await orphan(db)
    listing = tui_agent(db, "sessions", "list")  # this command is the one that notices
    assert "interrupted" in listing.splitlines()[1]
    [line] = tui_agent(db, "sessions", "list", "--json").splitlines()
    summary = json.loads(line)
    assert summary["status"] == "interrupted"
    assert summary["stopped_reason"] == "process_gone"
    shown = tui_agent(db, "sessions", "show", SID[:6])
    assert "■ interrupted (process_gone)" in shown
    assert f"pid {writer.pid} on " in shown
