"""SessionRecorder: one SessionEnded, whatever happens, and the agent closed afterwards."""

import asyncio
import sqlite3
from contextlib import closing

import pytest

from tui_agent.events import Log, SessionEnded, SessionStarted
from tui_agent.recorder import SessionRecorder
from tui_agent.store import Store

STARTED = SessionStarted(kind="exec", title="t")


@pytest.fixture
async def store(tmp_path):
    async with await Store.open(tmp_path / "s.db") as opened:
        yield opened


async def test_an_agent_that_ends_itself_is_closed(store):
    closed = []

    async def agent():
        try:
            yield Log(message="working")
            yield SessionEnded(status="stopped", stopped_reason="max_steps")
            yield Log(message="never recorded")
        finally:
            closed.append(True)

    state = await SessionRecorder(store).run(STARTED, agent())
    assert state.status == "stopped" and closed == [True]
    assert [e.type for e in await store.events(state.session_id)] == [
        "session_started",
        "log",
        "session_ended",
    ]


async def test_an_agent_failure_is_recorded_not_raised(store):
    async def agent():
        yield Log(message="about to fail")
        raise RuntimeError("boom")

    state = await SessionRecorder(store).run(STARTED, agent())
    assert state.status == "failed" and state.errors[-1].message == "boom"


async def test_cancel_while_the_runner_waits_records_cancelled_and_closes_the_agent(store):
    closed = asyncio.Event()
    waiting = asyncio.Event()

    async def agent():
        try:
            yield Log(message="one")
            waiting.set()
            await asyncio.sleep(3600)
            yield Log(message="never")
        finally:
            closed.set()

    recorder = SessionRecorder(store)
    task = asyncio.create_task(recorder.run(STARTED, agent()))
    await waiting.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert closed.is_set()
    events = await store.events(recorder.session_id)
    assert events[-1].type == "session_ended" and events[-1].status == "cancelled"


async def test_a_cancel_during_the_agents_slow_close_waits_for_the_close(store):
    """The app cancels its session workers on exit: the run must not end (and the loop close)
    while the agent still shuts its browser or sandbox down."""
    closing = asyncio.Event()
    finished_closing = []

    async def agent():
        try:
            yield SessionEnded(status="completed")
        finally:
            closing.set()
            await asyncio.sleep(0.2)  # a browser that takes a while to stop
            finished_closing.append(True)

    task = asyncio.create_task(SessionRecorder(store).run(STARTED, agent()))
    await closing.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert finished_closing == [True]


async def test_listeners_hear_only_of_committed_events(store):
    def committed(event, _state):
        # Another connection sees the event already: it was committed before we heard of it.
        with closing(sqlite3.connect(store.path)) as conn:
            row = conn.execute(
                "SELECT type FROM events WHERE session_id = ? AND seq = ?",
                (event.session_id, event.seq),
            ).fetchone()
        heard.append((event.seq, row[0] if row else None))

    heard: list[tuple[int, str | None]] = []
    recorder = SessionRecorder(store, listeners=[committed])
    await recorder.emit(STARTED)
    stamped = await recorder.emit_many(
        [Log(message="a"), Log(message="b"), SessionEnded(status="completed")]
    )
    assert [e.seq for e in stamped] == [2, 3, 4]
    assert heard == [(1, "session_started"), (2, "log"), (3, "log"), (4, "session_ended")]
    assert (await store.events(recorder.session_id))[1:] == stamped


async def test_a_cancel_as_the_agents_own_end_is_stored_ends_the_session_once(store):
    """Quitting the app just as the agent ends: the cancel lands while its SessionEnded is
    being stored. That end is stored whole and stays the only one."""

    async def agent():
        yield Log(message="the answer")
        yield SessionEnded(status="completed")  # yielded at once: the next await is its store

    recorder = SessionRecorder(store)
    task = asyncio.current_task()

    def cancel_after_the_answer(event, _state):
        if isinstance(event, Log):
            task.cancel()

    recorder.listeners.append(cancel_after_the_answer)
    with pytest.raises(asyncio.CancelledError):
        await recorder.run(STARTED, agent())
    events = await store.events(recorder.session_id)
    assert [e.seq for e in events] == [1, 2, 3]
    assert [(e.type, getattr(e, "status", None)) for e in events][-1] == (
        "session_ended",
        "completed",
    )
