"""Sessions for the TUI tests and benchmarks: recorded through a real SessionRecorder into a real
SQLite file, or (for snapshots, which need fixed timestamps) appended with fixed `ts` values."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from tui_agent.analysis import analyze_output
from tui_agent.events import (
    CodeProposed,
    Event,
    ExecutionFinished,
    ExecutionStarted,
    FinalAnswer,
    ItemsExtracted,
    LLMCall,
    LogLine,
    OutputAnalyzed,
    PhaseFinished,
    PhaseStarted,
    SessionEnded,
    SessionStarted,
    Thought,
    ThoughtDelta,
    ToolCall,
    ToolResult,
)
from tui_agent.recorder import SessionRecorder
from tui_agent.session import SessionState
from tui_agent.store import Store

T0 = 1_767_268_800.0
"""2026-01-01 12:00 UTC: where the fixed-time sessions start."""

ITEMS: list[dict[str, Any]] = [
    {
        "title": "Oak desk",
        "price": 249.0,
        "url": "https://shop.test/p/1",
        "seller": {"name": "Ana"},
    },
    {"title": "Pine shelf", "price": 89.5, "url": "https://shop.test/p/2", "seller": {"name": ""}},
    {"title": "Lamp", "price": None, "url": "https://shop.test/p/3", "seller": {"name": "Bo"}},
    {"title": "Rug", "price": 120.0, "url": "", "seller": {"name": None}},
]

INTEREST_CODE = """\
principal, rate, years = 1000, 0.05, 10
amount = principal * (1 + rate) ** years
print(f"amount: {amount:.2f}")
amount"""


def started(title: str = "Compute compound interest", kind: str = "code") -> SessionStarted:
    return SessionStarted(kind=kind, title=title, model="gpt-4o-mini", agent_type="scraper")  # type: ignore[arg-type]


def codeact_payloads() -> list[Event]:
    """A codeact run: streamed thought, code, a failing then a working execution, items,
    analysis, LLM calls (one unpriced), final answer. Payloads only: the recorder stamps them."""
    return [
        ThoughtDelta(step=1, text="I will compute the "),
        ThoughtDelta(step=1, text="**compound interest** first."),
        Thought(step=1, text="I will compute the **compound interest** first."),
        LLMCall(model="gpt-4o-mini", prompt_tokens=812, completion_tokens=96, cost=0.0123, step=1),
        CodeProposed(step=1, code="amount = principal * (1 + rate) ** years"),
        ExecutionStarted(step=1, backend="local", isolated=False),
        ExecutionFinished(
            step=1,
            success=False,
            duration=0.04,
            logs=[LogLine(stream="stderr", text="warning: principal is not defined yet")],
            error={"type": "NameError", "message": "name 'principal' is not defined"},  # type: ignore[arg-type]
        ),
        Thought(step=2, text="Define the inputs, then print and return the amount."),
        LLMCall(model="gpt-4o-mini", prompt_tokens=1020, completion_tokens=140, cost=None, step=2),
        CodeProposed(step=2, code=INTEREST_CODE),
        ExecutionStarted(step=2, backend="docker", isolated=True),
        ExecutionFinished(
            step=2,
            success=True,
            duration=0.21,
            result=1628.89,
            logs=[
                LogLine(stream="stdout", text="amount: 1628.89"),
                LogLine(stream="stderr", text="note: rounded to cents"),
            ],
        ),
        ItemsExtracted(step=2, items=ITEMS),
        OutputAnalyzed(step=2, analysis=analyze_output(ITEMS)),
        Thought(step=3, text="The amount after 10 years is known."),
        FinalAnswer(step=3, text="After 10 years at 5 % the amount is **$1,628.89**."),
    ]


def scrape_payloads() -> list[Event]:
    """A web session: phases with durations and tool calls."""
    return [
        PhaseStarted(phase="plan", detail="find the product list"),
        ToolCall(call_id="c1", name="probeClick", arguments={"selector": "a.next"}),
        ToolResult(call_id="c1", name="probeClick", output="navigated to page 2", duration=0.8),
        PhaseFinished(phase="plan", duration=2.4, summary="3 verified selectors"),
        PhaseStarted(phase="extract"),
        ItemsExtracted(items=ITEMS[:2]),
        PhaseFinished(phase="extract", ok=False, duration=1.1, summary="stopped after page 1"),
    ]


async def agent_of(
    payloads: Iterable[Event], hold: asyncio.Event | None = None
) -> AsyncIterator[Event]:
    """A test agent: yields `payloads`, then waits for `hold` (if given) before ending."""
    for event in payloads:
        yield event
    if hold is not None:
        await hold.wait()


async def record(db_path: Path, first: SessionStarted, payloads: Iterable[Event]) -> SessionState:
    """Run a real SessionRecorder over a test agent into the database at `db_path`."""
    async with await Store.open(db_path) as store:
        return await SessionRecorder(store).run(first, agent_of(payloads))


def at_fixed_times(
    session_id: str,
    first: SessionStarted,
    payloads: list[Event],
    end: SessionEnded | None,
    start: float = T0,
    gap: float = 1.5,
) -> list[Event]:
    """The session's events stamped as the recorder would, but at `start + i * gap`."""
    events = [first, *payloads, *([end] if end is not None else [])]
    return [
        e.model_copy(update={"session_id": session_id, "seq": i + 1, "ts": start + i * gap})
        for i, e in enumerate(events)
    ]


async def store_events(db_path: Path, events: list[Event]) -> None:
    async with await Store.open(db_path) as store:
        for event in events:
            await store.append(event)


def fixed_sessions() -> list[list[Event]]:
    """Three sessions with fixed ids and times: completed codeact, failed scrape, running exec."""
    return [
        at_fixed_times(
            "c0de000000a1", started(), codeact_payloads(), SessionEnded(status="completed")
        ),
        at_fixed_times(
            "5c4a9e000002",
            started("Scrape desk prices from shop.test", "scrape"),
            scrape_payloads(),
            SessionEnded(status="failed", stopped_reason="selector broke"),
            start=T0 + 3600,
            gap=0.7,
        ),
        at_fixed_times(
            "e8ec00000003",
            started("Run the sample notebook", "exec"),
            codeact_payloads()[:7],
            None,
            start=T0 + 7200,
            gap=2.0,
        ),
    ]


async def wait_until(pilot: Pilot[Any], condition: Callable[[], bool], timeout: float = 10) -> None:
    """Let the app run until `condition()` holds (fails the test after `timeout` seconds)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the app never reached the awaited state")
        await pilot.pause(0.02)
