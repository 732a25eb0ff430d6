"""JSONL export/import: lossless both ways; a bad file names its bad line and imports nothing."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import tempfile
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tui_agent.analysis.shapes import FieldFeedback
from tui_agent.events import (
    SCHEMA_VERSION,
    Event,
    ExecutionFinished,
    FeedbackSubmitted,
    ItemsExtracted,
    LLMCall,
    SessionEnded,
    SessionStarted,
    Thought,
)
from tui_agent.recorder import SessionRecorder
from tui_agent.session import fold
from tui_agent.store import JsonlError, Store, StoreError, read_jsonl

SID = "5e551011d000"


async def agent(items: list[Any]) -> AsyncIterator[Event]:
    yield Thought(step=1, text="Extracting the listings — «quoted» 🚀")
    yield LLMCall(model="gpt-4o-mini", prompt_tokens=10, completion_tokens=5, cost=1.25e-05)
    yield LLMCall(model="local/unknown", prompt_tokens=7, cost=None, cached=True)
    yield ExecutionFinished(step=1, success=True, result={"items": items, "n": len(items)})
    yield ItemsExtracted(items=items[:1], step=1)
    yield ItemsExtracted(items=items, step=1, replace=True)
    yield FeedbackSubmitted(feedback=[FieldFeedback(field="price", issue="wrong", notes="€")])


async def record(store: Store, items: list[Any], session_id: str = SID) -> SessionRecorder:
    recorder = SessionRecorder(store, session_id)
    await recorder.run(SessionStarted(kind="scrape", title="listings", model="m"), agent(items))
    return recorder


def db_rows(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table (but the sessions row, which the round trip re-derives)."""
    with sqlite3.connect(db) as conn:
        rows = {
            t: conn.execute(f"SELECT * FROM {t} ORDER BY 1, 2, 3").fetchall()
            for t in ("events", "items", "feedback", "llm_calls")
        }
    conn.close()
    return rows


ITEMS = [
    {"title": "Flat, 2 rooms", "price": 1200.5, "seller": {"name": "Ana"}, "tags": ["a", "b"]},
    {"title": "", "price": None, "seller": {}, "tags": []},
    {"title": "Ünïcode ✓", "price": 0, "big": 2**70, "ok": False, "tiny": 1e-300},
]


async def test_export_import_export_is_byte_identical(tmp_path: Path) -> None:
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    async with await Store.open(tmp_path / "a.db") as a:
        recorder = await record(a, ITEMS)
        assert await a.export_jsonl(SID, first) == recorder.state.event_count
        original = await a.events(SID)
        original_summaries = await a.list_sessions()
    async with await Store.open(tmp_path / "b.db") as b:
        assert await b.import_jsonl(first) == SID
        assert await b.export_jsonl(SID, second) == recorder.state.event_count
        imported = await b.events(SID)
        assert await b.list_sessions() == original_summaries
        assert await b.items(SID) == recorder.state.items
        assert await b.feedback(SID) == recorder.state.feedback
    assert second.read_bytes() == first.read_bytes()
    assert first.read_text(encoding="utf-8").splitlines() == [e.model_dump_json() for e in original]
    assert imported == original
    assert fold(imported) == fold(original) == recorder.state
    assert db_rows(tmp_path / "b.db") == db_rows(tmp_path / "a.db")


json_values = st.recursive(
    # NaN round-trips byte for byte too, but NaN != NaN would defeat the fold comparison.
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=st.lists(json_values, min_size=1, max_size=5))
def test_round_trip_of_any_json_items(items: list[Any]) -> None:
    async def round_trip(tmp: Path) -> None:
        async with await Store.open(tmp / "a.db") as a:
            await record(a, items)
            await a.export_jsonl(SID, tmp / "first.jsonl")
            original = await a.events(SID)
            original_items = await a.items(SID)
        async with await Store.open(tmp / "b.db") as b:
            await b.import_jsonl(tmp / "first.jsonl")
            await b.export_jsonl(SID, tmp / "second.jsonl")
            assert fold(await b.events(SID)) == fold(original)
            assert await b.items(SID) == original_items == fold(original).items
        assert (tmp / "second.jsonl").read_bytes() == (tmp / "first.jsonl").read_bytes()
        assert db_rows(tmp / "b.db") == db_rows(tmp / "a.db")

    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(round_trip(Path(tmp)))


async def test_importing_an_existing_session_is_refused(tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "a.db") as a:
        recorder = await record(a, ITEMS)
        await a.export_jsonl(SID, tmp_path / "s.jsonl")
        before = db_rows(a.path)
        with pytest.raises(StoreError) as info:
            await a.import_jsonl(tmp_path / "s.jsonl")
        assert str(info.value) == (
            f"session {SID} already exists in {a.path}; delete it first "
            f"(`tui-agent sessions delete {SID}`)"
        )
        assert db_rows(a.path) == before
        assert await a.state(SID) == recorder.state


async def test_export_replaces_the_target_and_fails_cleanly(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    target.write_text("old contents\n")
    async with await Store.open(tmp_path / "a.db") as a:
        recorder = await record(a, ITEMS)
        assert await a.export_jsonl(SID, target) == recorder.state.event_count
        assert read_jsonl(target) == await a.events(SID)
        with pytest.raises(StoreError) as info:
            await a.export_jsonl(SID, tmp_path / "missing" / "out.jsonl")
        with pytest.raises(StoreError, match="Is a directory"):
            await a.export_jsonl(SID, tmp_path)
    assert (
        str(info.value) == f"cannot write {tmp_path}/missing/out.jsonl: No such file or directory"
    )
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_blank_lines_and_crlf_are_tolerated(tmp_path: Path) -> None:
    lines = [
        SessionStarted(kind="exec", title="t", session_id=SID, seq=1, ts=1.0).model_dump_json(),
        SessionEnded(status="completed", session_id=SID, seq=2, ts=2.0).model_dump_json(),
    ]
    path = tmp_path / "s.jsonl"
    path.write_bytes(("\n" + lines[0] + "\r\n\n" + lines[1] + "\r\n\n").encode())
    assert [e.seq for e in read_jsonl(path)] == [1, 2]


# -- bad files ---------------------------------------------------------------------------


def line(event: type, **fields: Any) -> str:
    fields.setdefault("session_id", SID)
    fields.setdefault("ts", 1.0)
    return json.dumps(json.loads(event(**fields).model_dump_json()))


START = line(SessionStarted, kind="exec", title="t", seq=1)
THOUGHT2 = line(Thought, step=1, text="x", seq=2)
END3 = line(SessionEnded, status="completed", seq=3)


def newer(text: str) -> str:
    data = json.loads(text)
    data["schema_version"] = SCHEMA_VERSION + 1
    return json.dumps(data)


def retyped(text: str, new_type: str) -> str:
    return json.dumps({**json.loads(text), "type": new_type})


BAD_FILES: list[tuple[str, Callable[[], bytes], int, str]] = [
    ("bad json", lambda: f"{START}\n{THOUGHT2}\n{END3[:-5]}\n".encode(), 3, "not valid JSON ("),
    (
        "unknown type",
        lambda: f"{START}\n{retyped(THOUGHT2, 'telepathy')}\n".encode(),
        2,
        "unknown event type 'telepathy'",
    ),
    (
        "mixed sessions",
        lambda: (
            f"{START}\n{line(Thought, step=1, text='x', seq=2, session_id='0' * 12)}\n".encode()
        ),
        2,
        f"event of session '000000000000' in a file of session '{SID}'",
    ),
    (
        "seq gap",
        lambda: f"{START}\n{END3}\n".encode(),
        2,
        "seq 3, expected 2 (seqs run 1..n without gaps)",
    ),
    (
        "seq repeat",
        lambda: f"{START}\n{START}\n".encode(),
        2,
        "seq 1, expected 2 (seqs run 1..n without gaps)",
    ),
    (
        "newer schema",
        lambda: f"{START}\n{THOUGHT2}\n{newer(END3)}\n".encode(),
        3,
        f"event schema {SCHEMA_VERSION + 1} is newer than this tui-agent supports "
        f"({SCHEMA_VERSION}); upgrade tui-agent",
    ),
    ("empty file", lambda: b"", 1, "empty file: no events"),
    ("only blank lines", lambda: b"\n  \n\n", 1, "empty file: no events"),
    (
        "not started first",
        lambda: f"{THOUGHT2}\n".encode(),
        1,
        "expected session_started first, got thought",
    ),
    (
        "no session id",
        lambda: f"{line(SessionStarted, kind='exec', title='t', seq=1, session_id='')}\n".encode(),
        1,
        "the event has no session_id",
    ),
    ("not an object", lambda: f"{START}\n[1, 2]\n".encode(), 2, "not an event (a JSON object"),
    ("no type", lambda: f'{START}\n{{"seq": 2}}\n'.encode(), 2, "not an event (no 'type' field)"),
    (
        "invalid field",
        lambda: f"{START}\n{json.dumps({**json.loads(THOUGHT2), 'step': 'one'})}\n".encode(),
        2,
        "invalid thought event: step: Input should be a valid integer",
    ),
    ("not utf-8", lambda: f"{START}\n".encode() + b'{"type": "\xff"}\n', 2, "not UTF-8 text"),
]


@pytest.mark.parametrize(
    ("make", "bad_line", "reason"),
    [case[1:] for case in BAD_FILES],
    ids=[case[0] for case in BAD_FILES],
)
async def test_a_bad_file_names_its_line_and_imports_nothing(
    tmp_path: Path, make: Callable[[], bytes], bad_line: int, reason: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(make())
    with pytest.raises(JsonlError) as info:
        read_jsonl(path)
    assert info.value.line == bad_line
    assert str(info.value).startswith(f"{path} line {bad_line}: {reason}")
    assert "\n" not in str(info.value)

    async with await Store.open(tmp_path / "a.db") as store:
        await record(store, ITEMS, session_id="0" * 12)  # already recorded data stays as is
        before = db_rows(store.path)
        summaries = await store.list_sessions()
        with pytest.raises(JsonlError) as again:
            await store.import_jsonl(path)
        assert str(again.value) == str(info.value)
        assert db_rows(store.path) == before
        assert await store.list_sessions() == summaries


async def test_an_unreadable_file_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError) as info:
        read_jsonl(tmp_path / "nope.jsonl")
    assert not isinstance(info.value, JsonlError)
    assert str(info.value) == f"cannot read {tmp_path}/nope.jsonl: No such file or directory"
    async with await Store.open(tmp_path / "a.db") as store:
        with pytest.raises(StoreError, match="Is a directory"):
            await store.import_jsonl(tmp_path)
