"""The step loop the CodeAct and tool code agents share: the stop of a run, runs again on the
same loop, failures, what the session holds and when it is closed, the budget before a call.
Real sandboxes, the shop MCP server and the scripted model; the test loop below only says what
its steps do."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from support.mcp_shop import shop_stdio, write_config
from support.scripted_model import (
    Reply,
    ScriptedModel,
    ToolCallReply,
    action_reply,
    text,
    tool_calls,
)
from support.sessions import MODEL

from tui_agent.agents.codeact import run_codeact
from tui_agent.agents.step_loop import StepLimits, StepLoop, Stop
from tui_agent.agents.toolcode import run_toolcode
from tui_agent.agents.workspace_files import workspace_of
from tui_agent.events import Error, Event, ExecutionFinished, Log, PhaseFinished, SessionEnded
from tui_agent.llm import LLM
from tui_agent.sandbox.base import Sandbox, SandboxError
from tui_agent.sandbox.choose import open_sandbox
from tui_agent.sandbox.folders.hosted import hosted_of
from tui_agent.sandbox.wire import ExecuteRequest
from tui_agent.tools import ToolCallFailure, Toolset, load_mcp_config

TASK = "Price the kitchen products"
WAIT = 60.0


class StepsOfTest(StepLoop):
    """Each step logs "step N", then does what `actions[N]` says (if anything)."""

    def __init__(
        self,
        llm: LLM,
        sandbox: Sandbox,
        limits: StepLimits,
        actions: dict[int, Callable[[StepLoop], None]] | None = None,
    ) -> None:
        super().__init__(llm, sandbox, limits)
        self.actions = actions or {}

    async def take_step(self, step: int) -> AsyncGenerator[Event, None]:
        yield Log(message=f"step {step}")
        if step in self.actions:
            self.actions[step](self)


@pytest.fixture
def llm(server: ScriptedModel) -> LLM:
    return LLM(server.model(MODEL), api_base=server.api_base)


@pytest.fixture
def sandbox(backend: str, tmp_path: Path) -> Sandbox:
    return open_sandbox(backend, workspace=tmp_path / "workspace")


def logs(events: list[Event]) -> list[str]:
    return [e.message for e in events if isinstance(e, Log)]


async def closed(sandbox: Sandbox) -> bool:
    try:
        await sandbox.execute(ExecuteRequest(code="1"))
    except SandboxError as exc:
        return "closed" in str(exc)
    return False


async def test_the_first_stop_holds_and_ends_the_run(llm: LLM, sandbox: Sandbox):
    def answer_then_fail(loop: StepLoop) -> None:
        loop.halt("completed", None)
        loop.halt("failed", "late")

    loop = StepsOfTest(llm, sandbox, StepLimits(timeout=5), {1: answer_then_fail})
    events = [event async for event in loop.session()]
    assert logs(events) == ["step 1"]
    ended = events[-1]
    assert isinstance(ended, SessionEnded)
    assert (ended.status, ended.stopped_reason) == ("completed", None)
    assert loop.end() == Stop("completed", None)


async def test_a_loop_runs_again_with_its_messages_steps_numbered_on(llm: LLM, sandbox: Sandbox):
    loop = StepsOfTest(
        llm,
        sandbox,
        StepLimits(max_steps=2, timeout=5),
        {3: lambda loop: loop.halt("completed", None)},
    )
    first = [event async for event in loop.run()]
    assert logs(first) == ["step 1", "step 2"]
    assert loop.stop == Stop("stopped", "max_steps", "stopped: 2 steps ran and no answer yet")
    loop.messages.append({"role": "user", "content": "And the lamps?"})
    second = [event async for event in loop.run()]
    assert logs(second) == ["step 3"] and loop.stop == Stop("completed", None)
    assert loop.messages == [{"role": "user", "content": "And the lamps?"}]


async def test_a_sandbox_failure_in_a_step_is_recorded_and_the_end_follows_the_close(
    llm: LLM, sandbox: Sandbox
):
    def fail(_loop: StepLoop) -> None:
        raise SandboxError("the sandbox lost its disk")

    loop = StepsOfTest(llm, sandbox, StepLimits(timeout=5), {1: fail})
    events: list[Event] = []
    closed_at_end = None
    async for event in loop.session():
        events.append(event)
        if isinstance(event, SessionEnded):
            closed_at_end = await closed(sandbox)
    [error] = [e for e in events if isinstance(e, Error)]
    assert (error.kind, error.message) == ("SandboxError", "the sandbox lost its disk")
    ended = events[-1]
    assert isinstance(ended, SessionEnded)
    assert (ended.status, ended.stopped_reason) == ("failed", "SandboxError")
    assert closed_at_end is True, "the end was reported before the sandbox was closed"


class HoldsTwo(StepsOfTest):
    """Holds two things with the sandbox started, each of which runs code when it is closed."""

    closed: list[tuple[str, bool]]

    async def prepare(self) -> AsyncGenerator[Event, None]:
        self.closed = []
        await self.sandbox_started
        for name in ("first", "second"):
            self.hold(self._closer(name))
        yield Log(message="prepared")

    def _closer(self, name: str) -> Callable[[], Awaitable[None]]:
        async def close() -> None:
            ran = await self.sandbox.execute(ExecuteRequest(code="print('still here')"))
            self.closed.append((name, ran.success))

        return close


async def test_what_a_session_holds_is_closed_last_first_before_the_sandbox_when_left_early(
    llm: LLM, sandbox: Sandbox
):
    loop = HoldsTwo(llm, sandbox, StepLimits(timeout=30))
    session = loop.session()
    first = await anext(session)
    assert isinstance(first, Log) and first.message == "prepared"
    await session.aclose()
    assert loop.closed == [("second", True), ("first", True)]
    assert await closed(sandbox)


def agent_of(
    kind: str, llm: LLM, sandbox: Sandbox, limits: StepLimits, tmp_path: Path
) -> tuple[AsyncIterator[Event], Toolset | None]:
    if kind == "code":
        return run_codeact(TASK, llm=llm, sandbox=sandbox, limits=limits), None
    config = load_mcp_config(write_config(tmp_path / "servers.json", {"shop": shop_stdio()}))
    root = workspace_of(sandbox)
    assert root is not None
    toolset = Toolset.prepare(config, root)
    return run_toolcode(TASK, llm=llm, sandbox=sandbox, toolset=toolset, limits=limits), toolset


@pytest.mark.parametrize("kind", ["code", "toolcode"])
async def test_cancelled_mid_reply_the_session_closes_its_sandbox_and_servers(
    kind: str, server: ScriptedModel, llm: LLM, sandbox: Sandbox, tmp_path: Path
):
    server.push(text("Let me think about it", first_delay=WAIT))
    agent, toolset = agent_of(kind, llm, sandbox, StepLimits(timeout=30), tmp_path)
    events: list[Event] = []

    async def follow() -> None:
        async for event in agent:
            events.append(event)

    following = asyncio.create_task(follow())

    async def asked() -> None:
        while not server.requests:
            await asyncio.sleep(0.05)

    await asyncio.wait_for(asked(), WAIT)  # the reply is on its way
    following.cancel()
    with pytest.raises(asyncio.CancelledError):
        await following
    assert not [e for e in events if isinstance(e, SessionEnded)]
    assert await closed(sandbox)
    if toolset is not None:
        with pytest.raises(ToolCallFailure):
            await toolset.servers.call("shop", "next_number", {"value": 1}, 5)
        assert list(hosted_of(sandbox).host.iterdir()) == [], "the session's folder is left"


@pytest.mark.parametrize(
    ("kind", "note"), [("code", "stopped before step 1: "), ("toolcode", "stopped before turn 1: ")]
)
async def test_a_budget_too_small_for_one_call_stops_before_the_call(
    kind: str, note: str, server: ScriptedModel, llm: LLM, sandbox: Sandbox, tmp_path: Path
):
    server.push(text("Done."))
    limits = StepLimits(budget=0.00001, timeout=30)
    agent, _toolset = agent_of(kind, llm, sandbox, limits, tmp_path)
    events = [event async for event in agent]
    assert server.requests == [], "the call was made"
    ended = events[-1]
    assert isinstance(ended, SessionEnded)
    assert (ended.status, ended.stopped_reason) == ("stopped", "budget")
    assert logs(events)[-1].startswith(note)


def runs_code(kind: str) -> Reply:
    """A reply asking, in `kind`'s way, to run one piece of code."""
    if kind == "code":
        return action_reply("Count first.", "execute_code", code="print(6 * 7)")
    return tool_calls(ToolCallReply("write_code", {"code": "print(6 * 7)"}))


async def servers_closed(toolset: Toolset | None) -> bool:
    if toolset is None:
        return True
    try:
        await toolset.servers.call("shop", "next_number", {"value": 1}, 5)
    except ToolCallFailure:
        return True
    return False


@pytest.mark.parametrize(
    ("kind", "note"),
    [
        ("code", "stopped: 1 steps ran and no answer yet"),
        ("toolcode", "stopped: 1 model turns and no answer yet"),
    ],
)
async def test_out_of_steps_the_end_is_a_log_then_session_ended_after_everything_closed(
    kind: str, note: str, server: ScriptedModel, llm: LLM, sandbox: Sandbox, tmp_path: Path
):
    server.push(runs_code(kind))
    agent, toolset = agent_of(kind, llm, sandbox, StepLimits(max_steps=1, timeout=30), tmp_path)
    events: list[Event] = []
    closed_at_end: tuple[bool, bool] | None = None
    async for event in agent:
        events.append(event)
        if isinstance(event, SessionEnded):
            closed_at_end = (await closed(sandbox), await servers_closed(toolset))
    [ran] = [e for e in events if isinstance(e, ExecutionFinished)]
    assert ran.success
    *_, log, ended = events
    assert isinstance(log, Log) and (log.level, log.message) == ("warning", note)
    assert isinstance(ended, SessionEnded)
    assert (ended.status, ended.stopped_reason) == ("stopped", "max_steps")
    assert closed_at_end == (True, True), "the end was reported before all was closed"
    assert len(server.requests) == 1


@pytest.mark.parametrize("kind", ["code", "toolcode"])
async def test_a_sandbox_that_cannot_start_fails_the_session_with_its_error(
    kind: str, server: ScriptedModel, llm: LLM, sandbox: Sandbox, tmp_path: Path
):
    await sandbox.close()  # a real sandbox that can no longer start
    server.push(runs_code(kind))
    agent, toolset = agent_of(kind, llm, sandbox, StepLimits(timeout=30), tmp_path)
    events = [event async for event in agent]
    [error] = [e for e in events if isinstance(e, Error)]
    assert error.kind == "SandboxError" and "closed" in error.message
    ended = events[-1]
    assert isinstance(ended, SessionEnded)
    assert (ended.status, ended.stopped_reason) == ("failed", "SandboxError")
    assert await servers_closed(toolset)


async def test_cancelled_while_its_folder_is_made_the_toolcode_session_removes_it(
    llm: LLM, sandbox: Sandbox, tmp_path: Path
):
    agent, toolset = agent_of("toolcode", llm, sandbox, StepLimits(timeout=30), tmp_path)

    async def follow() -> None:
        async for event in agent:
            if isinstance(event, PhaseFinished) and event.phase == "servers":
                # cancelled at the session's next wait: the making of its hosted folder
                this = asyncio.current_task()
                assert this is not None
                this.cancel()

    with pytest.raises(asyncio.CancelledError):
        await asyncio.create_task(follow())
    assert await closed(sandbox) and await servers_closed(toolset)
    assert list(hosted_of(sandbox).host.iterdir()) == [], "the session's folder is left"


async def test_nothing_is_held_outside_the_session_and_a_loop_has_one_session(
    llm: LLM, sandbox: Sandbox
):
    loop = StepsOfTest(
        llm, sandbox, StepLimits(timeout=5), {1: lambda loop: loop.halt("completed", None)}
    )

    async def nothing() -> None:
        pass

    with pytest.raises(RuntimeError, match="outside the session"):
        loop.hold(nothing)
    events = [event async for event in loop.session()]
    assert isinstance(events[-1], SessionEnded)
    with pytest.raises(RuntimeError, match="outside the session"):
        loop.hold(nothing)
    with pytest.raises(RuntimeError, match="already run"):
        await anext(loop.session())
