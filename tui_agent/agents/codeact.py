"""The CodeAct agent: think, run code in one stateful sandbox, read, repeat, answer.

The conversation is the system prompt, the task, then per step the model's action (a JSON
object, or a fenced block: llm/reply_forms.py) and an `EXECUTION_RESULT: ...` message, until the
model gives its answer. Events, per step: ThoughtDelta as the thought streams, Thought when it
is complete, CodeProposed as soon as the code is (again if the validated action differs),
LLMCall per call (re-asks included, each noted by a Log), ExecutionStarted, ExecutionOutput
while the code prints, ExecutionFinished; FinalAnswer at the end. Results go back as user
messages (see prompts.py).

The run stops, with its `stopped_reason`, at `max_steps`, before a call that would pass the
budget ("budget"), when it goes round in circles ("loop: ..."), when the model gives no usable
action after its re-asks ("invalid_reply"; when the last code ran without error, the model
is first offered that code as its answer, once, unless it is a stub: a function with only its
docstring), or when the provider or the sandbox fails (the
error's name). The loop itself, limits, budget and sandbox lifetime, is the shared step loop
(step_loop/); what is CodeAct's is what a step does.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Sequence

from tui_agent.agents.action_turn import stream_turn
from tui_agent.agents.approval import Approver
from tui_agent.agents.codeact_history import codeact_history
from tui_agent.agents.codeact_prompts import (
    USER_EDITED,
    assistant_message,
    bodiless,
    defined_only,
    offer_messages,
    offer_text,
    result_message,
    skipped_message,
    system_message,
    task_message,
    untested_message,
)
from tui_agent.agents.step_loop import (
    Continuation,
    Conversation,
    ModelMaker,
    RestoreRun,
    StepLimits,
    StepLoop,
    flag_of,
    successful_runs,
)
from tui_agent.agents.streaming import StepRun
from tui_agent.agents.workspace_files import with_written_files, workspace_of
from tui_agent.events import (
    CodeProposed,
    Error,
    Event,
    FinalAnswer,
    LLMCall,
    Log,
)
from tui_agent.llm import (
    JSON_FORM,
    LLM,
    Action,
    ActionOutcome,
    InvalidReply,
    Message,
    ReplyForm,
)
from tui_agent.sandbox.base import Sandbox
from tui_agent.sandbox.wire import ExecuteRequest, ExecuteResult

DEFAULT_TIMEOUT = 60.0
CODE_ACTIONS = {
    "execute_code": "execute_code",
    "debug_error": "debug_error",
    "continue_debugging": "debug_error",
}
"""Action names (as the model may write them) that run code, and what they are read as."""


def run_codeact(
    task: str,
    *,
    llm: LLM,
    sandbox: Sandbox,
    limits: StepLimits | None = None,
    approver: Approver | None = None,
    network: bool = False,
    conversation: Conversation | None = None,
    make_model: ModelMaker | None = None,
    continuation: Continuation | None = None,
    form: ReplyForm = JSON_FORM,
) -> AsyncIterator[Event]:
    """The agent's events, ending with SessionEnded. `sandbox` starts while the first reply
    streams and is closed before the end is reported (or when the run is cancelled); with an
    `approver`, every run waits for its decision. With a `conversation`, turns follow until
    it ends; with a `continuation`, the session goes on from its stored events (step_loop/).
    `form` is how the model is asked to reply (llm/reply_forms.py)."""
    limits = limits or StepLimits(timeout=DEFAULT_TIMEOUT)
    loop = _CodeActLoop(task, llm, sandbox, limits, approver, network, form)
    loop.conversation = conversation
    loop.make_model = make_model
    loop.continuation = continuation
    return loop.session()


class _CodeActLoop(StepLoop):
    """A step: one model turn, then its code run (approved first, when asked) or its answer."""

    def __init__(
        self,
        task: str,
        llm: LLM,
        sandbox: Sandbox,
        limits: StepLimits,
        approver: Approver | None,
        network: bool,
        form: ReplyForm,
    ) -> None:
        super().__init__(llm, sandbox, limits)
        self.approver = approver
        self.network = network
        self.form = form
        self.messages = [system_message(network, form), task_message(task)]
        self.working_code: str | None = None
        """The last code that ran, if it ran without error; shown to the model on a re-ask."""
        self.offered = False
        """Whether the model was already offered `working_code` as its answer."""
        self.untested: list[str] = []
        """What the last run defined without calling it (`name()`), until a run calls code."""
        self.asked_to_test = False
        """Whether an answer was already sent back once to have that code tested."""

    def rebuild(self, events: Sequence[Event]) -> list[Message]:
        return codeact_history(events, self.network, self.form)

    def restore_runs(self, events: Sequence[Event]) -> list[RestoreRun]:
        return successful_runs(events, self.network)

    async def rerun(self, run: RestoreRun) -> ExecuteResult:
        return await self.sandbox.execute(
            ExecuteRequest(code=run.code, timeout=self.limits.timeout)
        )

    async def take_step(self, step: int) -> AsyncGenerator[Event, None]:
        outcome: ActionOutcome | None = None
        async for event in self._turn(step):
            if isinstance(event, ActionOutcome):
                outcome = event
            else:
                yield event
        if self.stop is not None:
            return
        assert outcome is not None
        if outcome.action is None:
            if self.working_code is not None and not self.offered:
                yield Log(
                    level="warning",
                    message=f"step {step}: no usable reply; the model is offered its last "
                    "working code as the answer",
                )
                self.offered = True
                self.messages += offer_messages(outcome, self.working_code, self.form)
                return
            yield Error(message=f"step {step}: {outcome.error}", kind="invalid_reply")
            self.halt("failed", "invalid_reply")
            return
        action = outcome.action
        self.messages.append(assistant_message(self.form.render(action)))
        settled = self.asked_to_test or self.offered or self.replies >= self.limits.max_steps
        if action.action == "provide_answer" and self.untested and not settled:
            yield Log(
                message=f"step {step}: the answer came before {', '.join(self.untested)} was "
                "ever called; the model is asked to test it first (once)"
            )
            self.asked_to_test = True
            self.messages.append(untested_message(self.untested))
            return
        if action.action == "provide_answer":
            yield FinalAnswer(step=step, text=action.final_answer or "")
            self.halt("completed", None)
            return
        if action.final_answer and self.guard.succeeded_before(action.code or ""):
            yield Log(
                message=f"step {step}: the reply sent code that already ran without error, "
                "with an answer: the answer is taken"
            )
            yield FinalAnswer(step=step, text=action.final_answer)
            self.halt("completed", None)
            return
        async for event in self._act(step, action):
            yield event

    async def _turn(self, step: int) -> AsyncIterator[Event | ActionOutcome]:
        """One model turn (see `stream_turn`), its calls kept against the budget; a re-ask
        the budget cannot pay for stops the run."""
        turn = stream_turn(
            self.llm,
            self.messages,
            step,
            code_actions=CODE_ACTIONS,
            prose_answers=True,
            last_code=self.working_code,
            form=self.form,
        )
        async with contextlib.aclosing(turn):
            async for item in turn:
                if isinstance(item, InvalidReply):
                    yield Log(level="warning", message=_invalid_note(step, item))
                    refusal = self.budget_refusal(reask=True) if item.retrying else None
                    if refusal:
                        self.halt("stopped", "budget", f"stopped in step {step}: {refusal}")
                        return
                    continue
                if isinstance(item, LLMCall):
                    self.count_call(item)
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
                yield Log(message=f"step {step}: {USER_EDITED}")
                yield CodeProposed(step=step, code=code, action=action.action)
        await self.sandbox_started
        run = StepRun(self.sandbox, ExecuteRequest(code=code, timeout=self.limits.timeout), step)
        self.executing = True
        async for event in with_written_files(run.events(), workspace_of(self.sandbox)):
            yield event
        self.executing = False
        result = run.result
        assert result is not None
        if result.success:
            self.remember_run(RestoreRun(step, code, flag_of(code, self.network)))
        # a stub (a function with only its docstring) runs, but is no code to answer with
        self.working_code = code if result.success and not bodiless(code) else None
        self.untested = defined_only(code) if result.success else []
        self.offered = self.offered and result.success
        if result.success:
            repeated = self.guard.ran_before(code, result)
        else:
            repeated = self.guard.failed_before(code)
        message = result_message(result, code, edited, repeated=repeated, form=self.form)
        reason = self.guard.check(code, result)
        if reason and self.working_code is not None and not self.offered:
            yield Log(
                level="warning",
                message=f"step {step}: {reason}; the model is offered this code as the answer",
            )
            self.offered = True
            why = reason.removeprefix("loop: ")
            message["content"] += "\n\n" + offer_text(why, code, self.form)
            reason = None
        self.messages.append(message)
        if reason:
            self.stop_looping(reason)


def _invalid_note(step: int, invalid: InvalidReply) -> str:
    then = "asking again" if invalid.retrying else "no re-asks left"
    return f"step {step}: reply {invalid.attempt + 1} could not be used ({invalid.error}); {then}"
