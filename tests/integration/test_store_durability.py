"""The store against real processes: SIGKILL of a writer, and reading while another appends."""

from __future__ import annotations

import asyncio
import signal
import sqlite3
import sys
from pathlib import Path

import pytest
from writer_process import DEADLINE, read_line, start_writer

from tui_agent.analysis.shapes import FieldFeedback
from tui_agent.events import FeedbackSubmitted, SessionStarted, Thought
from tui_agent.recorder import SessionRecorder
from tui_agent.session import fold
from tui_agent.store import Store


@pytest.mark.parametrize("kill_after", [1, 57, 400])
async def test_every_reported_append_survives_sigkill(tmp_path: Path, kill_after: int) -> None:
    db, session_id = tmp_path / "sessions.db", "0123456789ab"
    proc = await start_writer(db, session_id, tmp_path / "never")
    reported = [int(await read_line(proc)) for _ in range(kill_after)]
    proc.send_signal(signal.SIGKILL)  # the next instant after the last seq was reported
    rest, _ = await asyncio.wait_for(proc.communicate(), DEADLINE)
    reported += [int(line) for line in rest.decode().split()]
    assert proc.returncode == -signal.SIGKILL

    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    async with await Store.open(db) as store:
        stored = [e.seq for e in await store.events(session_id)]
        [summary] = await store.list_sessions()
        state = await store.state(session_id)
        items = await store.items(session_id)
    assert set(reported) <= set(stored)
    assert stored == list(range(1, len(stored) + 1))
    # The summary row and derived rows were committed with their event, never apart from it.
    assert summary == state.summary()
    assert items == state.items


async def test_read_a_session_while_another_process_appends(tmp_path: Path) -> None:
    db, stop = tmp_path / "sessions.db", tmp_path / "stop"
    async with await Store.open(db) as store:
        recorder = SessionRecorder(store, "aaaaaaaaaaaa")
        await recorder.emit(SessionStarted(kind="code", title="read me"))
        await recorder.emit(Thought(step=1, text="first"))
        proc = await start_writer(db, "bbbbbbbbbbbb", stop)
        await read_line(proc)  # the writer's session exists from here on

        # Five different lengths of B seen: our reads interleaved with the writer's appends.
        seen_lengths: set[int] = set()
        feedback = FeedbackSubmitted(feedback=[FieldFeedback(field="price", issue="missing")])
        while len(seen_lengths) < 5:
            # Replay session A and append to it, while the writer keeps appending to B.
            assert fold(await store.events("aaaaaaaaaaaa")) == recorder.state
            await recorder.emit(feedback)
            b_seqs = [e.seq for e in await store.events("bbbbbbbbbbbb")]
            assert b_seqs == list(range(1, len(b_seqs) + 1))
            seen_lengths.add(len(b_seqs))
            await read_line(proc)  # the writer is alive and its output pipe never fills
        stop.touch()
        out, err = await asyncio.wait_for(proc.communicate(), DEADLINE)
        assert proc.returncode == 0, err.decode()
        assert out.decode().split()[-1] == "done"

        b_state = await store.state("bbbbbbbbbbbb")
        assert b_state.status == "completed"
        assert await store.feedback("aaaaaaaaaaaa") == recorder.state.feedback
        summaries = {s.session_id: s for s in await store.list_sessions()}
        assert summaries["aaaaaaaaaaaa"] == recorder.state.summary()
        assert summaries["bbbbbbbbbbbb"] == b_state.summary()


OPEN_AND_RECORD = """
import asyncio, sys
from tui_agent.events import SessionStarted
from tui_agent.recorder import SessionRecorder
from tui_agent.store import Store

async def main():
    async with await Store.open(sys.argv[1]) as store:
        await SessionRecorder(store).emit(SessionStarted(kind="exec", title="racer"))

asyncio.run(main())
"""


async def test_processes_creating_the_same_database_at_once_all_succeed(tmp_path: Path) -> None:
    db = tmp_path / "new" / "sessions.db"
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable, "-c", OPEN_AND_RECORD, str(db), stderr=asyncio.subprocess.PIPE
        )
        for _ in range(4)
    ]
    for proc in procs:
        _, err = await asyncio.wait_for(proc.communicate(), DEADLINE)
        assert proc.returncode == 0, err.decode()
    async with await Store.open(db) as store:
        assert [s.title for s in await store.list_sessions()] == ["racer"] * 4
