"""Refining a session's code from field feedback: model, sandbox, checks, up to N attempts.

Each attempt asks the model for the complete improved code (the prompt for the session's agent
type, narrowed to the feedback still unresolved, with what went wrong before), streams its
thought and code into the pane on a new step, runs the code in the sandbox with the session's
test context, analyses the output and checks every feedback item (`check_feedback`). An
attempt is accepted as the new best when it fixes more than the best so far, un-fixes nothing
and lowers no other field's coverage (`regressions`), or fixes as many and gets a field closer
(more items agree with the user's evidence, or a higher coverage: "improved"); a refused one is
logged as a warning and named in the next prompt. The best attempt becomes the candidate
Artifact.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from tui_agent.agents.action_turn import stream_turn
from tui_agent.agents.refine.base import (
    Refinement,
    RefinementError,
    RefinementOutcome,
    outcome_message,
    plural,
    progress_message,
)
from tui_agent.agents.refine.code_runs import (
    code_source,
    execute_request,
    failure,
    load_page,
    run_context,
    run_prelude,
)
from tui_agent.agents.refine.prompts import RefinePrompt, refinement_messages
from tui_agent.agents.refine.run_settings import RunPlan, code_plan
from tui_agent.agents.streaming import StepRun
from tui_agent.analysis import analyze_output
from tui_agent.analysis.resolution import FieldCheck, check_feedback, coverage, percent, regressions
from tui_agent.analysis.shapes import FieldFeedback, OutputAnalysis
from tui_agent.config import Settings
from tui_agent.events import Artifact, Error, Event, LLMCall, Log, RefinementProgress
from tui_agent.llm import LLM, ActionOutcome, InvalidReply, LLMError, Message
from tui_agent.sandbox.base import SandboxError
from tui_agent.sandbox.choose import open_sandbox
from tui_agent.session import SessionState
from tui_agent.web.browser import BrowserError

TESTING = "Testing improved code…"
"""The progress between generating an attempt's code and checking it."""


@dataclass
class _Version:
    """The code of one attempt (0: the original) with its output and checks."""

    attempt: int
    code: str
    items: list[Any]
    analysis: OutputAnalysis | None
    checks: list[FieldCheck] = field(default_factory=list)

    @property
    def resolved(self) -> set[int]:
        """The indexes of the feedback items this version resolves."""
        return {i for i, check in enumerate(self.checks) if check.resolved}

    @property
    def fixed(self) -> list[str]:
        """The fields all of whose feedback this version resolves, verified."""
        return self._fields(lambda checks: all(c.resolved and c.verified for c in checks))

    @property
    def unverified(self) -> list[str]:
        """The fields whose feedback it resolves, some of it only by a change no evidence
        could verify."""
        return self._fields(
            lambda checks: all(c.resolved for c in checks) and not all(c.verified for c in checks)
        )

    @property
    def improved(self) -> list[str]:
        """The fields it left unresolved but better than before."""
        return self._fields(lambda checks: any(c.verdict == "improved" for c in checks))

    def score(self, baseline: bool = False) -> tuple[int, int, float]:
        """How far it got, to compare versions: feedback items resolved, then items agreeing
        with the evidence, then the checked fields' coverage. `baseline`: the same for the
        version its checks compared against (the original)."""
        side = 0 if baseline else 1
        resolved = 0 if baseline else len(self.resolved)
        agreeing = sum(c.matched[side] for c in self.checks if c.matched)
        covered = sum(c.before if baseline else c.after for c in self.checks)
        return resolved, agreeing, covered

    def _fields(self, test: Callable[[list[FieldCheck]], bool]) -> list[str]:
        by_field: dict[str, list[FieldCheck]] = {}
        for check in self.checks:
            by_field.setdefault(check.field, []).append(check)
        return [name for name, checks in by_field.items() if test(checks)]


class CodeRefinement(Refinement):
    """Refines the code of an exec or CodeAct session; see the module docstring."""

    name = "code"
    format = "python"

    def _prepare(self, state: SessionState, settings: Settings) -> str:
        if self.llm is None:
            raise RefinementError(
                "refining code needs a model: pass --model or set TUI_AGENT_MODEL"
            )
        if not state.test_context:
            raise RefinementError(
                f"session {state.session_id} recorded no test context, so its code cannot be "
                "re-run; record it again with this version of tui-agent"
            )
        if settings.sandbox == "local":
            raise RefinementError(
                "refining runs model-written code without asking, and the local sandbox is not "
                "isolated: choose --sandbox bubblewrap or docker"
            )
        self.source = code_source(state)
        try:
            self.sandbox = open_sandbox(
                settings.sandbox,
                workspace=settings.workspace,
                network=self.run_settings.network,
            )
        except SandboxError as exc:
            raise RefinementError(str(exc)) from exc
        self.settings = settings
        self.agent_type = state.agent_type
        self.task = state.params.get("task")
        self.context = run_context(state, self.run_settings)
        self.first_step = max(state.steps, default=0) + 1
        self.baseline = _Version(0, self.source.code, self.source.items, self.source.analysis)
        self.best = self.baseline
        self.history: list[str] = []
        self.error: str | None = None
        self.stalled: str | None = None
        """Why the loop stopped early without an error (an attempt that changed nothing)."""
        self.tried = {_normalized(self.source.code)}
        return self.source.code

    def plan(self, state: SessionState, settings: Settings) -> RunPlan:
        """The earlier steps' code and the code in use, run in the sandbox; each attempt's
        code is the model's rewrite of it."""
        fields = ", ".join(f.field for f in self.feedback)
        return code_plan(
            state,
            self.run_settings,
            settings,
            action=f"refine {fields}: the model rewrites this code and each attempt runs",
            code=self.source.code,
            prelude=self.source.prelude,
            timeout=self.source.timeout,
        )

    def remaining(self) -> list[FieldFeedback]:
        """The feedback the best version so far does not resolve."""
        if not self.best.checks:
            return list(self.feedback)
        return [f for f, c in zip(self.feedback, self.best.checks, strict=True) if not c.resolved]

    async def run(self) -> AsyncGenerator[Event, None]:
        """The refinement's events; `outcome` is set at the end."""
        if self.original is not None:
            yield self.original
        attempts = 0
        try:
            async for event in load_page(self.context, self.settings, self.source.timeout):
                yield event
            async with self.sandbox:
                while (
                    attempts < self.max_attempts
                    and self.remaining()
                    and not (self.error or self.stalled)
                ):
                    attempts += 1
                    async for event in self._attempt(attempts):
                        yield event
        except (SandboxError, BrowserError) as exc:
            self.error = str(exc)
            yield Error(message=self.error, kind=type(exc).__name__)
        for event in self._finish(attempts):
            yield event

    def _finish(self, attempts: int) -> list[Event]:
        best, remaining = self.best, self.remaining()
        events: list[Event] = []
        candidate: Artifact | None = None
        if best.attempt:
            candidate = self.candidate(
                best.code, best.attempt, best.checks, self.baseline.items, best.items
            )
            events.append(candidate)
        message = outcome_message(best.fixed, remaining, best.unverified, best.improved)
        if self.error or self.stalled:
            message = f"Stopped ({self.error or self.stalled}). {message}"
        elif not best.attempt:
            message = f"No attempt improved the code. {message}"
        events.append(self.progress(attempts, message, best.fixed, remaining, best.unverified))
        self.outcome = RefinementOutcome(
            name=self.name,
            candidate=candidate,
            fixed=best.fixed,
            remaining=[f.field for f in remaining],
            unverified=best.unverified,
            attempts=attempts,
            items=best.items if candidate else [],
            analysis=best.analysis if candidate else None,
            error=self.error,
        )
        return events

    def _progress(self, attempt: int, message: str) -> RefinementProgress:
        best = self.best
        return self.progress(attempt, message, best.fixed, self.remaining(), best.unverified)

    async def _attempt(self, attempt: int) -> AsyncIterator[Event]:
        remaining = self.remaining()
        yield self.attempt_started(attempt, self.best.fixed, remaining)
        step = self.first_step + attempt - 1
        prompt = RefinePrompt(
            agent_type=self.agent_type,
            code=self.best.code,
            analysis=self.best.analysis,
            feedback=remaining,
            test_context=self.context,
            items=self.best.items,
            history=self.history,
            task=self.task,
        )
        assert self.llm is not None  # checked in _prepare
        outcome: ActionOutcome | None = None
        calls = 0
        try:
            messages = refinement_messages(prompt, self.llm.reply_form)
            async for item in _turn(self.llm, messages, step):
                if isinstance(item, ActionOutcome):
                    outcome = item
                else:
                    calls += isinstance(item, LLMCall)
                    yield item
        except LLMError as exc:
            self.error = str(exc)
            yield Error(message=self.error, kind=type(exc).__name__)
            return
        assert outcome is not None
        code = outcome.action.code if outcome.action is not None else None
        if not code or not code.strip():
            why = outcome.error or "the reply held no code"
            self.history.append(f"attempt {attempt}: no usable code ({why})")
            yield Log(level="warning", message=f"attempt {attempt}: no usable code ({why})")
        elif _normalized(code) in self.tried:
            self.stalled = (
                f"attempt {attempt} changed nothing: the model returned code already tried"
            )
            self.history.append(f"attempt {attempt}: returned code already tried")
            yield Log(level="warning", message=self.stalled)
        else:
            self.tried.add(_normalized(code))
            yield self._progress(attempt, TESTING)
            async for event in self._try(attempt, step, code):
                yield event
        best = self.best
        done = progress_message(best.fixed, self.remaining(), best.unverified)
        yield self._progress(attempt, f"{done} ({plural(calls, 'model call')})")

    async def _try(self, attempt: int, step: int, code: str) -> AsyncIterator[Event]:
        """Run the attempt's code, check it, and keep it when it is the best so far."""
        if self.source.prelude or attempt > 1:
            problem = await run_prelude(self.sandbox, self.source)
            if problem:
                yield Log(level="warning", message=f"an earlier step failed again: {problem}")
        run = StepRun(self.sandbox, execute_request(self.source, self.context, code), step)
        async for event in run.events():
            yield event
        result = run.result
        assert result is not None
        if not result.success:
            self._failed(attempt, f"the code failed: {failure(result)}")
            yield Log(
                level="warning", message=f"attempt {attempt}: the code failed ({failure(result)})"
            )
            return
        analysis = result.analysis or analyze_output(result.result)
        if not analysis.is_structured:
            self._failed(attempt, f"the output was not a list of records ({analysis.type})")
            yield Log(level="warning", message=f"attempt {attempt}: no list of records came out")
            return
        tried = _Version(attempt, code, result.items, analysis)
        tried.checks = [
            check_feedback(
                f,
                self.baseline.analysis,
                analysis,
                result.items,
                target_coverage=self.target_coverage,
                before_items=self.baseline.items,
            )
            for f in self.feedback
        ]
        for check in tried.checks:
            yield Log(message=f"attempt {attempt}: {check.detail}")
        refusal = self._refusal(tried)
        if refusal:
            self._failed(attempt, f"refused: {refusal}; keep those fields as they were")
            yield Log(level="warning", message=f"attempt {attempt} refused: {refusal}")
        elif tried.score() > self._best_score(tried):
            self.best = tried
            done = f"{len(tried.resolved)} of {len(self.feedback)} feedback items resolved"
            if tried.improved:
                done += f", improved: {', '.join(tried.improved)}"
            yield Log(message=f"attempt {attempt} is the best so far ({done})")
        else:
            unresolved = "; ".join(c.detail for c in tried.checks if not c.resolved)
            self._failed(attempt, f"fixed nothing new: {unresolved}")
            yield Log(message=f"attempt {attempt} fixed nothing new")

    def _best_score(self, tried: _Version) -> tuple[int, int, float]:
        """The score `tried` must beat: the best attempt's, or the original's (as `tried`'s
        checks saw it)."""
        if self.best.checks:
            return self.best.score()
        return tried.score(baseline=True)

    def _refusal(self, tried: _Version) -> str | None:
        """Why `tried` may not replace the best version: lost items, lowered or un-fixed
        fields."""
        assert tried.analysis is not None
        parts = []
        had, has = len(self.best.items), len(tried.items)
        if has < had:
            parts.append(f"it returns fewer items ({had} -> {has})")
        flagged = {f.field for f in self.feedback}
        lowered = [
            f"{name} {percent(self._coverage(self.best, name))} -> "
            f"{percent(self._coverage(tried, name))}"
            for name in regressions(self.best.analysis, tried.analysis, ignore=flagged)
        ]
        undone = [self.feedback[i].field for i in sorted(self.best.resolved - tried.resolved)]
        if lowered:
            parts.append(f"it lowers the coverage of {', '.join(lowered)}")
        if undone:
            parts.append(f"it breaks the fix of {', '.join(undone)}")
        return " and ".join(parts) or None

    @staticmethod
    def _coverage(version: _Version, name: str) -> float:
        return float(coverage(version.analysis, name))

    def _failed(self, attempt: int, why: str) -> None:
        self.history.append(f"attempt {attempt}: {why}")


def _normalized(code: str) -> str:
    """Code compared for sameness: trailing blanks and blank lines do not count."""
    return "\n".join(line.rstrip() for line in code.strip().splitlines() if line.strip())


async def _turn(
    llm: LLM, messages: list[Message], step: int
) -> AsyncIterator[Event | ActionOutcome]:
    """One model reply streamed on `step` (see `stream_turn`), its LLMCall records (purpose
    "refine"), re-ask notes, and last the ActionOutcome."""
    turn = stream_turn(llm, messages, step, needs_code=True, form=llm.reply_form)
    async with contextlib.aclosing(turn):
        async for item in turn:
            if isinstance(item, InvalidReply):
                then = "asking again" if item.retrying else "no re-asks left"
                yield Log(
                    level="warning",
                    message=f"step {step}: the reply could not be used ({item.error}); {then}",
                )
            elif isinstance(item, LLMCall):
                purpose = "refine" if item.purpose == "action" else f"refine {item.purpose}"
                yield item.model_copy(update={"purpose": purpose})
            else:
                yield item
