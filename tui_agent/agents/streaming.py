"""Running code in a sandbox while its output and its tool calls stream out as events."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from tui_agent.events import (
    Event,
    ExecutionOutput,
    ExecutionStarted,
    LogLine,
    ToolCall,
    ToolResult,
)
from tui_agent.sandbox.base import Sandbox, SandboxError
from tui_agent.sandbox.wire import (
    CallHandler,
    ExecuteRequest,
    ExecuteResult,
    ToolAnswer,
    ToolRequest,
)


async def execute_streaming(
    sandbox: Sandbox, request: ExecuteRequest, step: int, tools: CallHandler | None = None
) -> AsyncIterator[Event | ExecuteResult]:
    """ExecutionOutput events while `request` runs (when the sandbox reports output live),
    a ToolCall / ToolResult pair for each tool call its code makes (answered by `tools`), then
    its ExecuteResult. Closing the iteration early cancels the run."""
    events: asyncio.Queue[Event] = asyncio.Queue()
    parameters = inspect.signature(sandbox.execute).parameters
    options: dict[str, Any] = {}
    if "on_logs" in parameters:

        def on_logs(lines: list[LogLine]) -> None:
            events.put_nowait(ExecutionOutput(step=step, lines=lines))

        options["on_logs"] = on_logs
    if tools is not None:
        if "on_call" not in parameters:
            raise SandboxError(f"the {sandbox.name} sandbox cannot answer tool calls")
        options["on_call"] = recorded_calls(tools, step, events.put_nowait)
    running = asyncio.ensure_future(sandbox.execute(request, **options))
    waiting: asyncio.Future[Event] | None = None
    try:
        while not running.done():
            waiting = asyncio.ensure_future(events.get())
            await asyncio.wait({running, waiting}, return_when=asyncio.FIRST_COMPLETED)
            if waiting.done():
                yield waiting.result()
        while not events.empty():  # reported just before the run ended
            yield events.get_nowait()
        yield running.result()
    finally:
        for future in (waiting, running):
            if future is not None and not future.done():
                future.cancel()
        await asyncio.gather(running, return_exceptions=True)


def recorded_calls(tools: CallHandler, step: int, emit: Callable[[Event], None]) -> CallHandler:
    """`tools`, with a ToolCall (nested under `step`) emitted before each call and its
    ToolResult after: the output, or the failure the code gets; a tool's "Error: ..." output
    and a failure are not ok."""

    async def answer(request: ToolRequest) -> ToolAnswer:
        call_id = f"step{step}-call{request.id}"
        emit(
            ToolCall(
                call_id=call_id,
                name=request.tool,
                arguments=request.arguments,
                step=step,
                run_step=step,
            )
        )
        began = time.monotonic()
        reply = await tools(request)
        failed = reply.failure is not None
        output = (reply.failure if failed else reply.output) or ""
        emit(
            ToolResult(
                call_id=call_id,
                name=request.tool,
                output=output,
                ok=not failed and not output.startswith("Error:"),
                duration=time.monotonic() - began,
                facts={"raised": True} if failed else {},
            )
        )
        return reply

    return answer


class StepRun:
    """One step's run in a sandbox: `events()` gives ExecutionStarted, the live output (and
    the tool calls, with `tools`) and ExecutionFinished; `result` is set once they are
    exhausted."""

    def __init__(
        self,
        sandbox: Sandbox,
        request: ExecuteRequest,
        step: int,
        tools: CallHandler | None = None,
    ) -> None:
        self.sandbox = sandbox
        self.request = request
        self.step = step
        self.tools = tools
        self.result: ExecuteResult | None = None

    async def events(self) -> AsyncIterator[Event]:
        sandbox = self.sandbox
        yield ExecutionStarted(step=self.step, backend=sandbox.name, isolated=sandbox.isolated)
        async for item in execute_streaming(sandbox, self.request, self.step, self.tools):
            if isinstance(item, ExecuteResult):
                self.result = item
            else:
                yield item
        assert self.result is not None  # execute_streaming always ends with the result
        yield self.result.to_event(self.step)
