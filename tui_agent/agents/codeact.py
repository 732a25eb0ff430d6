"""The CodeAct agent: think, run code in one stateful sandbox, read, repeat, answer.

The conversation is the system prompt, the task, then per step the model's JSON action and
an `EXECUTION_RESULT: ...` message, until the model gives its answer. Events, per step:
ThoughtDelta as the thought streams, Thought when its string closes, CodeProposed as soon as
the code's string closes (again if the validated action differs), LLMCall per call (re-asks
included, each noted by a Log), ExecutionStarted, ExecutionOutput while the code prints,
ExecutionFinished; FinalAnswer at the end. Results go back as user messages (see prompts.py).

The run stops, with its `stopped_reason`, at `max_steps`, before a call that would pass the
budget ("budget"), when it goes round in circles ("loop: ..."), when the model gives no usable
action after its re-asks ("invalid_reply"), or when the provider fails (the LLMError's name).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

from tui_agent.agents.action_turn import stream_turn
from tui_agent.agents.approval import Approver
from tui_agent.agents.budget import Budget
from tui_agent.agents.codeact_prompts import (
    assistant_message,
    result_message,
    skipped_message,
    system_message,
    task_message,
)
from tui_agent.agents.loop_guard import DEFAULT_REPEATS, LoopGuard
from tui_agent.agents.streaming import StepRun
from tui_agent.agents.workspace_files import with_written_files, workspace_of
from tui_agent.events import (
    CodeProposed,
    Error,
    Event,
    FinalAnswer,
    LLMCall,
    Log,
    SessionEnded,
    SessionStatus,
)
from tui_agent.llm import (
    LLM,
    Action,
    ActionOutcome,
    InvalidReply,
    LLMError,
    Message,
)
from tui_agent.sandbox.base import Sandbox
from tui_agent.sandbox.models import ExecuteRequest

DEFAULT_MAX_STEPS = 10
DEFAULT_TIMEOUT = 60.0
CODE_ACTIONS = {
    "execute_code": "execute_code",
    "debug_error": "debug_error",
    "continue_debugging": "debug_error",
}
"""Action names (as the model may write them) that run code, and what they are read as."""


@dataclass(frozen=True)
class CodeActLimits:
    """When the agent stops on its own: steps, USD, repeated errors, seconds per run."""

    max_steps: int = DEFAULT_MAX_STEPS
    budget: float | None = None
    loop_repeats: int = DEFAULT_REPEATS
    timeout: float = DEFAULT_TIMEOUT


async def run_codeact(
    task: str,
    *,
    llm: LLM,
    sandbox: Sandbox,
    limits: CodeActLimits | None = None,
    approver: Approver | None = None,
    network: bool = False,
) -> AsyncIterator[Event]:
    """The agent's events, ending with SessionEnded. `sandbox` starts while the first reply
    streams and is closed before the end is reported (or when the run is cancelled); with an
    `approver`, every run waits for its decision."""
    starting = asyncio.create_task(sandbox.start())
    loop = _Loop(task, llm, sandbox, limits or CodeActLimits(), approver, network, starting)
    try:
        async for event in loop.run():
            yield event
    finally:
        if not starting.done():
            starting.cancel()
        await asyncio.gather(starting, return_exceptions=True)
        await asyncio.shield(sandbox.close())
    end = loop.end()
    if end.log:
        yield Log(level="warning", message=end.log)
    yield SessionEnded(status=end.status, stopped_reason=end.reason)


@dataclass(frozen=True)
class _Stop:
    """How the run ends, and the line that says why (when there is one to say)."""

    status: SessionStatus
    reason: str | None
    log: str | None = None


class _Loop:
    """One run: the conversation, the budget and the loop guard, step after step."""

    def __init__(
        self,
        task: str,
        llm: LLM,
        sandbox: Sandbox,
        limits: CodeActLimits,
        approver: Approver | None,
        network: bool,
        starting: asyncio.Task[None],
    ) -> None:
        self.llm = llm
        self.sandbox = sandbox
        self.limits = limits
        self.approver = approver
        self.starting = starting
        self.messages: list[Message] = [system_message(network), task_message(task)]
        self.budget = Budget(llm.model, limits.budget) if limits.budget is not None else None
        self.guard = LoopGuard(limits.loop_repeats)
        self.stop: _Stop | None = None

    def end(self) -> _Stop:
        """How the run ended (after `run` was exhausted)."""
        if self.stop is not None:
            return self.stop
        steps = self.limits.max_steps
        return _Stop("stopped", "max_steps", f"stopped: {steps} steps ran and no answer yet")

    async def run(self) -> AsyncIterator[Event]:
        """Every event of the run but its end (see `end`)."""
        for step in range(1, self.limits.max_steps + 1):
            async for event in self._step(step):
                yield event
            if self.stop is not None:
                return

    async def _step(self, step: int) -> AsyncIterator[Event]:
        refusal = self._budget_refusal()
        if refusal:
            self.stop = _Stop("stopped", "budget", f"stopped before step {step}: {refusal}")
            return
        outcome: ActionOutcome | None = None
        try:
            async for event in self._turn(step):
                if isinstance(event, ActionOutcome):
                    outcome = event
                else:
                    yield event
        except LLMError as exc:
            yield Error(message=str(exc), kind=type(exc).__name__)
            self.stop = _Stop("failed", type(exc).__name__)
            return
        if self.stop is not None:
            return
        assert outcome is not None
        if outcome.action is None:
            yield Error(message=f"step {step}: {outcome.error}", kind="invalid_reply")
            self.stop = _Stop("failed", "invalid_reply")
            return
        action = outcome.action
        self.messages.append(assistant_message(action.as_json()))
        if action.action == "provide_answer":
            yield FinalAnswer(step=step, text=action.final_answer or "")
            self.stop = _Stop("completed", None)
            return
        async for event in self._act(step, action):
            yield event

    async def _turn(self, step: int) -> AsyncIterator[Event | ActionOutcome]:
        """One model turn (see `stream_turn`), its calls kept against the budget; a re-ask
        the budget cannot pay for stops the run."""
        turn = stream_turn(
            self.llm, self.messages, step, code_actions=CODE_ACTIONS, prose_answers=True
        )
        async with contextlib.aclosing(turn):
            async for item in turn:
                if isinstance(item, InvalidReply):
                    yield Log(level="warning", message=_invalid_note(step, item))
                    refusal = self._budget_refusal(reask=True) if item.retrying else None
                    if refusal:
                        note = f"stopped in step {step}: {refusal}"
                        self.stop = _Stop("stopped", "budget", note)
                        return
                    continue
                if isinstance(item, LLMCall) and self.budget is not None:
                    self.budget.record(item, self.messages)
                yield item

    async def _act(self, step: int, action: Action) -> AsyncIterator[Event]:
        """Approval, the run with its live output, and the result fed back to the model."""
        code = action.code or ""
        edited: str | None = None
        if self.approver is not None:
            decision = await self.approver.approve(step, code)
            if decision.kind == "skip":
                yield Log(message=f"step {step}: the user skipped this code; the model is told")
                self.messages.append(skipped_message())
                return
            if decision.kind == "edit" and decision.code is not None:
                edited = code = decision.code
                yield Log(message=f"step {step}: the user edited the code before it ran")
                yield CodeProposed(step=step, code=code, action=action.action)
        await self.starting
        run = StepRun(self.sandbox, ExecuteRequest(code=code, timeout=self.limits.timeout), step)
        async for event in with_written_files(run.events(), workspace_of(self.sandbox)):
            yield event
        result = run.result
        assert result is not None
        self.messages.append(result_message(result, edited))
        reason = self.guard.check(code, result)
        if reason:
            self.stop = _Stop("stopped", reason, f"stopped after step {step}: {reason}")

    def _budget_refusal(self, *, reask: bool = False) -> str | None:
        if self.budget is None:
            return None
        return self.budget.refusal(self.messages, reask=reask)


def _invalid_note(step: int, invalid: InvalidReply) -> str:
    then = "asking again" if invalid.retrying else "no re-asks left"
    return f"step {step}: reply {invalid.attempt + 1} could not be used ({invalid.error}); {then}"
