"""Store throughput against bare sqlite3 insert loops of the same rows, in one run.

Usage: .venv/bin/python benchmarks/store.py [--events 2000] [--repeat 5] [--sessions 8]

Every variant writes a burst of --events events, emitted back to back, into a fresh database
file with the store's settings (WAL, synchronous=NORMAL unless said otherwise). The store
group-commits: appends that arrive while a commit runs share the next transaction, and each
append returns once its own event is committed. Lines printed (median of --repeat runs,
variants interleaved):

  Store.append, 1 session   one producer awaiting each append before the next, as
                            SessionRecorder.emit does for one session: nothing to group, one
                            commit per event
  Store.append, N sessions  the burst split over --sessions sessions whose producers emit at
                            once, each awaiting its own appends in turn: they share commits
  Store.append, back to back  one session's appends issued without waiting for the previous
                            one's commit (each still returns once its own event is committed):
                            the appends made while a commit runs share the next one
  Store.append_many         one producer handing the whole burst over in one call
  sqlite3, events rows      bare loop: the events rows, one autocommitted INSERT per row (the
                            baseline of the ratios)
  sqlite3, all rows         bare loop: every row append writes (sessions upsert, events, items,
                            feedback, llm_calls) in the real schema, one transaction per event
  sqlite3, one batch        reference only: the events rows in a single transaction
  sqlite3, events, FULL     reference only: the bare events loop with synchronous=FULL (an
                            fsync per commit), the price of surviving power loss as well
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from functools import partial
from pathlib import Path

from tui_agent.analysis.shapes import FieldFeedback
from tui_agent.events import (
    CodeProposed,
    Event,
    ExecutionFinished,
    ExecutionStarted,
    FeedbackSubmitted,
    ItemsExtracted,
    LLMCall,
    LogLine,
    SessionStarted,
    Thought,
    ThoughtDelta,
)
from tui_agent.recorder import new_session_id
from tui_agent.session import SessionState, SessionSummary
from tui_agent.store import Store
from tui_agent.store.migrations import MIGRATIONS
from tui_agent.store.rows import (
    APPEND_ITEM,
    INSERT_EVENT,
    INSERT_FEEDBACK,
    INSERT_LLM_CALL,
    SUMMARY_COLUMNS,
    event_items,
    event_row,
    feedback_rows,
    llm_call_row,
    summary_row,
)

# The baseline writes the summary row with a plain upsert (the store goes through its view).
UPSERT_SESSION = (
    f"INSERT INTO sessions ({', '.join(SUMMARY_COLUMNS)})"
    f" VALUES ({', '.join('?' * len(SUMMARY_COLUMNS))}) ON CONFLICT (id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in SUMMARY_COLUMNS[1:])
)


def payloads() -> Iterator[Event]:
    """An endless agent-like stream: streamed thoughts, code, runs, items, LLM calls."""
    yield SessionStarted(kind="codeact", title="benchmark", model="gpt-4o-mini")
    step = 0
    while True:
        step += 1
        for word in ("Let me ", "fetch the ", f"page {step} ", "and parse it."):
            yield ThoughtDelta(step=step, text=word)
        yield Thought(step=step, text=f"Let me fetch the page {step} and parse it.")
        yield LLMCall(model="gpt-4o-mini", prompt_tokens=1200 + step, completion_tokens=150)
        code = f"import json\nrows = parse(fetch('https://example.org/p/{step}'))\nrows"
        yield CodeProposed(step=step, code=code)
        yield ExecutionStarted(step=step, backend="docker")
        rows = [
            {"title": f"Listing {step}.{i}", "price": 100.0 + i, "url": f"https://x/{step}/{i}"}
            for i in range(10)
        ]
        yield ExecutionFinished(
            step=step,
            success=True,
            result=rows,
            logs=[LogLine(stream="stdout", text=f"parsed {len(rows)} rows")] * 3,
            duration=0.12,
        )
        yield ItemsExtracted(items=rows, step=step)
        if step % 10 == 0:
            yield FeedbackSubmitted(feedback=[FieldFeedback(field="price", issue="format")])


Recorded = list[tuple[Event, SessionSummary]]


def recorded(n: int) -> Recorded:
    """`n` events stamped as SessionRecorder stamps them, each with the summary it would pass."""
    session_id, state, out = new_session_id(), SessionState(), []
    for seq, payload in zip(range(1, n + 1), payloads(), strict=False):
        event = payload.model_copy(update={"session_id": session_id, "seq": seq, "ts": time.time()})
        state.apply(event)
        out.append((event, state.summary()))
    return out


def bare_connection(path: Path, synchronous: str = "NORMAL") -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(f"PRAGMA synchronous = {synchronous}")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def timed_store(path: Path, write: Callable[[Store], Awaitable[None]]) -> float:
    async def run() -> float:
        async with await Store.open(path) as store:
            start = time.perf_counter()
            await write(store)
            return time.perf_counter() - start

    return asyncio.run(run())


async def one_by_one(store: Store, events: Recorded) -> None:
    for event, summary in events:
        await store.append(event, summary)


def run_store(path: Path, events: Recorded) -> float:
    return timed_store(path, partial(one_by_one, events=events))


def run_store_sessions(path: Path, streams: list[Recorded]) -> float:
    async def write(store: Store) -> None:
        await asyncio.gather(*(one_by_one(store, events) for events in streams))

    return timed_store(path, write)


def run_store_back_to_back(path: Path, events: Recorded) -> float:
    async def write(store: Store) -> None:
        await asyncio.gather(*(store.append(event, summary) for event, summary in events))

    return timed_store(path, write)


def run_store_many(path: Path, events: Recorded) -> float:
    return timed_store(path, partial(Store.append_many, records=events))


def run_bare_events(path: Path, events: Recorded, synchronous: str = "NORMAL") -> float:
    rows = [event_row(e) for e, _ in events]
    conn = bare_connection(path, synchronous)
    conn.execute(
        "CREATE TABLE events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL,"
        " ts REAL NOT NULL, json TEXT NOT NULL, PRIMARY KEY (session_id, seq))"
    )
    start = time.perf_counter()
    for row in rows:
        conn.execute(INSERT_EVENT, row)  # autocommit: each INSERT is its own transaction
    elapsed = time.perf_counter() - start
    conn.close()
    return elapsed


def run_bare_all_rows(path: Path, events: Recorded) -> float:
    prepared = []
    for event, summary in events:
        row = event_row(event)
        derived: list[tuple[str, list[tuple]]] = []
        if isinstance(event, ItemsExtracted):
            derived.append((APPEND_ITEM, [(event.session_id, t) for t in event_items(row[4])]))
        elif isinstance(event, FeedbackSubmitted):
            derived.append((INSERT_FEEDBACK, feedback_rows(event)))
        elif isinstance(event, LLMCall):
            derived.append((INSERT_LLM_CALL, [llm_call_row(event)]))
        prepared.append((summary_row(summary), row, derived))
    conn = bare_connection(path)
    for migration in MIGRATIONS:
        for statement in migration:
            conn.execute(statement)
    start = time.perf_counter()
    for session, row, derived in prepared:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(UPSERT_SESSION, session)
        conn.execute(INSERT_EVENT, row)
        for sql, params in derived:
            conn.executemany(sql, params)
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - start
    conn.close()
    return elapsed


def run_bare_batch(path: Path, events: Recorded) -> float:
    rows = [event_row(e) for e, _ in events]
    conn = bare_connection(path)
    conn.execute(
        "CREATE TABLE events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL,"
        " ts REAL NOT NULL, json TEXT NOT NULL, PRIMARY KEY (session_id, seq))"
    )
    start = time.perf_counter()
    conn.execute("BEGIN")
    conn.executemany(INSERT_EVENT, rows)
    conn.execute("COMMIT")
    elapsed = time.perf_counter() - start
    conn.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sessions", type=int, default=8)
    args = parser.parse_args()
    events = recorded(args.events)
    per_session = args.events // args.sessions
    streams = [recorded(per_session) for _ in range(args.sessions)]
    sessions = f"Store.append, {args.sessions} sessions"
    variants: dict[str, Callable[[Path], float]] = {
        "Store.append, 1 session": partial(run_store, events=events),
        sessions: partial(run_store_sessions, streams=streams),
        "Store.append, back to back": partial(run_store_back_to_back, events=events),
        "Store.append_many": partial(run_store_many, events=events),
        "sqlite3, events rows": partial(run_bare_events, events=events),
        "sqlite3, all rows": partial(run_bare_all_rows, events=events),
        "sqlite3, one batch": partial(run_bare_batch, events=events),
        "sqlite3, events, FULL": partial(run_bare_events, events=events, synchronous="FULL"),
    }
    counts = {name: args.events for name in variants} | {sessions: per_session * args.sessions}
    times: dict[str, list[float]] = {name: [] for name in variants}
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(args.repeat):
            for i, (name, variant) in enumerate(variants.items()):
                times[name].append(variant(Path(tmp) / f"{run}-{i}.db"))
    rate = {name: counts[name] / statistics.median(t) for name, t in times.items()}
    size = sum(len(event_row(e)[4]) for e, _ in events) / len(events)
    load = os.getloadavg()[0]
    print(
        f"{args.events} events (mean JSON {size:.0f} B), median of {args.repeat} runs,"
        f" load average {load:.1f} on {os.cpu_count()} CPUs"
    )
    for name, value in rate.items():
        print(f"  {name:<28} {value:>10,.0f} events/s")
    baseline = rate["sqlite3, events rows"]
    for name in list(variants)[:4]:
        print(f"  ratio {name} / bare events rows: {rate[name] / baseline:.2f}x")


if __name__ == "__main__":
    main()
