"""Store on real SQLite files: recording, reading back, errors, migrations."""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
from collections.abc import AsyncIterator
from contextlib import closing
from pathlib import Path

import aiosqlite
import pytest

from tui_agent.analysis.shapes import FieldFeedback
from tui_agent.config import default_db_path
from tui_agent.events import (
    CodeProposed,
    Error,
    Event,
    ExecutionFinished,
    ExecutionStarted,
    FeedbackSubmitted,
    FinalAnswer,
    ItemsExtracted,
    LLMCall,
    LogLine,
    PhaseFinished,
    PhaseStarted,
    SessionStarted,
    Thought,
    ThoughtDelta,
    ToolCall,
    ToolResult,
)
from tui_agent.recorder import SessionRecorder
from tui_agent.session import SessionState, SessionSummary, fold
from tui_agent.store import SCHEMA_VERSION, SessionNotFound, Store, StoreError
from tui_agent.store.migrations import APPLICATION_ID, MIGRATIONS, apply_migrations
from tui_agent.store.rows import SUMMARY_COLUMNS, event_row, summary_row
from tui_agent.terminal_text import visible_event

TABLES = ("sessions", "events", "items", "feedback", "llm_calls")
STARTED = SessionStarted(kind="exec", title="t")


async def sample_agent(steps: int = 3) -> AsyncIterator[Event]:
    """A codeact-like stream touching every derived table, with a replace of the items."""
    yield PhaseStarted(phase="plan", detail="read the task")
    yield PhaseFinished(phase="plan", duration=0.2)
    for step in range(1, steps + 1):
        yield ThoughtDelta(step=step, text="I will ")
        yield Thought(step=step, text=f"I will fetch page {step}.")
        yield LLMCall(
            model="gpt-4o-mini",
            prompt_tokens=100 * step,
            completion_tokens=20,
            cost=None if step == 2 else 0.001,
            latency=0.4,
            cached=step == 3,
            purpose="step",
            step=step,
        )
        yield CodeProposed(step=step, code=f"rows = fetch({step})\nrows")
        yield ExecutionStarted(step=step, backend="local")
        rows = [{"name": f"n{step}-{i}", "price": i * 1.5, "tags": ["a", "é"]} for i in range(4)]
        yield ExecutionFinished(
            step=step,
            success=True,
            result=rows,
            logs=[LogLine(stream="stdout", text="ok"), LogLine(stream="stderr", text="warn")],
            duration=0.05,
        )
        yield ItemsExtracted(items=rows, step=step, replace=step == 2)
    yield ToolCall(call_id="c1", name="search", arguments={"q": "x"})
    yield ToolResult(call_id="c1", name="search", output="3 hits")
    yield FeedbackSubmitted(
        feedback=[
            FieldFeedback(field="price", issue="format", notes="cents"),
            FieldFeedback(field="name", issue="missing", correct_selector="h2"),
        ]
    )
    yield Error(message="transient", kind="Timeout")
    yield FinalAnswer(step=steps, text="done")


async def record(
    store: Store, session_id: str | None = None, title: str = "sample", steps: int = 3
) -> tuple[SessionRecorder, list[Event]]:
    """Run `sample_agent` through a SessionRecorder; returns it and the events it stamped."""
    stamped: list[Event] = []
    recorder = SessionRecorder(store, session_id, listeners=[lambda e, _s: stamped.append(e)])
    await recorder.run(SessionStarted(kind="code", title=title, model="m"), sample_agent(steps))
    return recorder, stamped


def table_counts(db: Path, session_id: str) -> dict[str, int]:
    with sqlite3.connect(db) as conn:
        return {
            t: conn.execute(
                f"SELECT count(*) FROM {t} WHERE {'id' if t == 'sessions' else 'session_id'} = ?",
                (session_id,),
            ).fetchone()[0]
            for t in TABLES
        }


def stamped_burst(session_id: str, payloads: list[Event]) -> list[tuple[Event, SessionSummary]]:
    """`payloads` stamped as SessionRecorder stamps them, each with the summary it would pass."""
    state, out = SessionState(), []
    for seq, payload in enumerate(payloads, start=1):
        event = payload.model_copy(update={"session_id": session_id, "seq": seq})
        state.apply(event)
        out.append((event, state.summary()))
    return out


def wal_commits(db: Path) -> int:
    """Transactions in the database's WAL file since it was last reset: frames with the
    header's salt whose "database size after commit" field is set (a commit's last frame)."""
    data = db.with_name(db.name + "-wal").read_bytes()
    page_size, salt = int.from_bytes(data[8:12], "big"), data[16:24]
    commits = 0
    for offset in range(32, len(data) - 24, 24 + page_size):
        frame = data[offset : offset + 24]
        if frame[8:16] != salt:
            break
        commits += int.from_bytes(frame[4:8], "big") != 0
    return commits


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with await Store.open(tmp_path / "sessions.db") as s:
        yield s


def test_default_db_path_is_in_the_user_data_dir() -> None:
    path = default_db_path()
    assert path.name == "sessions.db"
    assert path.parent.name == "tui-agent"


async def test_open_creates_a_migrated_wal_database(tmp_path: Path) -> None:
    db = tmp_path / "deep" / "er" / "sessions.db"
    async with await Store.open(str(db)) as store:
        assert store.path == db
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        assert conn.execute("PRAGMA application_id").fetchone() == (APPLICATION_ID,)
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_schema WHERE type='table'")}
    assert set(TABLES) <= names


async def test_a_recorded_session_reads_back_as_recorded(store: Store) -> None:
    recorder, stamped = await record(store)
    sid = recorder.session_id
    state = recorder.state

    assert await store.events(sid) == stamped
    assert await store.events(sid, after_seq=10) == stamped[10:]
    assert await store.state(sid) == state
    assert await store.list_sessions() == [state.summary()]
    assert await store.items(sid) == state.items
    assert await store.item_count(sid) == len(state.items) == 8  # 4, replaced by 4, then 4
    assert await store.feedback(sid) == state.feedback
    with sqlite3.connect(store.path) as conn:
        rows = conn.execute(
            "SELECT seq, prompt_tokens, cost, cached FROM llm_calls WHERE session_id = ?"
            " ORDER BY seq",
            (sid,),
        ).fetchall()
        stored_json = [r[0] for r in conn.execute("SELECT json FROM events ORDER BY seq")]
    calls = [e for e in stamped if isinstance(e, LLMCall)]
    assert rows == [(c.seq, c.prompt_tokens, c.cost, int(c.cached)) for c in calls]
    assert rows[1][2] is None  # unknown cost stays NULL, not 0
    assert stored_json == [e.model_dump_json() for e in stamped]
    summary = (await store.list_sessions())[0]
    assert summary.cost_complete is False
    assert summary.prompt_tokens == 600


async def test_display_events_are_the_display_copies_of_the_stored_events(store: Store) -> None:
    recorder, stamped = await record(store)
    hostile = SessionRecorder(store, "badc0de00001")
    await hostile.emit(SessionStarted(kind="exec", title="demo\x1b]0;owned\x07"))
    await hostile.emit(Thought(step=1, text="\u202eevil\x9b2J"))
    for sid in (recorder.session_id, hostile.session_id):
        events = await store.events(sid)
        shown = await store.display_events(sid)
        assert shown == [visible_event(event) for event in events]
    assert shown[0].title == "demo␛]0;owned␇" and "\x9b" not in shown[1].text
    assert await store.display_events(recorder.session_id) == stamped  # nothing to draw there


async def test_items_are_paged_by_offset_and_limit(store: Store) -> None:
    recorder, _ = await record(store, steps=5)
    sid, items = recorder.session_id, recorder.state.items
    assert await store.items(sid, offset=3, limit=5) == items[3:8]
    assert await store.items(sid, offset=len(items) - 2) == items[-2:]
    assert await store.items(sid, offset=len(items)) == []
    assert await store.items(sid, limit=0) == []


async def test_append_without_summary_folds_the_stored_events(store: Store) -> None:
    events: list[Event] = [
        SessionStarted(kind="exec", title="plain", session_id="feedc0ffee00", seq=1, ts=10.0),
        LLMCall(model="m", prompt_tokens=5, cost=0.5, session_id="feedc0ffee00", seq=2, ts=11.0),
        ItemsExtracted(items=[1, 2, 3], session_id="feedc0ffee00", seq=3, ts=12.0),
    ]
    for event in events:
        await store.append(event)
    assert await store.list_sessions() == [fold(events).summary()]
    assert await store.items("feedc0ffee00") == [1, 2, 3]


async def test_a_seq_gap_or_repeat_is_refused_and_writes_nothing(store: Store) -> None:
    recorder, stamped = await record(store)
    sid = recorder.session_id
    before = table_counts(store.path, sid)
    last = stamped[-1].seq
    for seq in (last + 2, last, 1):
        bad = ItemsExtracted(items=[{"x": 1}], session_id=sid, seq=seq)
        with pytest.raises(StoreError) as info:
            await store.append(bad, recorder.state.summary())
        assert str(info.value) == (
            f"cannot append event {seq} to session {sid}: its last event is {last} "
            "(seqs are gap-free)"
        )
    assert table_counts(store.path, sid) == before
    # A new session must start at seq 1; a refused first event leaves no session row.
    with pytest.raises(StoreError, match="its last event is 0"):
        await store.append(SessionStarted(kind="exec", title="x", session_id="c0c0c0c0c0c0", seq=2))
    assert [s.session_id for s in await store.list_sessions()] == [sid]


async def test_append_refuses_unstamped_events_and_foreign_summaries(store: Store) -> None:
    with pytest.raises(StoreError, match="without a session_id"):
        await store.append(SessionStarted(kind="exec", title="x", seq=1))
    recorder, _ = await record(store)
    event = Thought(step=9, text="x", session_id="another00000", seq=1)
    with pytest.raises(StoreError, match="summary of session"):
        await store.append(event, recorder.state.summary())


async def test_concurrent_runners_on_one_store_keep_their_streams_apart(store: Store) -> None:
    before = wal_commits(store.path)
    results = await asyncio.gather(*(record(store, title=f"s{i}", steps=3) for i in range(4)))
    for recorder, stamped in results:
        assert await store.events(recorder.session_id) == stamped
        assert await store.items(recorder.session_id) == recorder.state.items
    assert len(await store.list_sessions()) == 4
    # Appends made while a commit ran shared the next one (each recorder awaits its own).
    appended = sum(len(stamped) for _, stamped in results)
    assert wal_commits(store.path) - before <= appended // 2


async def test_a_burst_appended_at_once_is_one_transaction(store: Store) -> None:
    burst = stamped_burst("b" * 12, [STARTED, *[e async for e in sample_agent(steps=5)]])
    before = wal_commits(store.path)
    await store.append_many(burst)
    assert wal_commits(store.path) == before + 1
    events = [event for event, _ in burst]
    state = fold(events)
    assert await store.events("b" * 12) == events
    assert await store.items("b" * 12) == state.items  # with the replace in between
    assert await store.feedback("b" * 12) == state.feedback
    assert await store.list_sessions() == [state.summary()]
    assert table_counts(store.path, "b" * 12)["llm_calls"] == state.llm_calls


async def test_one_sessions_appends_issued_back_to_back_share_commits(store: Store) -> None:
    burst = stamped_burst("e" * 12, [STARTED, *[e async for e in sample_agent(steps=5)]])
    before = wal_commits(store.path)
    # Each append is issued before the previous one's commit; each returns once committed.
    await asyncio.gather(*(store.append(event, summary) for event, summary in burst))
    assert wal_commits(store.path) - before <= len(burst) // 2
    assert await store.events("e" * 12) == [event for event, _ in burst]


async def test_a_refused_append_fails_alone_in_its_batch(store: Store) -> None:
    a = stamped_burst("a" * 12, [STARTED, Thought(step=1, text="a")])
    b = stamped_burst("b" * 12, [STARTED])
    gap = b[0][0].model_copy(update={"seq": 2})
    c = stamped_burst("c" * 12, [STARTED])
    before = wal_commits(store.path)
    outcomes = await asyncio.gather(
        store.append(*a[0]),
        store.append(gap, b[0][1]),
        store.append(*c[0]),
        return_exceptions=True,
    )
    assert wal_commits(store.path) == before + 1  # the three arrived together
    assert outcomes[0] is None and outcomes[2] is None
    assert str(outcomes[1]) == (
        f"cannot append event 2 to session {'b' * 12}: its last event is 0 (seqs are gap-free)"
    )
    # A gap in the middle of a burst: the events around it are recorded.
    with pytest.raises(StoreError, match=f"cannot append event 4 to session {'a' * 12}"):
        await store.append_many([a[1], (a[1][0].model_copy(update={"seq": 4}), a[1][1]), *b])
    assert [s.session_id for s in await store.list_sessions()] == ["a" * 12, "b" * 12, "c" * 12]
    assert await store.events("a" * 12) == [event for event, _ in a]


async def test_an_old_database_keeps_its_running_sessions_as_they_were(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    async with aiosqlite.connect(path, isolation_level=None) as conn:
        await apply_migrations(conn, MIGRATIONS[:1])  # schema 1: no owners recorded
        [(started, summary)] = stamped_burst("d" * 12, [STARTED])
        columns = SUMMARY_COLUMNS[: SUMMARY_COLUMNS.index("parent")]  # schema 1's
        schema_1_append = (
            f"INSERT INTO events_with_session ({', '.join(columns)}, seq, type, ts, json)"
            f" VALUES ({', '.join('?' * (len(columns) + 4))})"
        )
        row = summary_row(summary)[: len(columns)] + event_row(started)[1:]
        await conn.execute(schema_1_append, row)
    async with await Store.open(path) as store:
        # Its owner was never recorded: it may be a live older tui-agent, so it stays.
        assert await store.list_sessions() == [summary]
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)


async def test_a_cancelled_append_is_still_recorded(store: Store) -> None:
    recorder, _ = await record(store)
    sid, seq = recorder.session_id, recorder.state.last_seq
    items = ItemsExtracted(items=[{"late": True}], session_id=sid, seq=seq + 1)
    task = asyncio.create_task(store.append(items))
    await asyncio.sleep(0)  # the append is under way
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # The next seq follows on: the cancelled append was recorded, not rolled back.
    await store.append(Thought(step=9, text="after", session_id=sid, seq=seq + 2))
    assert [e.seq for e in await store.events(sid, after_seq=seq)] == [seq + 1, seq + 2]
    assert (await store.items(sid))[-1] == {"late": True}


async def test_sessions_are_listed_newest_first(store: Store) -> None:
    ids = []
    for ts in (30.0, 10.0, 20.0):
        sid = f"{int(ts):012d}"
        await store.append(SessionStarted(kind="exec", title="t", session_id=sid, seq=1, ts=ts))
        ids.append(sid)
    assert [s.session_id for s in await store.list_sessions()] == [ids[0], ids[2], ids[1]]


async def test_resolve_by_id_or_unique_prefix(store: Store) -> None:
    for sid in ("abc111111111", "abc222222222", "def333333333"):
        await store.append(SessionStarted(kind="exec", title="t", session_id=sid, seq=1))
    assert await store.resolve("abc111111111") == "abc111111111"
    assert await store.resolve("abc2") == "abc222222222"
    assert await store.resolve("d") == "def333333333"
    with pytest.raises(StoreError) as info:
        await store.resolve("abc")
    assert not isinstance(info.value, SessionNotFound)
    assert str(info.value) == (
        "session id 'abc' is ambiguous: several sessions' ids start with it "
        "(abc111111111, abc222222222); give more characters"
    )
    for missing in ("abd", "", "abc1111111119"):
        with pytest.raises(SessionNotFound) as info:
            await store.resolve(missing)
        assert str(info.value) == (
            f"no session {missing!r} in {store.path} (try `tui-agent sessions list`)"
        )


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.events("nope"),
        lambda s: s.state("nope"),
        lambda s: s.items("nope"),
        lambda s: s.item_count("nope"),
        lambda s: s.feedback("nope"),
        lambda s: s.delete("nope"),
        lambda s: s.export_jsonl("nope", s.path.parent / "out.jsonl"),
    ],
    ids=["events", "state", "items", "item_count", "feedback", "delete", "export"],
)
async def test_an_unknown_session_is_named_in_one_line(store: Store, call) -> None:
    await record(store)
    with pytest.raises(SessionNotFound) as info:
        await call(store)
    assert str(info.value) == f"no session 'nope' in {store.path} (try `tui-agent sessions list`)"
    assert not (store.path.parent / "out.jsonl").exists()


async def test_an_existing_session_with_no_items_reads_as_empty(store: Store) -> None:
    await store.append(SessionStarted(kind="exec", title="t", session_id="e" * 12, seq=1))
    assert await store.items("e" * 12) == []
    assert await store.item_count("e" * 12) == 0
    assert await store.feedback("e" * 12) == []
    assert len(await store.events("e" * 12, after_seq=1)) == 0


async def test_delete_removes_every_row_of_that_session_only(store: Store) -> None:
    kept, _ = await record(store, title="kept")
    gone, _ = await record(store, title="gone")
    kept_counts = table_counts(store.path, kept.session_id)
    assert all(table_counts(store.path, gone.session_id).values())
    await store.delete(gone.session_id)
    assert set(table_counts(store.path, gone.session_id).values()) == {0}
    assert table_counts(store.path, kept.session_id) == kept_counts
    assert await store.state(kept.session_id) == kept.state
    with pytest.raises(SessionNotFound):
        await store.delete(gone.session_id)


async def test_feedback_appended_to_a_finished_session(store: Store) -> None:
    recorder, _ = await record(store)
    resumed = await SessionRecorder.resume(store, recorder.session_id)
    extra = FieldFeedback(field="tags", issue="partial")
    await resumed.emit(FeedbackSubmitted(feedback=[extra]))
    feedback = await store.feedback(recorder.session_id)
    assert feedback == [*recorder.state.feedback, extra]
    assert (await store.list_sessions())[0] == resumed.state.summary()


# -- files that are not usable databases ------------------------------------------------


async def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError) as info:
        await Store.open(tmp_path)
    assert str(info.value) == f"cannot open database {tmp_path}: it is a directory"


async def test_a_path_under_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreError) as info:
        await Store.open(tmp_path / "file" / "sessions.db")
    assert str(info.value) == (
        f"cannot create database {tmp_path}/file/sessions.db: {tmp_path}/file is not a directory"
    )
    with pytest.raises(StoreError, match=r"^cannot create database .*: Not a directory$"):
        await Store.open(tmp_path / "file" / "deeper" / "sessions.db")


async def test_a_file_that_is_not_sqlite_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("these are my notes\n" * 100)
    before = digest(path)
    with pytest.raises(StoreError) as info:
        await Store.open(path)
    assert str(info.value) == f"{path} is not a tui-agent database (not an SQLite file)"
    assert digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.db"]


async def test_a_foreign_sqlite_database_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, balance REAL)")
        conn.execute("INSERT INTO accounts VALUES (1, 100.0)")
    conn.close()
    before = digest(path)
    with pytest.raises(StoreError) as info:
        await Store.open(path)
    assert str(info.value) == f"{path} is an SQLite database but not a tui-agent one"
    assert digest(path) == before


async def test_a_corrupt_database_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "corrupt.db"
    path.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 16)
    before = digest(path)
    with pytest.raises(StoreError) as info:
        await Store.open(path)
    message = str(info.value)
    assert message.startswith(f"cannot use database {path}: ")
    assert "\n" not in message
    assert digest(path) == before


async def test_a_database_from_a_newer_tui_agent_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    async with await Store.open(path) as store:
        recorder, _ = await record(store)
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    before = digest(path)
    with pytest.raises(StoreError) as info:
        await Store.open(path)
    assert str(info.value) == (
        f"database {path} was written by a newer tui-agent "
        f"(schema {SCHEMA_VERSION + 1} > {SCHEMA_VERSION}); upgrade tui-agent"
    )
    assert digest(path) == before
    with sqlite3.connect(path) as conn:
        assert (
            conn.execute("SELECT count(*) FROM events").fetchone()[0] == recorder.state.event_count
        )
    conn.close()


# -- migrations -------------------------------------------------------------------------

_V2 = ("ALTER TABLE sessions ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0",)


async def test_an_empty_file_is_migrated_to_the_current_schema(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    path.touch()
    async with await Store.open(path) as store:
        recorder, _ = await record(store)
        assert await store.state(recorder.session_id) == recorder.state
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    conn.close()


async def test_an_older_database_is_upgraded_keeping_its_data(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    async with await Store.open(path) as store:
        recorder, _ = await record(store)
    async with aiosqlite.connect(path, isolation_level=None) as conn:
        assert await apply_migrations(conn, [*MIGRATIONS, _V2]) == SCHEMA_VERSION
        assert await apply_migrations(conn, [*MIGRATIONS, _V2]) == SCHEMA_VERSION + 1  # no-op
        rows = await conn.execute_fetchall("SELECT id, pinned FROM sessions")
    assert list(rows) == [(recorder.session_id, 0)]
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION + 1,)
    conn.close()
    # ... and this code, which only knows the older schema, now refuses it.
    with pytest.raises(StoreError, match="newer tui-agent"):
        await Store.open(path)


async def test_a_failing_migration_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    async with await Store.open(path) as store:
        recorder, _ = await record(store)
    broken = (*_V2, "INSERT INTO no_such_table VALUES (1)")
    async with aiosqlite.connect(path, isolation_level=None) as conn:
        with pytest.raises(sqlite3.OperationalError, match="no such table"):
            await apply_migrations(conn, [*MIGRATIONS, broken])
        columns = [r[1] for r in await conn.execute_fetchall("PRAGMA table_info(sessions)")]
    assert "pinned" not in columns
    async with await Store.open(path) as store:
        state: SessionState = await store.state(recorder.session_id)
    assert state == recorder.state
