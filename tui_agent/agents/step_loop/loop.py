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

With a `Conversation` (conversation.py), the session is a conversation: after each run a
TurnEnded, then it waits for the user's next message (a UserMessage opening the next turn) or
the conversation's end. A message said during a run is given to the model before its next step
(a queued UserMessage); `/model NAME` switches the model for the calls after it (ModelChanged);
an interrupt stops the run where it is ("stopped", "interrupted") and the session waits.
`max_steps` counts the replies of one run (one turn); the budget holds for the session.
"""

from __future__ import annotations

import asyncio
import contextlib
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from tui_agent.agents.budget import Budget
from tui_agent.agents.loop_guard import DEFAULT_REPEATS, LoopGuard
from tui_agent.agents.step_loop.conversation import Conversation, ModelSwitch, read_message
from tui_agent.agents.step_loop.fitting import fit_history, summary_request
from tui_agent.agents.step_loop.resume import (
    Continuation,
    FixedChoices,
    RestoreOutcome,
    RestoreRun,
    last_model,
    last_step,
    last_turn,
    restore_state,
    resumed_event,
)
from tui_agent.events import (
    OPEN_STATUSES,
    Error,
    Event,
    HistoryFitted,
    LLMCall,
    Log,
    ModelChanged,
    SessionEnded,
    SessionStatus,
    TurnEnded,
    UserMessage,
)
from tui_agent.llm import LLM, ContextTooLong, LLMError, Message, context_limit, count_tokens
from tui_agent.sandbox.base import Sandbox, SandboxError
from tui_agent.sandbox.wire import ExecuteResult
from tui_agent.session import fold

DEFAULT_MAX_STEPS = 10
FAILURES = (LLMError, SandboxError)
"""What ends a run as failed, recorded as an Error, instead of escaping it."""
T = TypeVar("T")
OVERFLOW_SHRINK = 0.6
"""A history the provider refused as too long is fitted into this share of its size."""
KEEP_LAST_TURNS = (4, 2, 1, 0)
"""The last turns kept whole when fitting, fewer while they alone do not fit (0: even the
last run's output is shortened)."""
REPLY_RESERVE = 1024
"""Tokens kept free for the reply (and the tool definitions) when fitting the history."""
NOT_ISOLATED = "the sandbox is not isolated: it runs on this machine"
INTERRUPTED = "interrupted"
"""The stopped_reason of a run the user interrupted."""
ModelMaker = Callable[[str], LLM]
"""Makes the model a `/model NAME` names (raising a UserError when it cannot be used)."""


@dataclass(frozen=True, kw_only=True)
class StepLimits:
    """When a run stops on its own: model replies per run, USD for the session, repeated
    failures (the loop guard), seconds per code run; and the model's context, which the
    history is fitted into before each reply."""

    max_steps: int = DEFAULT_MAX_STEPS
    budget: float | None = None
    loop_repeats: int = DEFAULT_REPEATS
    timeout: float
    context_tokens: int | None = None
    """Input tokens the model takes (None: what litellm knows of it, else no fitting)."""


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
        self.conversation: Conversation | None = None
        """The user's side, when the session is a conversation (None: one run, then the end)."""
        self.make_model: ModelMaker | None = None
        """How `/model NAME` gets its model (None: the command is refused)."""
        self.turn = 1
        """The conversation's current turn."""
        self.opening: str | None = None
        """A message that opens the first run (a continued session's); None: the task did."""
        self.waits_first = False
        """The first run waits for a message: a session continued with nothing said yet."""
        self.continuation: Continuation | None = None
        """What the session continues from (None: it starts afresh)."""
        self.ran: list[RestoreRun] = []
        """The code that ran successfully in this session, in order: what rebuilds the
        sandbox's state when an interrupted run took it along (see `remember_run`)."""
        self.executing = False
        """Code is running now: an interrupt stops it by stopping the sandbox's interpreter."""
        self._state_lost = False
        self.context = context_limit(llm.model, limits.context_tokens)
        """The model's context in tokens, the history is fitted into (None: unknown)."""
        self._overflowed = False

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
                restoring: list[RestoreRun] = []
                if self.continuation is not None:
                    for event in self._resumed_first(self.continuation, restoring):
                        yield event
                async with contextlib.aclosing(self._guarded(self.prepare())) as prepared:
                    async for event in prepared:
                        yield event
                if self.continuation is not None and self.stop is None:
                    go_on = self._guarded(self._continue(self.continuation, restoring))
                    async with contextlib.aclosing(go_on) as continued:
                        async for event in continued:
                            yield event
                if self.stop is None:
                    async with contextlib.aclosing(self._turns()) as turns:
                        async for event in turns:
                            yield event
        finally:
            self._holding = False
        end = self.end()
        if end.log:
            yield Log(level="warning", message=end.log)
        yield SessionEnded(status=end.status, stopped_reason=end.reason)

    def _resumed_first(self, continuation: Continuation, runs: list[RestoreRun]) -> list[Event]:
        """What a continued session records first: a fork's copy of its parent's events, then
        the SessionResumed that reopens it (`runs`: filled with the runs to restore)."""
        if continuation.restore == "state":
            found = self.restore_runs(continuation.events)
            if not self.sandbox.isolated:  # it runs on this machine: every run is asked
                found = [replace(run, flag=run.flag or NOT_ISOLATED) for run in found]
            runs.extend(found)
        copied = [e for e in continuation.events[1:] if continuation.fork]
        return [*copied, resumed_event(continuation, runs)]

    async def _continue(
        self, continuation: Continuation, runs: list[RestoreRun]
    ) -> AsyncGenerator[Event, None]:
        """The history from the stored events, the state restored, the first turn readied."""
        events = continuation.events
        self.messages = self.rebuild(events)
        self.step = last_step(events)
        self.turn = last_turn(events) + 1
        if self.budget is not None:  # the budget holds for the whole session
            self.budget.spent = sum(e.cost or 0.0 for e in events if isinstance(e, LLMCall))
        before = last_model(events)
        if before is not None and before != self.llm.model:
            yield ModelChanged(model=self.llm.model, previous=before)
        self.ran = [run for run in runs if not run.flag]
        if runs:
            await self.sandbox_started
            outcome = RestoreOutcome()
            restoring = restore_state(
                runs, continuation.choices, self.rerun, self.sandbox.reset, outcome
            )
            async with contextlib.aclosing(restoring):
                async for event in restoring:
                    yield event
            if outcome.cancelled:
                self.halt(
                    "stopped", "restore_cancelled", "stopped: restoring the state was cancelled"
                )
                return
        if continuation.message is not None:
            self.opening = continuation.message
        else:  # ready, and waiting for the user's first message
            self.waits_first = True
            before_end = fold(events)
            done = before_end.status not in OPEN_STATUSES
            status: SessionStatus = before_end.status if done else "stopped"
            reason = before_end.stopped_reason if done else f"forked at step {self.step}"
            yield TurnEnded(turn=self.turn - 1, status=status, stopped_reason=reason)

    def rebuild(self, events: Sequence[Event]) -> list[Message]:
        """The conversation with the model as the stored `events` had it."""
        raise NotImplementedError(f"{type(self).__name__} cannot be continued")

    def restore_runs(self, events: Sequence[Event]) -> list[RestoreRun]:
        """The runs that rebuild the sandbox's state, in order (none, unless an agent says)."""
        return []

    async def rerun(self, run: RestoreRun) -> ExecuteResult:
        """Run `run`'s code again to restore the state (agents with restore runs say how)."""
        raise NotImplementedError

    async def _turns(self) -> AsyncGenerator[Event, None]:
        """The runs of the session: one, or (a conversation) one per turn until it ends."""
        opening = self.opening
        if self.waits_first:
            opening = await self._next_message()
            if opening is None:
                return
        while True:
            if opening is not None:
                async for event in self._said(opening):
                    yield event
            if self._state_lost:
                async with contextlib.aclosing(self._guarded(self._restore_lost())) as restoring:
                    async for event in restoring:
                        yield event
            async with contextlib.aclosing(self._interruptible(self.run())) as run:
                async for event in run:
                    yield event
            if self.conversation is None:
                return
            assert self.stop is not None
            if self.budget is not None:
                yield Log(message=self.budget.left())
            yield TurnEnded(
                turn=self.turn, status=self.stop.status, stopped_reason=self.stop.reason
            )
            opening = None
            while opening is None:
                text = await self.conversation.next_message()
                if text is None:
                    return
                said = read_message(text)
                if isinstance(said, ModelSwitch):
                    yield self.switch_model(said.model)
                else:
                    opening = said
            self.turn += 1

    async def _next_message(self) -> str | None:
        """The first message of a continued session (model switches made on the way)."""
        if self.conversation is None:
            return None
        while (text := await self.conversation.next_message()) is not None:
            said = read_message(text)
            if not isinstance(said, ModelSwitch):
                return said
            self.switch_model(said.model)
        return None

    async def _said(self, text: str, *, queued: bool = False) -> AsyncGenerator[Event, None]:
        """The user's message, recorded and given to the model."""
        yield UserMessage(turn=self.turn, text=text, queued=queued)
        self.add_user_message(text, queued=queued)

    def add_user_message(self, text: str, *, queued: bool) -> None:
        """Give the model the user's message: joined to the last message when that is the
        user's (a run's result), so the conversation keeps its turns alternating."""
        if queued:
            text = f"Message from the user, sent while you worked:\n{text}"
        last = self.messages[-1] if self.messages else None
        if last is not None and last.get("role") == "user" and isinstance(last.get("content"), str):
            self.messages[-1] = {**last, "content": f"{last['content']}\n\n{text}"}
        else:
            self.messages.append({"role": "user", "content": text})

    def switch_model(self, model: str) -> Event:
        """Use `model` for the next calls: its ModelChanged, or the Log saying why not."""
        if self.make_model is None:
            return Log(level="error", message="this session cannot switch models")
        try:
            llm = self.make_model(model)
        except Exception as exc:  # a UserError: the model cannot be used; the session goes on
            return Log(level="error", message=f"/model {model}: {exc}")
        previous, self.llm = self.llm.model, llm
        self.context = context_limit(llm.model, self.limits.context_tokens)
        if self.budget is not None:
            self.budget.model = llm.model
        return ModelChanged(model=llm.model, previous=previous)

    async def _interruptible(
        self, events: AsyncGenerator[Event, None]
    ) -> AsyncGenerator[Event, None]:
        """`events` (a run), driven by a task of its own that the conversation's interrupt
        cancels: the run then stops as "interrupted" and the session goes on."""
        if self.conversation is None:
            async with contextlib.aclosing(events):
                async for event in events:
                    yield event
            return
        queue: asyncio.Queue[Event] = asyncio.Queue(maxsize=1)

        async def pump() -> None:
            async with contextlib.aclosing(events):
                async for event in events:
                    await queue.put(event)

        task = asyncio.create_task(pump())
        self.conversation.running(task)
        try:
            while not task.done() or not queue.empty():
                if not queue.empty():
                    yield queue.get_nowait()
                    continue
                getter = asyncio.ensure_future(queue.get())
                try:
                    await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    getter.cancel()
                if getter.done() and not getter.cancelled():
                    yield getter.result()
            if task.cancelled():
                yield Log(level="warning", message=f"step {self.step}: interrupted by you")
                self.halt("stopped", INTERRUPTED)
                self.after_interrupt()
                self._state_lost = self.executing and bool(self.ran)
                self.executing = False
            else:
                task.result()
        finally:
            self.conversation.running(None)
            if not task.done():
                task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    def remember_run(self, run: RestoreRun) -> None:
        """Keep a run that succeeded, to run again should an interrupt take the state."""
        self.ran.append(run)

    async def _restore_lost(self) -> AsyncGenerator[Event, None]:
        """After an interrupt stopped the interpreter mid-run: its state back, by running the
        session's successful code again (flagged runs left out, failures skipped)."""
        self._state_lost = False
        if not self.sandbox.isolated:
            yield Log(
                level="warning",
                message="the interrupted run stopped the interpreter; its state is not rebuilt "
                "by itself here (the sandbox is not isolated: every run is asked first)",
            )
            return
        yield Log(
            message="the interrupted run stopped the sandbox's interpreter: restoring its state"
        )
        await self.sandbox_started
        restoring = restore_state(
            self.ran,
            FixedChoices(flagged=False, on_failure="skip"),
            self.rerun,
            self.sandbox.reset,
            RestoreOutcome(),
        )
        async with contextlib.aclosing(restoring):
            async for event in restoring:
                yield event

    def after_interrupt(self) -> None:
        """Leave the conversation whole after an interrupted run: a reply of the model's whose
        action never got its result is answered as interrupted."""
        if self.messages and self.messages[-1].get("role") == "assistant":
            self.add_user_message("Interrupted by the user before it finished.", queued=False)

    async def run(self) -> AsyncGenerator[Event, None]:
        """One run of steps, until it stops: how, `stop` says after."""
        self.stop = None
        self.replies = 0
        while self.stop is None:
            if self.replies and self.conversation is not None:
                for text in self.conversation.take_queued():
                    said = read_message(text)
                    if isinstance(said, ModelSwitch):
                        yield self.switch_model(said.model)
                        continue
                    async for event in self._said(said, queued=True):
                        yield event
            if self.replies >= self.limits.max_steps:
                self.halt("stopped", "max_steps", self.out_of_steps_note())
                break
            refusal = self.budget_refusal()
            if refusal:
                self.halt("stopped", "budget", self.refused_note(refusal))
                break
            self.replies += 1
            self.step += 1
            for retry in (False, True):
                async with contextlib.aclosing(self._fitted(harder=retry)) as fitting:
                    async for event in fitting:
                        yield event
                self._overflowed = False
                taken = self._guarded(self.take_step(self.step), overflow=not retry)
                async with contextlib.aclosing(taken) as step:
                    async for event in step:
                        yield event
                if not self._overflowed:
                    break

    async def _fitted(self, *, harder: bool) -> AsyncGenerator[Event, None]:
        """Fit the history into the model's context before a reply (`harder`: the provider
        said it was too long, so into less than it holds now): the summary's model call and
        a HistoryFitted when something was done."""
        limit = self.context
        if harder:
            limit = int(count_tokens(self.llm.model, self.messages) * OVERFLOW_SHRINK)
            self.context = min(limit, self.context or limit)
        if limit is None:
            return
        calls: list[LLMCall] = []

        async def summarise(messages: list[Message]) -> str:
            reply = await self.llm.complete(
                summary_request(messages), purpose="summary", step=self.step
            )
            calls.append(reply.call)
            self.count_call(reply.call)
            return reply.text

        reserve = min(REPLY_RESERVE, limit // 4)
        fitted = None
        for keep_last in KEEP_LAST_TURNS:  # fewer whole turns only when the last ones overflow
            fitted = await fit_history(
                self.messages,
                model=self.llm.model,
                limit=limit,
                keep_last=keep_last,
                summarise=summarise,
                reserve=reserve,
            )
            if fitted is None or fitted.after <= limit - reserve:
                break
        for call in calls:
            yield call
        if fitted is None or not (fitted.shortened or fitted.summarised or fitted.dropped):
            return
        self.messages = fitted.messages
        yield HistoryFitted(
            step=self.step,
            before=fitted.before,
            after=fitted.after,
            limit=limit,
            shortened=fitted.shortened,
            summarised=fitted.summarised,
            dropped=fitted.dropped,
        )

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
            self.stop_looping(reason)

    def stop_looping(self, reason: str) -> None:
        """Stop the run for the loop guard's `reason`."""
        self.halt("stopped", reason, f"stopped after step {self.step}: {reason}")

    async def _guarded(
        self, events: AsyncGenerator[Event, None], *, overflow: bool = False
    ) -> AsyncGenerator[Event, None]:
        """`events`, closed when they end however they end; a failure of the model or the
        sandbox among them is recorded (its Error) and stops the run as failed. `overflow`: a
        reply refused as too long for the model's context is noted to be asked again."""
        async with contextlib.aclosing(events):
            try:
                async for event in events:
                    yield event
            except ContextTooLong as exc:
                if not overflow:
                    yield Error(message=str(exc), kind=type(exc).__name__)
                    self.halt("failed", type(exc).__name__)
                    return
                self._overflowed = True
                yield Log(
                    level="warning",
                    message=f"step {self.step}: the conversation is too long for "
                    f"{self.llm.model}; fitting it into less and asking again",
                )
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
