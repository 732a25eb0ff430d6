"""A writer process for the store durability tests.

Usage: python store_writer.py DB SESSION_ID STOP_FILE

Records a session through SessionRunner (so through Store.append), printing each event's
seq on its own line as soon as the append has returned. It keeps going until STOP_FILE
exists, then ends the session ("completed"), prints "done" and exits.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from tui_agent.events import (
    CodeProposed,
    Event,
    ExecutionFinished,
    ItemsExtracted,
    LLMCall,
    LogLine,
    SessionStarted,
    Thought,
    ThoughtDelta,
)
from tui_agent.recorder import SessionRunner
from tui_agent.session import SessionState
from tui_agent.store import Store


async def steps(stop: Path) -> AsyncIterator[Event]:
    step = 0
    while not stop.exists():
        step += 1
        yield ThoughtDelta(step=step, text="Looking at ")
        yield Thought(step=step, text=f"Looking at page {step} for listings.")
        yield CodeProposed(step=step, code=f"items = fetch_page({step})\nitems")
        yield LLMCall(model="gpt-4o-mini", prompt_tokens=900, completion_tokens=120, cost=2e-4)
        items = [{"title": f"item {step}.{i}", "price": step * 10 + i} for i in range(5)]
        yield ExecutionFinished(
            step=step,
            success=True,
            result=items,
            logs=[LogLine(stream="stdout", text=f"fetched {len(items)} items")],
            duration=0.01,
        )
        yield ItemsExtracted(items=items, step=step)


def report(event: Event, state: SessionState) -> None:
    print(event.seq, flush=True)


async def main(db: str, session_id: str, stop: str) -> None:
    async with await Store.open(db) as store:
        runner = SessionRunner(store, session_id, listeners=[report])
        await runner.run(SessionStarted(kind="recording", title="writer"), steps(Path(stop)))
    print("done", flush=True)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
