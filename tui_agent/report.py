"""The session report as one JSON document (`sessions show --json`) and its JSON Schema.

`build_report(state)` reads a folded session: its summary and parameters, phases with their
start and duration, tool calls counted per phase (a scrape's probes, dry run and list apart),
the steps, model calls per step, items, analysis, strategy, the recipe in use, every artifact
version and decision, feedback, the refinements' progress, errors, logs and why it stopped.
`report_schema()` is the schema every report validates against (`tui-agent sessions schema`).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict

from tui_agent.analysis.shapes import FieldFeedback, OutputAnalysis
from tui_agent.events import Log, RefinementProgress, TurnEnded, UserMessage, VersionDecided
from tui_agent.session import PhaseState, SessionState, SessionSummary, StepState

NO_PHASE = "(no phase)"
"""The key counting tool calls made outside any phase."""


class _Report(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PhaseReport(_Report):
    """One phase: what it worked on, whether it ended well, how long it took."""

    name: str
    detail: str
    started_at: float
    finished: bool
    ok: bool | None
    duration: float | None
    summary: str


class CallCount(_Report):
    """Tool calls made during one phase, and how many of them failed."""

    calls: int
    failed: int
    by_name: dict[str, int]


class ModelCalls(_Report):
    """Model calls made in the session, and per step (a re-asked reply costs two)."""

    total: int
    by_step: dict[str, int]
    """Calls per step number (a refinement attempt is one step), as text keys."""


class StepReport(_Report):
    """One step of a code-writing agent: its thought, code, run and answer."""

    index: int
    thought: str
    action: str | None
    code: str | None
    execution: dict[str, Any] | None
    final_answer: str | None
    model_calls: int
    attempt: int | None = None
    """The task attempt this step belongs to (task sessions)."""
    checks: list[dict[str, Any]] = []
    """The checks of the step's code and run: check, passed, message (task sessions)."""
    tool_calls: list[dict[str, Any]] = []
    """The tool calls the step's program made: name, arguments, ok, output, duration (tool
    code sessions; output None while a call is unanswered)."""


class TaskReport(_Report):
    """What one task or workflow node returned: the updated context, `_ai_metadata` in it."""

    node: str
    node_type: str
    status: str
    input_context: dict[str, Any]
    context: dict[str, Any]


class ArtifactReport(_Report):
    """One version of an artifact; `in_use` when it is the version the session uses now."""

    name: str
    version: int
    format: str
    origin: str
    candidate: bool
    in_use: bool
    summary: str
    content: str


class DecisionReport(_Report):
    """The user's answer to a candidate version."""

    name: str
    version: int
    accepted: bool
    reason: str


class ErrorReport(_Report):
    kind: str
    message: str


class LogReport(_Report):
    """One line the session logged: warnings, repairs of model replies, checks of attempts."""

    level: str
    message: str


class MessageReport(_Report):
    """A message of the user's in a conversation (after the task)."""

    turn: int
    text: str
    queued: bool


class TurnReport(_Report):
    """How a turn of a conversation ended."""

    turn: int
    status: str
    stopped_reason: str | None


class BatchItemReport(_Report):
    """One item of a batch: what it is, its session, how it ended (eval items: `passed`)."""

    item: int
    label: str
    state: str
    session_id: str | None
    status: str
    line: str
    seconds: float
    attempts: int
    passed: bool | None


class ModelReport(_Report):
    """The calls of one model: tokens, and cost (null when no call of it had a price)."""

    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: float | None


class ProgressReport(_Report):
    """Where a refinement stood: its attempt, what it said, the fields fixed, changed but not
    verified, and still remaining."""

    attempt: int
    max_attempts: int
    message: str
    fixed: list[str]
    unverified: list[str]
    remaining: list[str]


class SessionReport(_Report):
    """Everything `sessions show` knows about one session."""

    summary: SessionSummary
    agent_type: str
    request: dict[str, Any] | None
    """What the session was started with: its request as JSON (`kind` says which), settings
    resolved; null for sessions recorded before requests were stored."""
    request_masked: bool
    """Secrets of the request's context were masked before it was stored."""
    params: dict[str, Any]
    source: str | None
    """The URL the session worked on, when it had one."""
    search_query: str | None
    """The text the recipe in use types into the page's search box, when it searches."""
    stopped_reason: str | None
    phases: list[PhaseReport]
    tool_calls: dict[str, CallCount]
    """Tool calls per phase name (`NO_PHASE` for calls outside any phase)."""
    steps: list[StepReport]
    model_calls: ModelCalls
    final_answer: str | None
    item_count: int
    items: list[Any]
    """The items, all of them or the first `--items N`; `item_count` counts them all."""
    analysis: OutputAnalysis | None
    strategy: str | None
    recipe: dict[str, Any] | None
    """The recipe in use (bindings and commands)."""
    artifacts: list[ArtifactReport]
    decisions: list[DecisionReport]
    feedback: list[FieldFeedback]
    refinement: list[ProgressReport]
    """The refinements' progress, in order (the last entry of each is its outcome)."""
    errors: list[ErrorReport]
    logs: list[LogReport]
    tasks: list[TaskReport] = []
    """What each task or workflow node returned, in order (task sessions)."""
    messages: list[MessageReport] = []
    """The user's messages after the task, in order (conversations)."""
    turns: list[TurnReport] = []
    """How each turn ended, in order (conversations; the last one may end with the session)."""
    models: dict[str, ModelReport] = {}
    """Calls, tokens and cost per model, in the order first called."""
    batch_items: list[BatchItemReport] = []
    """A batch's items in order, each with its session (batch sessions)."""


def build_report(state: SessionState, items: int | None = None) -> SessionReport:
    """The report of a folded session, with all its items or the first `items`."""
    strategy = state.artifact("strategy")
    recipe = state.recipe_in_use()
    url = state.test_context.get("url") or state.params.get("url")
    return SessionReport(
        summary=state.summary(),
        agent_type=state.agent_type,
        request=state.request,
        request_masked=state.request_masked,
        params=state.params,
        source=str(url) if url else None,
        search_query=search_query(recipe),
        stopped_reason=state.stopped_reason,
        phases=[_phase(phase) for phase in state.phases],
        tool_calls=tool_call_counts(state),
        steps=[_step(step) for step in state.steps.values()],
        model_calls=ModelCalls(
            total=state.llm_calls,
            by_step={str(step): calls for step, calls in sorted(state.calls_by_step.items())},
        ),
        final_answer=state.final_answer,
        item_count=len(state.items),
        items=state.items if items is None else state.items[:items],
        analysis=state.analysis,
        strategy=strategy.content if strategy else None,
        recipe=recipe,
        artifacts=[
            ArtifactReport(
                name=a.name,
                version=a.version,
                format=a.format,
                origin=a.origin,
                candidate=a.candidate,
                in_use=state.current_versions.get(a.name) == a.version,
                summary=a.summary,
                content=a.content,
            )
            for versions in state.artifacts.values()
            for a in versions
        ],
        decisions=[
            DecisionReport(name=e.name, version=e.version, accepted=e.accepted, reason=e.reason)
            for e in state.timeline
            if isinstance(e, VersionDecided)
        ],
        feedback=state.feedback,
        refinement=[
            ProgressReport(
                attempt=e.attempt,
                max_attempts=e.max_attempts,
                message=e.message,
                fixed=e.fixed,
                unverified=e.unverified,
                remaining=e.remaining,
            )
            for e in state.timeline
            if isinstance(e, RefinementProgress)
        ],
        errors=[ErrorReport(kind=e.kind, message=e.message) for e in state.errors],
        logs=[
            LogReport(level=e.level, message=e.message)
            for e in state.timeline
            if isinstance(e, Log)
        ],
        tasks=[
            TaskReport(
                node=r.node,
                node_type=r.node_type,
                status=r.status,
                input_context=r.input_context,
                context=r.context,
            )
            for r in state.task_results
        ],
        messages=[
            MessageReport(turn=e.turn, text=e.text, queued=e.queued)
            for e in state.timeline
            if isinstance(e, UserMessage)
        ],
        turns=[
            TurnReport(turn=e.turn, status=e.status, stopped_reason=e.stopped_reason)
            for e in state.timeline
            if isinstance(e, TurnEnded)
        ],
        models={
            model: ModelReport(
                calls=usage.calls,
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                cost=usage.cost,
            )
            for model, usage in state.models.items()
        },
        batch_items=[
            BatchItemReport(
                item=item.item,
                label=item.label,
                state=item.state,
                session_id=item.child if item.stored else None,
                status=item.status,
                line=item.line,
                seconds=item.seconds,
                attempts=item.attempt,
                passed=item.passed,
            )
            for item in sorted(state.batch.items.values(), key=lambda i: i.item)
        ]
        if state.batch
        else [],
    )


def report_json(report: SessionReport) -> str:
    """The report as one line of JSON (values JSON cannot hold are written as text)."""
    return json.dumps(report.model_dump(mode="json"), ensure_ascii=False, default=str)


def report_schema() -> dict[str, Any]:
    """The JSON Schema of `sessions show --json`."""
    schema = SessionReport.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "tui-agent session report"
    return schema


def tool_call_counts(state: SessionState) -> dict[str, CallCount]:
    """Tool calls per phase, in the order the phases first made one."""
    counts: dict[str, CallCount] = {}
    for entry in state.tool_calls.values():
        count = counts.setdefault(entry.phase or NO_PHASE, CallCount(calls=0, failed=0, by_name={}))
        count.calls += 1
        count.failed += int(entry.result is not None and not entry.result.ok)
        count.by_name[entry.call.name] = count.by_name.get(entry.call.name, 0) + 1
    return counts


def search_query(recipe: dict[str, Any] | None) -> str | None:
    """The text the recipe types before it lists (its first top-level TYPE), if any."""
    commands = (recipe or {}).get("recipe", {}).get("commands", [])
    for command in commands if isinstance(commands, list) else []:
        if isinstance(command, dict) and command.get("type") == "TYPE":
            text = command.get("text")
            return str(text) if text else None
    return None


def _phase(phase: PhaseState) -> PhaseReport:
    done = phase.finished
    return PhaseReport(
        name=phase.name,
        detail=phase.detail,
        started_at=phase.started_ts,
        finished=done is not None,
        ok=done.ok if done else None,
        duration=done.duration if done else None,
        summary=done.summary if done else "",
    )


def _step(step: StepState) -> StepReport:
    return StepReport(
        index=step.index,
        thought=step.thought,
        action=step.action,
        code=step.code,
        execution=step.execution.model_dump(mode="json") if step.execution else None,
        final_answer=step.final_answer,
        model_calls=step.model_calls,
        attempt=step.attempt.attempt if step.attempt else None,
        checks=[{"check": c.check, "passed": c.passed, "message": c.message} for c in step.checks],
        tool_calls=[
            {
                "name": entry.call.name,
                "arguments": entry.call.arguments,
                "ok": entry.result.ok if entry.result else None,
                "output": entry.result.output if entry.result else None,
                "duration": entry.result.duration if entry.result else None,
            }
            for entry in step.tool_calls
        ],
    )
