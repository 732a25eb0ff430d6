"""A session of steps: the model replies, the agent acts on the reply (runs code, calls tools),
and again, until the model answers or something stops it.

The session holds its sandbox (started at once, while the agent prepares or the first reply
streams) and what else the agent `hold`s (its MCP servers, say) from its first event to its
last; all of it is closed, shielded, however the session ends, and only then is the end
reported: a warning Log when there is a line to say, then SessionEnded. Holding is guarded:
`hold` outside the open session raises (nothing would close what it holds), and
`hold_opened` holds a thing from the moment its opening begins, so a session cancelled while
it opens still closes it.

Within the session, `run` is one run of steps. Before each step the budget may refuse the call
("budget"); `max_steps` replies without an answer stop it ("max_steps"); a failure of the model
or the sandbox ends it as failed (its Error, stopped_reason the error's name); a step may stop
it (an answer, a loop). The first stop recorded holds. A run starts from the loop's state as it
is (its messages, budget, loop guard, step numbers), so it can be run again on the same loop
after more messages are appended.
"""

from __future__ import annotations

import asyncio
import contextlib
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from tui_agent.agents.budget import Budget
from tui_agent.agents.loop_guard import DEFAULT_REPEATS, LoopGuard
from tui_agent.events import Error, Event, LLMCall, Log, SessionEnded, SessionStatus
from tui_agent.llm import LLM, LLMError, Message
from tui_agent.sandbox.base import Sandbox, SandboxError
from tui_agent.sandbox.wire import ExecuteResult

DEFAULT_MAX_STEPS = 10
FAILURES = (LLMError, SandboxError)
"""What ends a run as failed, recorded as an Error, instead of escaping it."""
T = TypeVar("T")


@dataclass(frozen=True, kw_only=True)
class StepLimits:
    """When a run stops on its own: model replies per run, USD for the session, repeated
    failures (the loop guard), seconds per code run."""

    max_steps: int = DEFAULT_MAX_STEPS
    budget: float | None = None
    loop_repeats: int = DEFAULT_REPEATS
    timeout: float


@dataclass(frozen=True)
class Stop:
    """How a run ends, and the line that says why (when there is one to say)."""

    status: SessionStatus
    reason: str | None
    log: str | None = None


class StepLoop(ABC):
    """An agent's session of steps (see the module). An agent says what a step does
    (`take_step`), and may prepare the session (`prepare`) and word its stops."""

    def __init__(self, llm: LLM, sandbox: Sandbox, limits: StepLimits) -> None:
        self.llm = llm
        self.sandbox = sandbox
        self.limits = limits
        self.messages: list[Message] = []
        """The conversation with the model: each step reads it and adds to it."""
        self.budget = Budget(llm.model, limits.budget) if limits.budget is not None else None
        self.guard = LoopGuard(limits.loop_repeats)
        self.step = 0
        """The number of the last step taken (numbered on across runs)."""
        self.replies = 0
        """The model replies of the current run: what `max_steps` counts."""
        self.stop: Stop | None = None
        """How the current run (or the preparation) stopped; None while it goes on."""
        self._held = contextlib.AsyncExitStack()
        self._holding = False
        """True while the session is open: what is held now will be closed."""
        self._starting: asyncio.Future[None] | None = None

    @abstractmethod
    def take_step(self, step: int) -> AsyncGenerator[Event, None]:
        """The events of step `step`: a model reply and what the agent does with it. A step
        that ends the run (an answer, a stop) says so with `halt`."""

    async def prepare(self) -> AsyncGenerator[Event, None]:
        """What the session does before its first run; a `halt` here ends the session.
        Nothing, unless an agent says otherwise."""
        return
        yield

    def refused_note(self, refusal: str) -> str:
        """The line of a run that the budget stops before its next reply."""
        return f"stopped before step {self.step + 1}: {refusal}"

    def out_of_steps_note(self) -> str:
        """The line of a run that `max_steps` replies did not finish."""
        return f"stopped: {self.limits.max_steps} steps ran and no answer yet"

    async def session(self) -> AsyncGenerator[Event, None]:
        """Every event of the session, SessionEnded last: the preparation, then one run. A loop
        has one session (its runs are many: see `run`)."""
        if self._starting is not None:
            raise RuntimeError("this loop's session has already run")
        self._starting = asyncio.ensure_future(self.sandbox.start())
        self._holding = True
        try:
            async with self._held:
                self._held.push_async_callback(self._close_sandbox)
                async with contextlib.aclosing(self._guarded(self.prepare())) as prepared:
                    async for event in prepared:
                        yield event
                if self.stop is None:
                    async with contextlib.aclosing(self.run()) as run:
                        async for event in run:
                            yield event
        finally:
            self._holding = False
        end = self.end()
        if end.log:
            yield Log(level="warning", message=end.log)
        yield SessionEnded(status=end.status, stopped_reason=end.reason)

    async def run(self) -> AsyncGenerator[Event, None]:
        """One run of steps, until it stops: how, `stop` says after."""
        self.stop = None
        self.replies = 0
        while self.stop is None:
            if self.replies >= self.limits.max_steps:
                self.halt("stopped", "max_steps", self.out_of_steps_note())
                break
            refusal = self.budget_refusal()
            if refusal:
                self.halt("stopped", "budget", self.refused_note(refusal))
                break
            self.replies += 1
            self.step += 1
            async with contextlib.aclosing(self._guarded(self.take_step(self.step))) as step:
                async for event in step:
                    yield event

    def end(self) -> Stop:
        """How the session ended: the stop of its last run, or of its preparation."""
        assert self.stop is not None, "the session is not over"
        return self.stop

    def halt(self, status: SessionStatus, reason: str | None, log: str | None = None) -> None:
        """Stop the run once the current step returns; the first stop recorded holds."""
        if self.stop is None:
            self.stop = Stop(status, reason, log)

    def hold(self, close: Callable[[], Awaitable[object]]) -> None:
        """Have `close()` awaited when the session ends, however it ends (shielded): the last
        held first, and the sandbox after all of them. Only while the session is open."""
        if not self._holding:
            raise RuntimeError("hold() outside the session: nothing would close what it holds")
        self._held.push_async_callback(_shielded, close)

    async def hold_opened(
        self, opening: Awaitable[T], close: Callable[[T], Awaitable[object]]
    ) -> T:
        """What `opening` opens, held (closed with `close`) from the moment its opening begins:
        when the session is cancelled while it opens, the opening goes on to its end and what
        it opened is closed with the rest."""
        opened = asyncio.ensure_future(opening)

        async def close_opened() -> None:
            [result] = await asyncio.gather(opened, return_exceptions=True)
            if not isinstance(result, BaseException):
                await close(result)

        self.hold(close_opened)
        return await asyncio.shield(opened)

    @property
    def sandbox_started(self) -> asyncio.Future[None]:
        """The sandbox's start, begun with the session: await it before running code."""
        assert self._starting is not None, "the session has not started"
        return self._starting

    def budget_refusal(self, *, reask: bool = False) -> str | None:
        """Why the next call must not be made (see Budget.refusal); None when it may."""
        return self.budget.refusal(self.messages, reask=reask) if self.budget else None

    def count_call(self, call: LLMCall) -> None:
        """Keep a finished model call against the budget."""
        if self.budget is not None:
            self.budget.record(call, self.messages)

    def check_progress(self, code: str, result: ExecuteResult) -> None:
        """Show the loop guard a run of `code`: going round in circles stops the run."""
        reason = self.guard.check(code, result)
        if reason:
            self.halt("stopped", reason, f"stopped after step {self.step}: {reason}")

    async def _guarded(self, events: AsyncGenerator[Event, None]) -> AsyncGenerator[Event, None]:
        """`events`, closed when they end however they end; a failure of the model or the
        sandbox among them is recorded (its Error) and stops the run as failed."""
        async with contextlib.aclosing(events):
            try:
                async for event in events:
                    yield event
            except FAILURES as exc:
                yield Error(message=str(exc), kind=type(exc).__name__)
                self.halt("failed", type(exc).__name__)

    async def _close_sandbox(self) -> None:
        starting = self.sandbox_started
        if not starting.done():
            starting.cancel()
        await asyncio.gather(starting, return_exceptions=True)
        await asyncio.shield(self.sandbox.close())


async def _shielded(close: Callable[[], Awaitable[object]]) -> None:
    await asyncio.shield(close())
