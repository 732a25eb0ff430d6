"""Session state as a pure fold over events.

`fold(events)` is the only way session state is computed: the live view, replay,
`sessions show` and export summaries all call it, so they can never disagree. Recording a
session as it runs is `tui_agent.recorder.SessionRecorder`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from tui_agent.analysis.shapes import FieldFeedback, OutputAnalysis
from tui_agent.batch.state import BatchState
from tui_agent.events import (
    Artifact,
    AttemptStarted,
    BatchItem,
    BatchOrigin,
    BatchQueued,
    CheckVerdict,
    CodeProposed,
    Error,
    Event,
    ExecutionFinished,
    ExecutionOutput,
    ExecutionStarted,
    FeedbackSubmitted,
    FinalAnswer,
    ForkOrigin,
    HistoryFitted,
    ItemsExtracted,
    LLMCall,
    Log,
    LogLine,
    ModelChanged,
    OutputAnalyzed,
    PhaseFinished,
    PhaseStarted,
    RefinementProgress,
    SessionEnded,
    SessionResumed,
    SessionStarted,
    SessionStatus,
    StateRestored,
    StateRestoreRun,
    TaskResult,
    Thought,
    ThoughtDelta,
    ToolCall,
    ToolResult,
    TurnEnded,
    UserMessage,
    VersionDecided,
    current_kind,
)
from tui_agent.json_limits import loads as bounded_loads


class Pieces:
    """Text that arrives in pieces (a streamed thought), joined when read: adding each piece
    to a `str` copies the whole text every time, quadratic over a long stream."""

    __slots__ = ("_parts",)

    def __init__(self, text: str = "") -> None:
        self._parts = [text] if text else []

    def add(self, piece: str) -> None:
        self._parts.append(piece)

    def text(self) -> str:
        if len(self._parts) > 1:
            self._parts[:] = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Pieces) and self.text() == other.text()

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return repr(self.text())


@dataclass
class StepState:
    """One agent step: thought, code, its execution and maybe the final answer."""

    index: int
    thought_pieces: Pieces = field(default_factory=Pieces, repr=False)
    """The thought as streamed so far (read it as `thought`)."""
    thought_complete: bool = False
    code: str | None = None
    action: str | None = None
    language: str = "python"
    backend: str | None = None
    isolated: bool = True
    running: bool = False
    live_logs: list[LogLine] = field(default_factory=list)
    """Lines printed so far while the step runs (its execution then holds them all)."""
    execution: ExecutionFinished | None = None
    final_answer: str | None = None
    model_calls: int = 0
    """Model calls made for this step (more than one: its reply was re-asked)."""
    attempt: AttemptStarted | None = None
    """The task attempt this step is (task sessions only)."""
    checks: list[CheckVerdict] = field(default_factory=list)
    """The checks of the step's code and of its run, in order (task sessions)."""
    tool_calls: list[ToolCallState] = field(default_factory=list)
    """The tool calls the step's running program made, in order (tool code sessions)."""

    @property
    def thought(self) -> str:
        """The step's thought: the complete one, or the pieces streamed so far."""
        return self.thought_pieces.text()

    @thought.setter
    def thought(self, text: str) -> None:
        self.thought_pieces = Pieces(text)


@dataclass
class ToolCallState:
    call: ToolCall
    result: ToolResult | None = None
    phase: str = ""
    """The phase open when the call was made ("" outside any phase)."""


@dataclass
class PhaseState:
    name: str
    detail: str
    started_ts: float
    finished: PhaseFinished | None = None


TimelineEntry = (
    StepState
    | ToolCallState
    | PhaseState
    | Log
    | Error
    | FeedbackSubmitted
    | RefinementProgress
    | Artifact
    | VersionDecided
    | TaskResult
    | UserMessage
    | TurnEnded
    | ModelChanged
    | SessionResumed
    | StateRestored
    | HistoryFitted
)


@dataclass
class ModelUsage:
    """The calls of one model in a session: tokens and what is known of their cost."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    known_cost: float = 0.0
    unknown_cost_calls: int = 0

    @property
    def cost(self) -> float | None:
        """The sum of the known costs; None when no call of this model had a price."""
        return None if self.unknown_cost_calls == self.calls else self.known_cost


class SessionSummary(BaseModel):
    """One row of the sessions list, derived from the fold."""

    model_config = ConfigDict(extra="forbid")

    session_id: str
    kind: str
    title: str
    status: SessionStatus
    model: str | None = None
    started_at: float
    ended_at: float | None = None
    duration: float = 0.0
    step_count: int = 0
    item_count: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    cost_complete: bool = True
    event_count: int = 0
    stopped_reason: str | None = None
    parent: str | None = None
    """A fork's parent session and step, as "ID@STEP" (None: not a fork)."""
    batch: str | None = None
    """The batch session this one is an item of (None: not a batch item)."""


@dataclass
class SessionState:
    """Everything known about a session after applying its events in order."""

    session_id: str = ""
    kind: str = ""
    title: str = ""
    model: str | None = None
    agent_type: str = "generic"
    params: dict[str, Any] = field(default_factory=dict)
    test_context: dict[str, Any] = field(default_factory=dict)
    request: dict[str, Any] | None = None
    """The request the session was started with, as JSON (None: recorded without one)."""
    request_masked: bool = False
    status: SessionStatus = "running"
    stopped_reason: str | None = None
    started_at: float = 0.0
    ended_at: float | None = None
    last_ts: float = 0.0
    steps: dict[int, StepState] = field(default_factory=dict)
    timeline: list[TimelineEntry] = field(default_factory=list)
    items: list[Any] = field(default_factory=list)
    analysis: OutputAnalysis | None = None
    feedback: list[FieldFeedback] = field(default_factory=list)
    tool_calls: dict[str, ToolCallState] = field(default_factory=dict)
    phases: list[PhaseState] = field(default_factory=list)
    llm_calls: int = 0
    calls_by_step: dict[int, int] = field(default_factory=dict)
    """Model calls per step number (a step's card may not exist yet when its call ends)."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    known_cost: float = 0.0
    unknown_cost_calls: int = 0
    errors: list[Error] = field(default_factory=list)
    artifacts: dict[str, list[Artifact]] = field(default_factory=dict)
    """Every version of every artifact, by name, in the order recorded."""
    current_versions: dict[str, int] = field(default_factory=dict)
    """Artifact name -> the version in use (non-candidates, and accepted candidates)."""
    final_answer: str | None = None
    task_results: list[TaskResult] = field(default_factory=list)
    """What each task or workflow node returned, in order (task sessions)."""
    event_count: int = 0
    last_seq: int = 0
    turn: int = 1
    """The conversation's current turn (1: the task the session started with)."""
    models: dict[str, ModelUsage] = field(default_factory=dict)
    """Tokens and cost per model, in the order first called."""
    parent: ForkOrigin | None = None
    """The session this one was forked from, and at which step."""
    restoring: StateRestoreRun | None = None
    """The last run of a state restore under way (None: none under way)."""
    batch_of: BatchOrigin | None = None
    """The batch this session is an item of (None: not a batch item)."""
    batch: BatchState | None = None
    """A batch session's items and totals (None: not a batch)."""

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def cost(self) -> float | None:
        """Sum of known call costs; None when no model was called or no call had a price."""
        if self.unknown_cost_calls == self.llm_calls:
            return None
        return self.known_cost

    @property
    def duration(self) -> float:
        end = self.ended_at if self.ended_at is not None else self.last_ts
        return max(0.0, end - self.started_at)

    def artifact(self, name: str, version: int | None = None) -> Artifact | None:
        """Version `version` of artifact `name`; by default the current one."""
        wanted = self.current_versions.get(name) if version is None else version
        return next((a for a in self.artifacts.get(name, ()) if a.version == wanted), None)

    def recipe_in_use(self) -> dict[str, Any] | None:
        """The current "recipe" artifact (an accepted refinement), else the test context's
        recipe; None when neither is a JSON object."""
        artifact = self.artifact("recipe")
        if artifact is None:
            recipe = self.test_context.get("recipe")
        else:
            try:
                recipe = bounded_loads(artifact.content)
            except ValueError:
                return None
        return recipe if isinstance(recipe, dict) else None

    def step(self, index: int) -> StepState:
        """The step with this index, created (and put on the timeline) on first use."""
        step = self.steps.get(index)
        if step is None:
            calls = self.calls_by_step.get(index, 0)
            step = self.steps[index] = StepState(index=index, model_calls=calls)
            self.timeline.append(step)
        return step

    def apply(self, event: Event) -> None:
        """Fold one event into the state."""
        self.event_count += 1
        self.last_seq = event.seq
        self.last_ts = max(self.last_ts, event.ts)
        handler = _HANDLERS.get(type(event))
        if handler is not None:
            handler(self, event)

    def summary(self) -> SessionSummary:
        return SessionSummary(
            session_id=self.session_id,
            kind=self.kind,
            title=self.title,
            status=self.status,
            model=self.model,
            started_at=self.started_at,
            ended_at=self.ended_at,
            duration=self.duration,
            step_count=len(self.steps),
            item_count=len(self.items),
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            cost=self.cost,
            cost_complete=self.unknown_cost_calls == 0,
            event_count=self.event_count,
            stopped_reason=self.stopped_reason,
            parent=f"{self.parent.session_id}@{self.parent.at_step}" if self.parent else None,
            batch=self.batch_of.session_id if self.batch_of else None,
        )


def _started(state: SessionState, e: SessionStarted) -> None:
    state.session_id = e.session_id
    state.kind = current_kind(e.kind)
    state.title = e.title
    state.model = e.model
    state.agent_type = e.agent_type
    state.params = dict(e.params)
    state.test_context = dict(e.test_context)
    state.request = e.request
    state.request_masked = e.request_masked
    state.parent = e.parent
    state.batch_of = e.batch
    state.started_at = e.ts
    if state.kind == "batch":
        state.batch = BatchState()


def _thought_delta(state: SessionState, e: ThoughtDelta) -> None:
    state.step(e.step).thought_pieces.add(e.text)


def _thought(state: SessionState, e: Thought) -> None:
    step = state.step(e.step)
    step.thought = e.text
    step.thought_complete = True


def _code(state: SessionState, e: CodeProposed) -> None:
    step = state.step(e.step)
    step.code, step.language, step.action = e.code, e.language, e.action


def _exec_started(state: SessionState, e: ExecutionStarted) -> None:
    step = state.step(e.step)
    step.running, step.backend, step.isolated = True, e.backend, e.isolated


def _exec_output(state: SessionState, e: ExecutionOutput) -> None:
    state.step(e.step).live_logs.extend(e.lines)


def _exec_finished(state: SessionState, e: ExecutionFinished) -> None:
    step = state.step(e.step)
    step.running = False
    step.live_logs = []
    step.execution = e


def _final(state: SessionState, e: FinalAnswer) -> None:
    state.step(e.step).final_answer = e.text
    state.final_answer = e.text


def _tool_call(state: SessionState, e: ToolCall) -> None:
    entry = state.tool_calls[e.call_id] = ToolCallState(call=e, phase=_open_phase(state))
    if e.run_step is None:
        state.timeline.append(entry)
    else:
        state.step(e.run_step).tool_calls.append(entry)


def _open_phase(state: SessionState) -> str:
    """The name of the phase started last and not finished yet ("" when none is open)."""
    for phase in reversed(state.phases):
        if phase.finished is None:
            return phase.name
    return ""


def _tool_result(state: SessionState, e: ToolResult) -> None:
    entry = state.tool_calls.get(e.call_id)
    if entry is None:
        entry = state.tool_calls[e.call_id] = ToolCallState(
            call=ToolCall(call_id=e.call_id, name=e.name, session_id=e.session_id, ts=e.ts),
            phase=_open_phase(state),
        )
        state.timeline.append(entry)
    entry.result = e


def _phase_started(state: SessionState, e: PhaseStarted) -> None:
    phase = PhaseState(name=e.phase, detail=e.detail, started_ts=e.ts)
    state.phases.append(phase)
    state.timeline.append(phase)


def _phase_finished(state: SessionState, e: PhaseFinished) -> None:
    for phase in reversed(state.phases):
        if phase.name == e.phase and phase.finished is None:
            phase.finished = e
            return


def _items(state: SessionState, e: ItemsExtracted) -> None:
    if e.replace:
        state.items = list(e.items)
    else:
        state.items.extend(e.items)


def _analysis(state: SessionState, e: OutputAnalyzed) -> None:
    state.analysis = e.analysis


def _feedback(state: SessionState, e: FeedbackSubmitted) -> None:
    state.feedback.extend(e.feedback)
    state.timeline.append(e)


def _refinement(state: SessionState, e: RefinementProgress) -> None:
    state.timeline.append(e)


def _artifact(state: SessionState, e: Artifact) -> None:
    state.artifacts.setdefault(e.name, []).append(e)
    if not e.candidate:
        state.current_versions[e.name] = e.version
    state.timeline.append(e)


def _version_decided(state: SessionState, e: VersionDecided) -> None:
    if e.accepted and state.artifact(e.name, e.version) is not None:
        state.current_versions[e.name] = e.version
    state.timeline.append(e)


def _attempt(state: SessionState, e: AttemptStarted) -> None:
    state.step(e.step).attempt = e


def _check(state: SessionState, e: CheckVerdict) -> None:
    state.step(e.step).checks.append(e)


def _task_result(state: SessionState, e: TaskResult) -> None:
    state.task_results.append(e)
    state.timeline.append(e)


def _llm_call(state: SessionState, e: LLMCall) -> None:
    state.llm_calls += 1
    if e.step:
        calls = state.calls_by_step[e.step] = state.calls_by_step.get(e.step, 0) + 1
        if e.step in state.steps:
            state.steps[e.step].model_calls = calls
    state.prompt_tokens += e.prompt_tokens
    state.completion_tokens += e.completion_tokens
    usage = state.models.setdefault(e.model, ModelUsage())
    usage.calls += 1
    usage.prompt_tokens += e.prompt_tokens
    usage.completion_tokens += e.completion_tokens
    if e.cost is None:
        state.unknown_cost_calls += 1
        usage.unknown_cost_calls += 1
    else:
        state.known_cost += e.cost
        usage.known_cost += e.cost


def _log(state: SessionState, e: Log) -> None:
    state.timeline.append(e)


def _error(state: SessionState, e: Error) -> None:
    state.errors.append(e)
    state.timeline.append(e)


def _ended(state: SessionState, e: SessionEnded) -> None:
    state.status = e.status
    state.stopped_reason = e.stopped_reason
    state.ended_at = e.ts
    state.restoring = None


def _user_message(state: SessionState, e: UserMessage) -> None:
    state.timeline.append(e)
    state.turn = max(state.turn, e.turn)
    state.status = "running"


def _turn_ended(state: SessionState, e: TurnEnded) -> None:
    state.timeline.append(e)
    for step in state.steps.values():  # a run the user interrupted ran no further
        step.running = False
    state.status = "waiting"
    state.stopped_reason = e.stopped_reason


def _model_changed(state: SessionState, e: ModelChanged) -> None:
    state.timeline.append(e)
    state.model = e.model


def _resumed(state: SessionState, e: SessionResumed) -> None:
    state.timeline.append(e)
    state.status = "running"
    state.stopped_reason = None
    state.ended_at = None


def _restore_run(state: SessionState, e: StateRestoreRun) -> None:
    state.restoring = e


def _restored(state: SessionState, e: StateRestored) -> None:
    state.timeline.append(e)
    state.restoring = None


def _fitted(state: SessionState, e: HistoryFitted) -> None:
    state.timeline.append(e)


def _batch_queued(state: SessionState, e: BatchQueued) -> None:
    if state.batch is not None:
        state.batch.queued(e)
    state.status, state.stopped_reason, state.ended_at = "running", None, None  # a resume


def _batch_item(state: SessionState, e: BatchItem) -> None:
    if state.batch is not None:
        state.batch.changed(e)


_HANDLERS: dict[type, Callable[[SessionState, Any], None]] = {
    BatchQueued: _batch_queued,
    BatchItem: _batch_item,
    SessionStarted: _started,
    ThoughtDelta: _thought_delta,
    Thought: _thought,
    CodeProposed: _code,
    ExecutionStarted: _exec_started,
    ExecutionOutput: _exec_output,
    ExecutionFinished: _exec_finished,
    FinalAnswer: _final,
    ToolCall: _tool_call,
    ToolResult: _tool_result,
    PhaseStarted: _phase_started,
    PhaseFinished: _phase_finished,
    ItemsExtracted: _items,
    OutputAnalyzed: _analysis,
    FeedbackSubmitted: _feedback,
    RefinementProgress: _refinement,
    Artifact: _artifact,
    VersionDecided: _version_decided,
    AttemptStarted: _attempt,
    CheckVerdict: _check,
    TaskResult: _task_result,
    LLMCall: _llm_call,
    Log: _log,
    Error: _error,
    SessionEnded: _ended,
    UserMessage: _user_message,
    TurnEnded: _turn_ended,
    ModelChanged: _model_changed,
    SessionResumed: _resumed,
    StateRestoreRun: _restore_run,
    StateRestored: _restored,
    HistoryFitted: _fitted,
}


def fold(events: Iterable[Event]) -> SessionState:
    """The state of a session after all of `events`, in order."""
    state = SessionState()
    for event in events:
        state.apply(event)
    return state
