"""A writer process for the store tests against real processes.

Usage: python store_writer.py DB SESSION_ID STOP_FILE [stream|hold|resume]

Records through SessionRecorder (so through Store.append), printing each event's seq on its own
line as soon as the append has returned.

- stream (default): records a session step after step until STOP_FILE exists, then ends it
  ("completed"), prints "done" and exits.
- hold: records the session's start and one step, prints "holding", and ends it ("completed")
  once a line arrives on stdin; meanwhile the session is running and appends nothing.
- resume: appends a FeedbackSubmitted to the existing session SESSION_ID (so becomes one of its
  owners if it is running), prints "holding" and exits once a line arrives on stdin.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from tui_agent.analysis.shapes import FieldFeedback
from tui_agent.events import (
    CodeProposed,
    Event,
    ExecutionFinished,
    FeedbackSubmitted,
    ItemsExtracted,
    LLMCall,
    LogLine,
    SessionStarted,
    Thought,
    ThoughtDelta,
)
from tui_agent.recorder import SessionRecorder
from tui_agent.session import SessionState
from tui_agent.store import Store


def step_events(step: int) -> list[Event]:
    items = [{"title": f"item {step}.{i}", "price": step * 10 + i} for i in range(5)]
    return [
        ThoughtDelta(step=step, text="Looking at "),
        Thought(step=step, text=f"Looking at page {step} for listings."),
        CodeProposed(step=step, code=f"items = fetch_page({step})\nitems"),
        LLMCall(model="gpt-4o-mini", prompt_tokens=900, completion_tokens=120, cost=2e-4),
        ExecutionFinished(
            step=step,
            success=True,
            result=items,
            logs=[LogLine(stream="stdout", text=f"fetched {len(items)} items")],
            duration=0.01,
        ),
        ItemsExtracted(items=items, step=step),
    ]


async def steps(stop: Path) -> AsyncIterator[Event]:
    step = 0
    while not stop.exists():
        step += 1
        for event in step_events(step):
            yield event


async def held() -> AsyncIterator[Event]:
    for event in step_events(1):
        yield event
    await next_line()


async def next_line() -> None:
    print("holding", flush=True)
    await asyncio.to_thread(sys.stdin.readline)


def report(event: Event, state: SessionState) -> None:
    print(event.seq, flush=True)


async def main(db: str, session_id: str, stop: str, mode: str = "stream") -> None:
    async with await Store.open(db) as store:
        if mode == "resume":
            recorder = await SessionRecorder.resume(store, session_id, listeners=[report])
            await recorder.emit(
                FeedbackSubmitted(feedback=[FieldFeedback(field="price", issue="format")])
            )
            await next_line()
            return
        recorder = SessionRecorder(store, session_id, listeners=[report])
        agent = held() if mode == "hold" else steps(Path(stop))
        await recorder.run(SessionStarted(kind="recording", title="writer"), agent)
    print("done", flush=True)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
