"""The tool code agent: the model discovers the generated packages and writes programs that
call many tools at once, until it answers.

Events: PhaseStarted / PhaseFinished "servers" (connecting the MCP servers) and "generate"
(writing the packages in the session's hosted folder, which the sandbox reads and never
writes, removed when the session ends: sandbox/folders/hosted.py), an Artifact "tool packages" (what
discover_code_files shows), then per model turn: ThoughtDelta / Thought, LLMCall, a ToolCall /
ToolResult pair for each discover_code_files, and for each write_code the program's events
(see program.py) on a step of its own; FinalAnswer when the model answers without a call,
SessionEnded last.

The run stops, with its `stopped_reason`, after `max_steps` model turns ("max_steps"), before
a call that would pass the budget ("budget"), when programs keep failing the same way
("loop: ..."), when a server cannot be started ("server_failed"), or when the provider fails
(the LLMError's name).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

from tui_agent.agents.approval import Approver
from tui_agent.agents.budget import Budget
from tui_agent.agents.loop_guard import LoopGuard
from tui_agent.agents.toolcode.program import Program, args_of
from tui_agent.agents.toolcode.prompts import (
    DISCOVER,
    TOOL_SPECS,
    WRITE_CODE,
    system_message,
    task_message,
)
from tui_agent.events import (
    Artifact,
    Error,
    Event,
    ExecutionFinished,
    FinalAnswer,
    Log,
    PhaseFinished,
    PhaseStarted,
    SessionEnded,
    SessionStatus,
    Thought,
    ThoughtDelta,
    ToolCall,
    ToolResult,
)
from tui_agent.llm import LLM, LLMError, Message
from tui_agent.llm.text_calls import parse_text_calls
from tui_agent.llm.tool_turns import ModelCall, answer_messages, read_calls
from tui_agent.sandbox.base import Sandbox, SandboxError
from tui_agent.sandbox.folders.hosted import HostedFolder, hosted_of
from tui_agent.sandbox.models import ExecuteResult
from tui_agent.tools import GenerationError, ServerStartError, Toolset, as_error

DEFAULT_MAX_STEPS = 10
_FENCED = re.compile(r"```.*?(?:```|\Z)", re.S)
"""A fenced block: in the text protocol, the program, not prose."""
DEFAULT_TIMEOUT = 30.0
PACKAGES_FOLDER = "packages"


@dataclass(frozen=True)
class ToolcodeLimits:
    """When the agent stops on its own: model turns, USD, seconds per program."""

    max_steps: int = DEFAULT_MAX_STEPS
    budget: float | None = None
    timeout: float = DEFAULT_TIMEOUT


@dataclass(frozen=True)
class _Stop:
    status: SessionStatus
    reason: str | None
    log: str | None = None


async def run_toolcode(
    task: str,
    *,
    llm: LLM,
    sandbox: Sandbox,
    toolset: Toolset,
    limits: ToolcodeLimits | None = None,
    use_tools: bool = True,
    approver: Approver | None = None,
) -> AsyncIterator[Event]:
    """The session's events, ending with SessionEnded. The sandbox starts while the servers
    connect; servers and sandbox are closed before the end is reported, however it ends."""
    starting = asyncio.ensure_future(sandbox.start())
    loop = _Loop(task, llm, sandbox, toolset, limits or ToolcodeLimits(), use_tools, approver)
    try:
        async for event in loop.run(starting):
            yield event
    finally:
        if not starting.done():
            starting.cancel()
        await asyncio.gather(starting, return_exceptions=True)
        await asyncio.shield(toolset.close())
        await asyncio.shield(sandbox.close())
        if loop.hosted is not None:
            await asyncio.to_thread(loop.hosted.remove)
    end = loop.end()
    if end.log:
        yield Log(level="warning", message=end.log)
    yield SessionEnded(status=end.status, stopped_reason=end.reason)


class _Loop:
    def __init__(
        self,
        task: str,
        llm: LLM,
        sandbox: Sandbox,
        toolset: Toolset,
        limits: ToolcodeLimits,
        use_tools: bool,
        approver: Approver | None,
    ) -> None:
        self.task = task
        self.llm = llm
        self.sandbox = sandbox
        self.toolset = toolset
        self.limits = limits
        self.use_tools = use_tools
        self.approver = approver
        self.messages: list[Message] = []
        self.budget = Budget(llm.model, limits.budget) if limits.budget is not None else None
        self.guard = LoopGuard()
        self.stop: _Stop | None = None
        self.hosted: HostedFolder | None = None
        """The session's own folder for the host's files (packages, programs)."""
        self.step = 0
        self.turns = 0

    def end(self) -> _Stop:
        if self.stop is not None:
            return self.stop
        turns = self.limits.max_steps
        return _Stop("stopped", "max_steps", f"stopped: {turns} model turns and no answer yet")

    async def run(self, starting: asyncio.Future[None]) -> AsyncIterator[Event]:
        async for event in self._prepare():
            yield event
        if self.stop is not None:
            return
        assert self.hosted is not None
        program = Program(
            self.sandbox,
            self.toolset.router(),
            hosted=self.hosted,
            packages=self.hosted.host / PACKAGES_FOLDER,
            timeout=self.limits.timeout,
            approver=self.approver,
        )
        packages = [p.server.package for p in self.toolset.packages]
        self.messages = [
            system_message(self.limits.timeout, text_protocol=not self.use_tools),
            task_message(self.task, [*packages, "workspace_tools"]),
        ]
        while self.turns < self.limits.max_steps and self.stop is None:
            try:
                async for event in self._turn(program, starting):
                    yield event
            except LLMError as exc:
                yield Error(message=str(exc), kind=type(exc).__name__)
                self.stop = _Stop("failed", type(exc).__name__)
            except SandboxError as exc:
                yield Error(message=str(exc), kind="SandboxError")
                self.stop = _Stop("failed", "SandboxError")

    async def _prepare(self) -> AsyncIterator[Event]:
        """Connect the servers and write their packages."""
        config = self.toolset.servers.config
        began = time.monotonic()
        names = ", ".join(entry.name for entry in config.servers)
        yield PhaseStarted(phase="servers", detail=f"{names} (from {config.path})")
        try:
            await self.toolset.connect()
        except ServerStartError as exc:
            yield PhaseFinished(phase="servers", ok=False, duration=time.monotonic() - began)
            yield Error(message=str(exc), kind="ServerStartError")
            self.stop = _Stop("failed", "server_failed")
            return
        listed = ", ".join(
            f"{s.name} ({len(s.tools)} tools)" for s in self.toolset.servers.listings
        )
        yield PhaseFinished(phase="servers", duration=time.monotonic() - began, summary=listed)
        began = time.monotonic()
        try:
            self.hosted = await asyncio.to_thread(lambda: hosted_of(self.sandbox).session())
        except SandboxError as exc:
            yield Error(message=str(exc), kind="SandboxError")
            self.stop = _Stop("failed", "SandboxError")
            return
        packages = self.hosted.host / PACKAGES_FOLDER
        yield PhaseStarted(phase="generate", detail=str(packages))
        try:
            generated = await self.toolset.generate(packages)
        except GenerationError as exc:
            yield PhaseFinished(phase="generate", ok=False, duration=time.monotonic() - began)
            yield Error(message=str(exc), kind="GenerationError")
            self.stop = _Stop("failed", "GenerationError")
            return
        summary = ", ".join(
            f"{g.server.package} {'written' if g.written else 'unchanged'}" for g in generated
        )
        yield PhaseFinished(phase="generate", duration=time.monotonic() - began, summary=summary)
        yield Artifact(
            name="tool packages",
            content=self.toolset.discovery(),
            format="json",
            origin="generated",
            summary=f"{sum(len(g.functions) for g in generated)} functions in "
            f"{len(generated)} packages",
        )

    async def _turn(self, program: Program, starting: asyncio.Future[None]) -> AsyncIterator[Event]:
        refusal = self.budget.refusal(self.messages) if self.budget else None
        if refusal:
            self.stop = _Stop(
                "stopped", "budget", f"stopped before turn {self.turns + 1}: {refusal}"
            )
            return
        self.turns += 1
        self.step += 1
        step = self.step
        stream = self.llm.stream(
            self.messages,
            tools=TOOL_SPECS if self.use_tools else None,
            purpose="toolcode",
            step=step,
        )
        streamed = False
        async for delta in stream:
            streamed = True
            yield ThoughtDelta(step=step, text=delta)
        reply = stream.reply
        if self.budget is not None:
            self.budget.record(reply.call, self.messages)
        yield reply.call
        calls, prose = read_calls(
            reply, TOOL_SPECS, use_tools=self.use_tools, prefix=f"turn{self.turns}"
        )
        if calls and not reply.tool_calls:  # the text protocol: the program is no prose
            prose = parse_text_calls(_FENCED.sub("", reply.text), TOOL_SPECS).prose
        if not calls:  # the answer: what streamed as thought was the answer itself
            if streamed:
                yield Thought(step=step, text="")
            yield FinalAnswer(step=step, text=reply.text.strip())
            self.stop = _Stop("completed", None)
            return
        if prose or streamed:
            yield Thought(step=step, text=prose)
        answers: list[str] = []
        programs = 0
        for call in calls:
            if call.name == WRITE_CODE and not call.error:
                programs += 1
                if programs > 1:
                    self.step += 1
            answer = ""
            async for item in self._call(call, reply.text, program, starting):
                if isinstance(item, str):
                    answer = item
                else:
                    yield item
            answers.append(answer)
            if self.stop is not None:
                break
        answers += ["Not run: the session stopped."] * (len(calls) - len(answers))
        shown = [_shown(call) for call in calls]
        self.messages += answer_messages(reply, shown, answers, native=bool(reply.tool_calls))

    async def _call(
        self, call: ModelCall, text: str, program: Program, starting: asyncio.Future[None]
    ) -> AsyncIterator[Event | str]:
        """One call of the model's: its events, then its answer (a str)."""
        if call.name == WRITE_CODE and not call.error:
            code = call.arguments.get("code")
            if not isinstance(code, str) or not code.strip():
                code = _fenced_code(text) if not self.use_tools else None
            args = args_of(call.arguments.get("args"))
            if code and not isinstance(args, str):
                async for item in self._program(program, code, args, starting):
                    yield item
                return
            call = dataclasses.replace(
                call,
                error=args
                if isinstance(args, str)
                else "Error: write_code needs the program "
                "in `code` (or, in the text protocol, in a ```python block after the CALL line)",
            )
        call_id = f"{call.id}-{self.step}"
        arguments = call.arguments if not call.error else {"raw": call.raw[:2000]}
        yield ToolCall(call_id=call_id, name=call.name, arguments=arguments, step=self.step)
        began = time.monotonic()
        if call.error:
            output = as_error(call.error.removeprefix("Error: "))
        elif call.name == DISCOVER:
            output = self.toolset.discovery()
        else:
            output = f"Error: no tool {call.name!r}; the tools are {DISCOVER} and {WRITE_CODE}"
        ok = not output.startswith("Error:")
        yield ToolResult(
            call_id=call_id,
            name=call.name,
            output=output,
            ok=ok,
            duration=time.monotonic() - began,
        )
        yield output

    async def _program(
        self, program: Program, code: str, args: list[str], starting: asyncio.Future[None]
    ) -> AsyncIterator[Event | str]:
        answer = ""
        run = program.run(self.step, code, args, starting)
        async with contextlib.aclosing(run):
            async for item in run:
                if isinstance(item, str):
                    answer = item
                else:
                    yield item
                    if isinstance(item, ExecutionFinished):
                        self._check_loop(code, item)
        yield answer

    def _check_loop(self, code: str, finished: ExecutionFinished) -> None:
        outcome = ExecuteResult(
            success=finished.success, error=finished.error, killed_reason=finished.killed_reason
        )
        reason = self.guard.check(code, outcome)
        if reason:
            self.stop = _Stop("stopped", reason, f"stopped after step {self.step}: {reason}")


def _shown(call: ModelCall) -> ModelCall:
    """The call as echoed in a RESULT block: write_code without its (long) code."""
    if call.name != WRITE_CODE or call.error:
        return call
    kept = {key: value for key, value in call.arguments.items() if key != "code"}
    return dataclasses.replace(call, arguments=kept)


def _fenced_code(text: str) -> str | None:
    """The first ```python block of a reply (the text protocol's program)."""
    start = text.find("```python")
    if start < 0:
        start = text.find("```py")
    if start < 0:
        return None
    body = text[text.index("\n", start) + 1 :] if "\n" in text[start:] else ""
    end = body.find("```")
    code = body[:end] if end >= 0 else body
    return code.strip("\n") or None
