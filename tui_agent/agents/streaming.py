"""Running code in a sandbox while its output streams out as events."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator

from tui_agent.events import Event, ExecutionOutput, ExecutionStarted, LogLine
from tui_agent.sandbox.base import Sandbox
from tui_agent.sandbox.models import ExecuteRequest, ExecuteResult


async def execute_streaming(
    sandbox: Sandbox, request: ExecuteRequest, step: int
) -> AsyncIterator[ExecutionOutput | ExecuteResult]:
    """ExecutionOutput events while `request` runs (when the sandbox reports output live),
    then its ExecuteResult. Closing the iteration early cancels the run."""
    batches: asyncio.Queue[list[LogLine]] = asyncio.Queue()
    live = "on_logs" in inspect.signature(sandbox.execute).parameters
    options = {"on_logs": batches.put_nowait} if live else {}
    running = asyncio.ensure_future(sandbox.execute(request, **options))
    waiting: asyncio.Future[list[LogLine]] | None = None
    try:
        while not running.done():
            waiting = asyncio.ensure_future(batches.get())
            await asyncio.wait({running, waiting}, return_when=asyncio.FIRST_COMPLETED)
            if waiting.done():
                yield ExecutionOutput(step=step, lines=waiting.result())
        while not batches.empty():  # reported just before the run ended
            yield ExecutionOutput(step=step, lines=batches.get_nowait())
        yield running.result()
    finally:
        for future in (waiting, running):
            if future is not None and not future.done():
                future.cancel()
        await asyncio.gather(running, return_exceptions=True)


class StepRun:
    """One step's run in a sandbox: `events()` gives ExecutionStarted, the live output and
    ExecutionFinished; `result` is set once they are exhausted."""

    def __init__(self, sandbox: Sandbox, request: ExecuteRequest, step: int) -> None:
        self.sandbox = sandbox
        self.request = request
        self.step = step
        self.result: ExecuteResult | None = None

    async def events(self) -> AsyncIterator[Event]:
        sandbox = self.sandbox
        yield ExecutionStarted(step=self.step, backend=sandbox.name, isolated=sandbox.isolated)
        async for item in execute_streaming(sandbox, self.request, self.step):
            if isinstance(item, ExecuteResult):
                self.result = item
            else:
                yield item
        assert self.result is not None  # execute_streaming always ends with the result
        yield self.result.to_event(self.step)
