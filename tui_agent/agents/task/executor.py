"""Running one task (or workflow node): cached code, or generated code checked before and after
it runs, retried with its error history, until it passes or the attempts are spent.

Per attempt: the model writes code (an ANALYSIS stage first when it decides the data needs
understanding: its result goes to `context['_data_analysis']` and the TASK code is asked for
next); names the code uses but never defines refuse it unread; it runs in the sandbox with the
context; then values JSON cannot hold, an untouched context, and the validator model's verdict
can refuse it. Each refusal is a failed attempt whose error goes into the next prompt. A model
or sandbox that cannot be reached ends the task at once and opens its circuit; one that answers
closes it (breaker.py).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, NoReturn

from tui_agent.agents.streaming import StepRun
from tui_agent.agents.task import cache as code_cache
from tui_agent.agents.task.breaker import CircuitBreaker, CircuitOpen, model_server
from tui_agent.agents.task.checks import (
    UnreadableVerdict,
    Verdict,
    context_access_problem,
    parse_verdict,
    serialization_problem,
    unchanged_problem,
)
from tui_agent.agents.task.context import ANALYSIS_KEY, METADATA_KEY, context_change
from tui_agent.agents.task.docsearch import doc_search_request, read_doc_answer
from tui_agent.agents.task.generation import Generated, Generation
from tui_agent.agents.task.metadata import AnalysisRecord, FailureStatus, ModelSource, TaskTrace
from tui_agent.agents.task.prompts import (
    FailedAttempt,
    generation_messages,
    validator_messages,
)
from tui_agent.agents.task.spending import BudgetExceeded, Spending
from tui_agent.events import (
    AttemptStarted,
    CheckName,
    CheckVerdict,
    CodeProposed,
    Error,
    Event,
    ExecutionFinished,
    Log,
    TaskResult,
)
from tui_agent.llm import LLM, LLMError, Message, ProviderUnavailable
from tui_agent.llm.tool_fallback import ToolMode
from tui_agent.redaction import SecretMask
from tui_agent.sandbox.base import Sandbox, SandboxError
from tui_agent.sandbox.wire import ExecuteRequest, ExecuteResult

DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_ATTEMPTS = 3
VERDICT_REASKS = 1


@dataclass(frozen=True)
class TaskOptions:
    """How one task runs: seconds per run (an analysis gets half), attempts, the cache."""

    timeout: float = DEFAULT_TIMEOUT
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    use_cache: bool = True

    @property
    def analysis_timeout(self) -> float:
        return self.timeout / 2


@dataclass(frozen=True)
class TaskNode:
    """One task to run: its words, its models and where the model came from."""

    node_id: str
    task: str
    llm: LLM
    validator: LLM
    model_source: ModelSource = "default"
    node_type: str = "task"
    options: TaskOptions = TaskOptions()
    text_protocol: bool = False
    """Documentation lookups through `CALL` lines from the start (litellm says the model has
    no tool calls); else native calls until the server shows it cannot do them."""


@dataclass
class TaskOutcome:
    """How a task ended: the context it returns (secrets in clear: for the caller only; its
    `_ai_metadata` masked)."""

    status: Literal["success", "failed"]
    context: dict[str, Any]
    failure: FailureStatus | None = None
    error: str | None = None


@dataclass
class TaskEnvironment:
    """What the tasks of one session share: the sandbox, the step numbers, the cache, the
    breaker, the session's id (the cache notes which session wrote an entry) and the secrets
    learned from its contexts (masked in every prompt and event)."""

    sandbox: Sandbox
    session_id: str
    breaker: CircuitBreaker
    cache: code_cache.CodeCache | None = None
    secrets: SecretMask = field(default_factory=SecretMask)
    steps: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    tool_modes: dict[str, ToolMode] = field(default_factory=dict)
    """Per model, native tool calls or the text protocol (a fall back lasts the session)."""
    sandbox_used: bool = False
    _starting: asyncio.Task[None] | None = None

    def tool_mode(self, node: TaskNode) -> ToolMode:
        """How `node`'s model calls its tools in this session."""
        model = node.llm.model
        if model not in self.tool_modes:
            self.tool_modes[model] = ToolMode(native=not node.text_protocol)
        return self.tool_modes[model]

    def start_sandbox(self) -> None:
        """Start the sandbox in the background (while the model writes), once."""
        if self._starting is None:
            self._starting = asyncio.ensure_future(self._start())

    async def ensure_started(self) -> None:
        """Wait for the sandbox; raises CircuitOpen or SandboxError when it cannot start."""
        self.start_sandbox()
        assert self._starting is not None
        await asyncio.shield(self._starting)

    async def _start(self) -> None:
        target = sandbox_target(self.sandbox)
        self.breaker.check(target)
        try:
            await self.sandbox.start()
        except SandboxError as exc:
            self.breaker.failed(target, str(exc))
            raise
        self.breaker.succeeded(target)

    async def close(self) -> None:
        """Stop a start still going, then close the sandbox and the cache."""
        if self._starting is not None and not self._starting.done():
            self._starting.cancel()
        if self._starting is not None:
            await asyncio.gather(self._starting, return_exceptions=True)
        await self.sandbox.close()
        if self.cache is not None:
            await self.cache.close()


def sandbox_target(sandbox: Sandbox) -> str:
    return f"the {sandbox.name} sandbox"


class _Stop(Exception):
    """Ends the task at once (not another attempt): unreachable, out of budget, model error."""

    def __init__(self, status: FailureStatus, message: str, kind: str) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind


class _Refused(Exception):
    """The attempt failed; the message goes into the error history."""


def run_error(result: ExecuteResult, timeout: float) -> str:
    """One line for a failed run: the exception, the time-out or why the sandbox killed it."""
    if result.timed_out:
        return f"TimeoutError: the code ran past the {timeout:g} s timeout"
    if result.killed_reason:
        return f"SandboxError: the run was stopped: {result.killed_reason}"
    if result.error is not None:
        return f"{result.error.type}: {result.error.message}"
    return "the run failed without an error message"


class TaskRun:
    """One task in `env`, starting from `context`; `outcome` is set when `events()` ends."""

    def __init__(
        self, node: TaskNode, context: dict[str, Any], env: TaskEnvironment, spending: Spending
    ) -> None:
        self.node = node
        self.input = dict(context)
        self.env = env
        env.secrets.learn(self.input)
        self.spending = spending
        self.trace = TaskTrace(
            task=node.task,
            model=node.llm.model,
            model_source=node.model_source,
            validator_model=node.validator.model,
            tool_calling=True,
        )
        self.failures: list[FailedAttempt] = []
        self.outcome: TaskOutcome | None = None
        self._began = 0.0
        self._attempt = 0
        self._analysis_context: dict[str, Any] | None = None
        self._analysed_now = False
        """The analysis ran in this attempt (its task code may share the interpreter)."""

    # -- the whole task --------------------------------------------------------------------
    async def events(self) -> AsyncIterator[Event]:
        self._began = time.monotonic()
        key = code_cache.CacheKey.of(self.node.task, self.input, self.node.llm.model)
        cache = self.env.cache if self.node.options.use_cache else None
        hit: code_cache.CacheHit | None = None
        try:
            hit = await code_cache.find(cache, key) if cache is not None else None
            if hit is not None:
                async for event in self._cached(hit):
                    yield event
                if self.outcome is not None:
                    await self._keep(cache, key, hit)
                    return
            async for event in self._attempts():
                yield event
        except _Stop as stop:
            yield Error(message=str(stop), kind=stop.kind)
            yield self._failed(stop.status, str(stop))
            return
        if self.outcome is not None:
            await self._keep(cache, key, None)
            return
        last = self.failures[-1].error if self.failures else "no attempt ran"
        message = f"Failed after {len(self.failures)} attempts: {last}"
        if hit is not None and hit.match == "exact" and cache is not None:
            await cache.remove(hit.entry.key)
        yield Error(message=message, kind="failed_after_retries")
        yield self._failed("failed_after_retries", message)

    async def _keep(
        self,
        cache: code_cache.CodeCache | None,
        key: code_cache.CacheKey,
        hit: code_cache.CacheHit | None,
    ) -> None:
        """Count a hit, or keep newly generated code, once the task succeeded."""
        if cache is None:
            return
        if hit is not None:
            await cache.used(hit.entry.key)
            if hit.match == "exact":
                return
        analysis = self.trace.analysis.code if self.trace.analysis else None
        await code_cache.store(cache, key, self.trace.code, analysis, self.env.session_id)

    # -- cached code -----------------------------------------------------------------------
    async def _cached(self, hit: code_cache.CacheHit) -> AsyncIterator[Event]:
        """Run cached code with no model call; a failure only logs (generation follows)."""
        entry = hit.entry
        self.trace.cache_match = hit.match
        self.trace.attempts = 1
        step = next(self.env.steps)
        yield self._attempt_started(step, cached=True)
        why = f" ({hit.why})" if hit.why else ""
        yield Log(message=f"cache hit ({hit.match}{why}): code written for {entry.task!r}")
        try:
            context = dict(self.input)
            if entry.analysis_code:
                yield CodeProposed(step=step, code=entry.analysis_code, action="analysis")
                async for event in self._analysis_run(step, entry.analysis_code, context, 0.0):
                    yield event
                context = self._analysis_context or context
                step = next(self.env.steps)
                yield self._attempt_started(step, cached=True)
            yield CodeProposed(step=step, code=entry.task_code, action="task")
            async for event in self._task_run(step, entry.task_code, context, validate=False):
                yield event
        except _Refused as refused:
            yield Log(
                level="warning",
                message=f"the cached code failed on this context ({refused}); writing new code",
            )
            self.trace.cache_match = None
            self.trace.analysis = None
            self.trace.attempts = 0
            self._analysis_context = None

    # -- generated code --------------------------------------------------------------------
    async def _attempts(self) -> AsyncIterator[Event]:
        for attempt in range(1, self.node.options.max_attempts + 1):
            self._attempt = attempt
            self._analysed_now = False
            self.trace.attempts = attempt
            step = next(self.env.steps)
            yield self._attempt_started(step)
            code = ""
            try:
                async for event in self._attempt_steps(step):
                    if isinstance(event, CodeProposed):
                        code = event.code
                    yield event
            except _Refused as refused:
                self.failures.append(FailedAttempt(attempt, str(refused), code))
                self.trace.failures = list(self.failures)
                continue
            return

    async def _attempt_steps(self, step: int) -> AsyncIterator[Event]:
        """One attempt: (analysis, then) task code, checked, run and validated."""
        after_analysis = self._analysis_context is not None
        generated: Generated | None = None
        async for event in self._generate(step, after_analysis):
            if isinstance(event, Generated):
                generated = event
            else:
                yield event
        assert generated is not None
        reply = generated.reply
        if reply is None:
            yield self._verdict(step, "reply", generated.error or "no code")
            raise _Refused(generated.error or "no code")
        if reply.stage == "analysis":
            if after_analysis:
                problem = "the analysis already ran: write the # STAGE: TASK code"
                yield self._verdict(step, "reply", problem)
                raise _Refused(problem)
            async for event in self._analysis_run(
                step, reply.code, dict(self.input), generated.seconds
            ):
                yield event
            step = next(self.env.steps)
            yield self._attempt_started(step)
            generated = None
            async for event in self._generate(step, after_analysis=True):
                if isinstance(event, Generated):
                    generated = event
                else:
                    yield event
            assert generated is not None
            reply = generated.reply
            if reply is None or reply.stage == "analysis":
                problem = generated.error or "expected the # STAGE: TASK code after the analysis"
                yield self._verdict(step, "reply", problem)
                raise _Refused(problem)
        context = self._analysis_context or dict(self.input)
        async for event in self._task_run(step, reply.code, context, validate=True):
            yield event

    async def _generate(self, step: int, after_analysis: bool) -> AsyncIterator[Event | Generated]:
        node = self.node
        tools = self.env.tool_mode(node)
        messages = generation_messages(
            node.task,
            self._analysis_context or self.input,
            after_analysis=after_analysis,
            text_protocol=not tools.native,
            failures=self.failures,
            secrets=self.env.secrets,
        )
        generation = Generation(
            node.llm,
            messages,
            step=step,
            tools=tools,
            lookup=self._lookup,
            spending=self.spending,
            trace=self.trace,
        )
        async with self._model(node.llm):
            async for event in generation.run():
                yield event
                if isinstance(event, Generated):
                    self.trace.generation_seconds += event.seconds

    async def _lookup(self, library: str, query: str) -> str:
        """search_documentation, answered by the sandbox's installed packages."""
        await self._sandbox_ready()
        self.env.sandbox_used = True
        try:
            result = await self.env.sandbox.execute(doc_search_request(library, query))
        except SandboxError as exc:
            self._sandbox_lost(exc)
        return read_doc_answer(result, library, query)

    # -- running ---------------------------------------------------------------------------
    async def _analysis_run(
        self, step: int, code: str, context: dict[str, Any], generation_seconds: float
    ) -> AsyncIterator[Event]:
        """Run analysis code: its `result` goes to context['_data_analysis']."""
        timeout = self.node.options.analysis_timeout
        result: ExecuteResult | None = None
        async for event in self._checked_run(step, code, context, timeout, fresh=True):
            if isinstance(event, ExecuteResult):
                result = event
            else:
                yield event
        assert result is not None
        insights = result.result
        if insights is None:
            insights = {k: v for k, v in (result.context or {}).items() if k not in context}
        self.trace.analysis = AnalysisRecord(code, insights, generation_seconds, result.duration)
        self._analysis_context = {**context, ANALYSIS_KEY: insights}
        self._analysed_now = True

    async def _task_run(
        self, step: int, code: str, context: dict[str, Any], *, validate: bool
    ) -> AsyncIterator[Event]:
        """Check, run and validate task code; sets the outcome when it passes. Right after
        its attempt's analysis it runs in the same interpreter (no restart, the analysis's
        imports loaded); otherwise in a fresh one."""
        timeout = self.node.options.timeout
        result: ExecuteResult | None = None
        async for event in self._checked_run(step, code, context, timeout, not self._analysed_now):
            if isinstance(event, ExecuteResult):
                result = event
            else:
                yield event
        assert result is not None
        after = dict(result.context or {})
        change = context_change(context, after)
        problem = unchanged_problem(change)
        if problem:
            yield self._verdict(step, "output", problem)
            raise _Refused(problem)
        if validate:
            output = [line.text for line in result.logs if line.stream == "stdout"]
            async for event in self._validate(step, context, after, change, output):
                yield event
        self.trace.code = code
        after.pop(ANALYSIS_KEY, None)
        self._succeeded(after)
        yield self._result_event()

    async def _checked_run(
        self, step: int, code: str, context: dict[str, Any], timeout: float, fresh: bool
    ) -> AsyncIterator[Event | ExecuteResult]:
        """Names checked, then the run, then its values checked: the events and the result of
        a run that passed; a refusal or a failed run raises _Refused."""
        problem = context_access_problem(code, list(context))
        yield self._verdict(step, "context_access", problem)
        if problem:
            raise _Refused(problem)
        result: ExecuteResult | None = None
        async for event in self._execute(step, code, context, timeout, fresh):
            if isinstance(event, ExecuteResult):
                result = event
            else:
                yield event
        assert result is not None
        if not result.success:
            raise _Refused(run_error(result, timeout))
        problem = serialization_problem(result.non_serializable)
        yield self._verdict(step, "serialization", problem)
        if problem:
            raise _Refused(problem)
        yield result

    async def _execute(
        self, step: int, code: str, context: dict[str, Any], timeout: float, fresh: bool
    ) -> AsyncIterator[Event | ExecuteResult]:
        """The run's events, then its result (secrets it wrote under new keys are learned
        first). `fresh`: in a new interpreter, nothing left from earlier runs."""
        await self._sandbox_ready()
        try:
            if fresh and self.env.sandbox_used:
                await self.env.sandbox.reset()
            self.env.sandbox_used = True
            run = StepRun(
                self.env.sandbox, ExecuteRequest(code=code, context=context, timeout=timeout), step
            )
            async for event in run.events():
                if isinstance(event, ExecutionFinished):
                    self.env.secrets.learn(event.context)
                    self.env.secrets.learn(event.result)
                yield event
        except SandboxError as exc:
            self._sandbox_lost(exc)
        assert run.result is not None
        self.trace.execution_seconds += run.result.duration
        yield run.result

    async def _sandbox_ready(self) -> None:
        try:
            await self.env.ensure_started()
        except CircuitOpen as exc:
            raise _Stop("circuit_open", str(exc), "circuit_open") from None
        except SandboxError as exc:
            raise _Stop("sandbox_unreachable", str(exc), "sandbox_unreachable") from None

    def _sandbox_lost(self, exc: SandboxError) -> NoReturn:
        self.env.breaker.failed(sandbox_target(self.env.sandbox), str(exc))
        raise _Stop("sandbox_unreachable", str(exc), "sandbox_unreachable") from None

    # -- the validator ---------------------------------------------------------------------
    async def _validate(
        self,
        step: int,
        before: dict[str, Any],
        after: dict[str, Any],
        change: Any,
        output: list[str],
    ) -> AsyncIterator[Event]:
        validator = self.node.validator
        messages: list[Message] = validator_messages(
            self.node.task, before, after, change, output, self.env.secrets
        )
        verdict: Verdict | None = None
        problem = ""
        async with self._model(validator):
            for reask in range(VERDICT_REASKS + 1):
                self.spending.check(validator.model, messages, reask=reask > 0)
                reply = await validator.complete(
                    messages, want_json=True, purpose="validate", step=step
                )
                self.spending.record(reply.call, messages)
                self.trace.calls.append(reply.call)
                yield reply.call
                try:
                    verdict = parse_verdict(reply.text)
                    break
                except UnreadableVerdict as exc:
                    problem = str(exc)
                    messages = [
                        *messages,
                        {"role": "assistant", "content": reply.text[:2000]},
                        {"role": "user", "content": f"That could not be read: {problem}."},
                    ]
        if verdict is None:
            self.trace.validation = {"valid": None, "reason": f"unreadable verdict: {problem}"}
            yield Log(
                level="warning",
                message=f"step {step}: the validator's verdict could not be read ({problem}); "
                "the output is kept unvalidated",
            )
            return
        self.trace.validation = {"valid": verdict.valid, "reason": verdict.reason}
        refusal = None if verdict.valid else f"AI Validation Failed: {verdict.reason}"
        yield self._verdict(step, "output", refusal, passed_message=verdict.reason)
        if refusal:
            raise _Refused(refusal)

    # -- model calls -----------------------------------------------------------------------
    def _model(self, llm: LLM) -> _ModelGuard:
        return _ModelGuard(llm, self.env.breaker)

    # -- events and outcome ----------------------------------------------------------------
    def _attempt_started(self, step: int, *, cached: bool = False) -> AttemptStarted:
        return AttemptStarted(
            step=step,
            attempt=self._attempt,
            max_attempts=self.node.options.max_attempts,
            node=self.node.node_id,
            cached=cached,
        )

    def _verdict(
        self, step: int, check: CheckName, problem: str | None, *, passed_message: str = ""
    ) -> CheckVerdict:
        return CheckVerdict(
            step=step, check=check, passed=problem is None, message=problem or passed_message
        )

    def _succeeded(self, after: dict[str, Any]) -> None:
        metadata = self.env.secrets.masked(self.trace.as_metadata(time.monotonic() - self._began))
        self.outcome = TaskOutcome("success", {**after, METADATA_KEY: metadata})

    def _failed(self, status: FailureStatus, error: str) -> TaskResult:
        metadata = self.env.secrets.masked(
            self.trace.as_metadata(time.monotonic() - self._began, status=status, final_error=error)
        )
        self.outcome = TaskOutcome("failed", {**self.input, METADATA_KEY: metadata}, status, error)
        return self._result_event()

    def _result_event(self) -> TaskResult:
        assert self.outcome is not None
        return TaskResult(
            node=self.node.node_id,
            node_type=self.node.node_type,
            status=self.outcome.status,
            context=self.outcome.context,
            input_context=self.input,
        )


class _ModelGuard:
    """Around model calls: an open circuit stops at once; an unreachable server opens its
    circuit, a server that answered closes it; any other model error ends the task (none of
    them is worth another attempt)."""

    def __init__(self, llm: LLM, breaker: CircuitBreaker) -> None:
        self.llm = llm
        self.breaker = breaker
        self.server = model_server(llm.model, llm.api_base)

    async def __aenter__(self) -> None:
        try:
            self.breaker.check(self.server)
        except CircuitOpen as exc:
            raise _Stop("circuit_open", str(exc), "circuit_open") from None

    async def __aexit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        if exc is None or (isinstance(exc, LLMError) and not isinstance(exc, ProviderUnavailable)):
            self.breaker.succeeded(self.server)  # it answered, if only with an error
        if isinstance(exc, ProviderUnavailable):
            self.breaker.failed(self.server, str(exc))
            raise _Stop("model_unreachable", str(exc), "model_unreachable") from None
        if isinstance(exc, LLMError):
            raise _Stop("model_error", str(exc), type(exc).__name__) from None
        if isinstance(exc, BudgetExceeded):
            raise _Stop("budget_exceeded", f"stopped: {exc}", "budget") from None
