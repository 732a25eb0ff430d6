"""The tool code agent: the model discovers the generated packages and writes programs that
call many tools at once, until it answers.

Events: PhaseStarted / PhaseFinished "servers" (connecting the MCP servers) and "generate"
(writing the packages in the session's hosted folder, which the sandbox reads and never
writes, removed when the session ends: sandbox/folders/hosted.py), an Artifact "tool packages" (what
discover_code_files shows), then per model turn: ThoughtDelta / Thought, LLMCall, a ToolCall /
ToolResult pair for each discover_code_files, and for each write_code the program's events
(see program.py) on a step of its own; FinalAnswer when the model answers without a call,
SessionEnded last. A server that cannot do tool calls (it refuses them, or its model writes them
as text) moves the session to CALL lines, once, said in a warning (llm/tool_fallback.py).

The run stops, with its `stopped_reason`, after `max_steps` model turns ("max_steps"), before
a call that would pass the budget ("budget"), when programs keep failing the same way
("loop: ..."), when a server cannot be started ("server_failed"), or when the provider or the
sandbox fails (the error's name). The loop itself, limits, budget, the lifetime of servers and
sandbox, is the shared step loop (step_loop/); what is tool code's is what a step does.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator, Sequence

from tui_agent.agents.approval import Approver
from tui_agent.agents.step_loop import (
    Continuation,
    Conversation,
    ModelMaker,
    Phase,
    RestoreRun,
    StepLimits,
    StepLoop,
    successful_runs,
)
from tui_agent.agents.toolcode.history import toolcode_history
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
    Thought,
    ThoughtDelta,
    ToolCall,
    ToolResult,
)
from tui_agent.llm import LLM, Message, Reply, ToolsUnsupported, clean_code
from tui_agent.llm.text_calls import parse_text_calls
from tui_agent.llm.tool_fallback import IGNORED, REFUSED, ToolMode, calls_in_text
from tui_agent.llm.tool_turns import ModelCall, answer_messages, read_calls, text_model_calls
from tui_agent.sandbox.base import Sandbox
from tui_agent.sandbox.folders.hosted import HostedFolder, hosted_of
from tui_agent.sandbox.wire import ExecuteResult
from tui_agent.tools import GenerationError, ServerStartError, Toolset, as_error

_FENCED = re.compile(r"```.*?(?:```|\Z)", re.S)
"""A fenced block: in the text protocol, the program, not prose."""
DEFAULT_TIMEOUT = 30.0
PACKAGES_FOLDER = "packages"


def run_toolcode(
    task: str,
    *,
    llm: LLM,
    sandbox: Sandbox,
    toolset: Toolset,
    limits: StepLimits | None = None,
    use_tools: bool = True,
    approver: Approver | None = None,
    conversation: Conversation | None = None,
    make_model: ModelMaker | None = None,
    continuation: Continuation | None = None,
) -> AsyncIterator[Event]:
    """The session's events, ending with SessionEnded. The sandbox starts while the servers
    connect; servers and sandbox are closed before the end is reported, however it ends.
    With a `conversation`, turns follow until it ends; with a `continuation`, the session
    goes on from its stored events (step_loop/)."""
    limits = limits or StepLimits(timeout=DEFAULT_TIMEOUT)
    loop = _ToolcodeLoop(task, llm, sandbox, toolset, limits, use_tools, approver)
    loop.conversation = conversation
    loop.make_model = make_model
    loop.continuation = continuation
    return loop.session()


class _ToolcodeLoop(StepLoop):
    """Prepared by connecting the servers and writing their packages; a step is one model
    turn, whose programs after the first take a step number each."""

    def __init__(
        self,
        task: str,
        llm: LLM,
        sandbox: Sandbox,
        toolset: Toolset,
        limits: StepLimits,
        use_tools: bool,
        approver: Approver | None,
    ) -> None:
        super().__init__(llm, sandbox, limits)
        self.task = task
        self.toolset = toolset
        self.tools = ToolMode(native=use_tools)
        """Native tool calls, or CALL lines (from the start, or after the server showed it
        cannot do them)."""
        self.approver = approver
        self.program: Program | None = None
        """Runs the programs, once the packages are written."""
        self.restorer: Program | None = None
        """Runs programs again to restore a continued session's state (never asks)."""

    def refused_note(self, refusal: str) -> str:
        return f"stopped before turn {self.replies + 1}: {refusal}"

    def out_of_steps_note(self) -> str:
        return f"stopped: {self.limits.max_steps} model turns and no answer yet"

    async def prepare(self) -> AsyncGenerator[Event, None]:
        """Connect the servers, write their packages in a hosted folder of the session's own
        (for the host's files: packages, programs), and start the conversation."""
        self.hold(self.toolset.close)
        config = self.toolset.servers.config
        phase = Phase("servers")
        names = ", ".join(entry.name for entry in config.servers)
        yield phase.started(f"{names} (from {config.path})")
        try:
            await self.toolset.connect()
        except ServerStartError as exc:
            yield phase.finished(ok=False)
            yield Error(message=str(exc), kind="ServerStartError")
            self.halt("failed", "server_failed")
            return
        listed = ", ".join(
            f"{s.name} ({len(s.tools)} tools)" for s in self.toolset.servers.listings
        )
        yield phase.finished(summary=listed)
        phase = Phase("generate")
        hosted = await self.hold_opened(
            asyncio.to_thread(lambda: hosted_of(self.sandbox).session()),
            lambda folder: asyncio.to_thread(folder.remove),
        )
        packages = hosted.host / PACKAGES_FOLDER
        yield phase.started(str(packages))
        try:
            generated = await self.toolset.generate(packages)
        except GenerationError as exc:
            yield phase.finished(ok=False)
            yield Error(message=str(exc), kind="GenerationError")
            self.halt("failed", "GenerationError")
            return
        summary = ", ".join(
            f"{g.server.package} {'written' if g.written else 'unchanged'}" for g in generated
        )
        yield phase.finished(summary=summary)
        yield Artifact(
            name="tool packages",
            content=self.toolset.discovery(),
            format="json",
            origin="generated",
            summary=f"{sum(len(g.functions) for g in generated)} functions in "
            f"{len(generated)} packages",
        )
        self.program = self._program_runner(hosted, self.approver)
        self.restorer = self._program_runner(hosted, None)
        self.messages = [
            system_message(self.limits.timeout, text_protocol=not self.tools.native),
            task_message(
                self.task, [*(p.server.package for p in self.toolset.packages), "workspace_tools"]
            ),
        ]

    def _program_runner(self, hosted: HostedFolder, approver: Approver | None) -> Program:
        return Program(
            self.sandbox,
            self.toolset.router(),
            hosted=hosted,
            packages=hosted.host / PACKAGES_FOLDER,
            timeout=self.limits.timeout,
            approver=approver,
        )

    def rebuild(self, events: Sequence[Event]) -> list[Message]:
        return [*self.messages[:2], *toolcode_history(events)]

    def restore_runs(self, events: Sequence[Event]) -> list[RestoreRun]:
        """The programs that ran successfully: each flagged when it called tools (running it
        again calls them again)."""
        calling = {e.run_step for e in events if isinstance(e, ToolCall) and e.run_step}
        return [
            dataclasses.replace(run, flag=run.flag or "it calls the MCP servers' tools again")
            if run.step in calling
            else run
            for run in successful_runs(events, network=False)
        ]

    async def rerun(self, run: RestoreRun) -> ExecuteResult:
        assert self.restorer is not None, "the session is prepared"
        finished: ExecutionFinished | None = None
        again = self.restorer.run(run.step, run.code, [], self.sandbox_started)
        async with contextlib.aclosing(again):
            async for item in again:
                if isinstance(item, ExecutionFinished):
                    finished = item
        if finished is None:
            return ExecuteResult(success=False, killed_reason="the program did not run")
        return ExecuteResult.from_event(finished)

    async def take_step(self, step: int) -> AsyncGenerator[Event, None]:
        streamed = False
        while True:
            stream = self.llm.stream(
                self.messages,
                tools=TOOL_SPECS if self.tools.native else None,
                purpose="toolcode",
                step=step,
            )
            try:
                async for delta in stream:
                    streamed = True
                    yield ThoughtDelta(step=step, text=delta)
            except ToolsUnsupported:
                if not self.tools.native:
                    raise
                yield self._fall_back(REFUSED)
                continue
            break
        reply = stream.reply
        self.count_call(reply.call)
        yield reply.call
        calls, prose = read_calls(
            reply, TOOL_SPECS, use_tools=self.tools.native, prefix=f"turn{self.replies}"
        )
        written = self._calls_as_text(reply) if not calls and not reply.tool_calls else None
        if written is not None:  # calls written as JSON in the text, not as CALL lines
            if self.tools.native:  # the server ignored the tools
                yield self._fall_back(IGNORED)
            calls, prose = written
        elif calls and not reply.tool_calls:  # the text protocol: the program is no prose
            prose = parse_text_calls(_FENCED.sub("", reply.text), TOOL_SPECS).prose
        if not calls:  # the answer: what streamed as thought was the answer itself
            if streamed:
                yield Thought(step=step, text="")
            yield FinalAnswer(step=step, text=reply.text.strip())
            self.halt("completed", None)
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
            async for item in self._call(call, reply.text):
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

    def _fall_back(self, why: str) -> Log:
        """Go over to CALL lines for the rest of the session: the system prompt says so."""
        said = self.tools.fall_back(self.llm.model, why)
        assert said is not None, "only a native session falls back"
        self.messages[0] = system_message(self.limits.timeout, text_protocol=True)
        return said

    def _calls_as_text(self, reply: Reply) -> tuple[list[ModelCall], str] | None:
        """The calls a reply writes in its text (CALL lines, or a chat template's
        `<tool_call>{...}</tool_call>` JSON) and its prose; None when there are none."""
        turn = calls_in_text(reply.text, TOOL_SPECS)
        if not turn.calls:
            return None
        return text_model_calls(turn.calls, f"turn{self.replies}"), turn.prose

    async def _call(self, call: ModelCall, text: str) -> AsyncIterator[Event | str]:
        """One call of the model's: its events, then its answer (a str)."""
        if call.name == WRITE_CODE and not call.error:
            code = call.arguments.get("code")
            if not isinstance(code, str) or not code.strip():
                code = _fenced_code(text) if not self.tools.native else None
            args = args_of(call.arguments.get("args"))
            if code and not isinstance(args, str):
                code, repairs = clean_code(code)
                if repairs:
                    yield Log(level="info", message=f"step {self.step}: " + "; ".join(repairs))
                async for item in self._program(code, args):
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

    async def _program(self, code: str, args: list[str]) -> AsyncIterator[Event | str]:
        assert self.program is not None, "the session is prepared"
        answer = ""
        run = self.program.run(self.step, code, args, self.sandbox_started)
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
            success=finished.success,
            error=finished.error,
            killed_reason=finished.killed_reason,
            logs=finished.logs,
            result=finished.result,
        )
        self.check_progress(code, outcome)


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
