"""The event union: the one stream every agent emits and every view consumes.

Agents build events with only their payload; the `SessionRecorder` stamps `session_id`, a
gap-free `seq` and `ts` when it appends them. `parse_event` / `Event.model_dump_json()` give
a lossless JSON round trip.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from tui_agent.analysis.shapes import AgentType, ChangeVerdict, FieldFeedback, OutputAnalysis

SCHEMA_VERSION = 14
"""Version of the event schema; bumped on any change old readers could not parse.

2: ExecutionOutput (live output of a running step).
3: Artifact and VersionDecided (strategies, recipes and code versions).
4: SessionEnded status "interrupted" (the recording process died).
5: AttemptStarted, CheckVerdict and TaskResult (the task executor); LLMCall.estimated.
6: ToolCall.run_step (a call the running program of a step made, shown inside that step).
7: SessionEnded status "partial" (a scrape kept its items when a later page failed).
8: Artifact.changes (a candidate's per-field verdicts with before -> after values);
   ExecutionFinished.files and .workspace (the files a run wrote, for its step card).
9: SessionStarted.request (what the session was started with: its request, as JSON).
11: conversations: UserMessage, TurnEnded, ModelChanged, SessionResumed, StateRestoreRun,
    StateRestored, HistoryFitted; status "waiting"; SessionStarted.parent (a fork's origin).
12: LLMCall.sampling (the temperature, max tokens and top_p a call was sent with).
13: batches: kind "batch", BatchQueued and BatchItem; SessionStarted.batch (an item's batch).
14: FieldChange verdict "improved" (a field better than before, not yet fixed)."""

SessionKind = Literal["code", "exec", "scrape", "task", "refine", "toolcode", "recording", "batch"]
RecordedKind = SessionKind | Literal["codeact"]
"""A kind as an event recorded it: schema 9 and before named the command `code` `codeact`.
Events stay as recorded (an export is the file imported, byte for byte); `current_kind`
names it."""
SessionStatus = Literal[
    "running", "waiting", "completed", "failed", "cancelled", "stopped", "interrupted", "partial"
]
""""interrupted": the process recording the session died before ending it (kill -9, a lost
SSH connection, a power cut); another process noticed and ended it. "partial": the work failed
part way (a scrape's page N) and what it had done is kept (the items of the pages before).
"waiting": a conversation between turns, waiting for the user's next message."""
OPEN_STATUSES: tuple[SessionStatus, ...] = ("running", "waiting")
"""The statuses of a session that has not ended: its recording process still holds it."""
LogStream = Literal["stdout", "stderr"]
ArtifactFormat = Literal["markdown", "json", "python", "text"]
TaskStage = Literal["analysis", "task"]
CheckName = Literal["reply", "context_access", "serialization", "output"]
"""What a task's code is checked for: a usable reply (code, the expected stage), names it uses
but never defines (before running), JSON values in the context and the model's verdict on the
output (after running)."""


def new_session_id() -> str:
    """A short random id (12 hex digits); sessions can be named by any unique prefix."""
    return uuid.uuid4().hex[:12]


def _empty(value: Any) -> bool:
    """Fields added later are left out of the JSON while empty: older sessions export as they
    were recorded, byte for byte."""
    return not value


class BaseEvent(BaseModel):
    """Fields every event carries."""

    # Infinity / NaN are kept as JSON constants (Python's json reads them back): lossless.
    model_config = ConfigDict(extra="forbid", frozen=True, ser_json_inf_nan="constants")

    schema_version: int = SCHEMA_VERSION
    session_id: str = ""
    seq: int = 0
    ts: float = Field(default_factory=time.time)


def current_kind(kind: RecordedKind) -> SessionKind:
    """A recorded session kind under its current name."""
    return "code" if kind == "codeact" else kind


class ForkOrigin(BaseModel):
    """Where a fork came from: its parent session, and the last of its steps the fork holds."""

    session_id: str
    at_step: int


class BatchOrigin(BaseModel):
    """The batch a session is an item of, and which item (0-based)."""

    session_id: str
    item: int


class SessionStarted(BaseEvent):
    type: Literal["session_started"] = "session_started"
    kind: RecordedKind
    title: str
    model: str | None = None
    agent_type: AgentType = "generic"
    params: dict[str, Any] = Field(default_factory=dict)
    test_context: dict[str, Any] = Field(default_factory=dict)
    request: dict[str, Any] | None = Field(default=None, exclude_if=_empty)
    """The request the session was started with, as JSON (`tui_agent.agents.requests`), its
    settings-backed fields resolved and the secrets of a context masked; None for sessions
    recorded before requests were stored (or started without one)."""
    request_masked: bool = Field(default=False, exclude_if=_empty)
    """Secrets were masked in `request`: running it again needs them given again."""
    parent: ForkOrigin | None = Field(default=None, exclude_if=_empty)
    """A fork's origin: the session and the step it was forked at (None: not a fork)."""
    batch: BatchOrigin | None = Field(default=None, exclude_if=_empty)
    """The batch this session is an item of (None: not a batch item)."""


class ThoughtDelta(BaseEvent):
    """A streamed piece of a step's thought, as tokens arrive."""

    type: Literal["thought_delta"] = "thought_delta"
    step: int
    text: str


class Thought(BaseEvent):
    """A step's complete thought (replaces the deltas seen before it)."""

    type: Literal["thought"] = "thought"
    step: int
    text: str


class CodeProposed(BaseEvent):
    type: Literal["code_proposed"] = "code_proposed"
    step: int
    code: str
    language: str = "python"
    action: str = "execute_code"


class ExecutionStarted(BaseEvent):
    type: Literal["execution_started"] = "execution_started"
    step: int
    backend: str
    isolated: bool = True


class LogLine(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    stream: LogStream
    text: str


class ErrorInfo(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    type: str
    message: str
    traceback: str = ""


class WrittenFile(BaseModel):
    """A file a run created or changed in its workspace: its path there, size and SHA-256
    (so a preview can tell the file was overwritten since)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    size: int
    sha256: str = ""


class ExecutionFinished(BaseEvent):
    type: Literal["execution_finished"] = "execution_finished"
    step: int
    success: bool
    result: Any = None
    logs: list[LogLine] = Field(default_factory=list)
    logs_truncated: bool = False
    duration: float = 0.0
    error: ErrorInfo | None = None
    timed_out: bool = False
    killed_reason: str | None = None
    non_serializable: list[str] = Field(default_factory=list)
    context: dict[str, Any] | None = None
    files: list[WrittenFile] = Field(default_factory=list, exclude_if=_empty)
    """Files the run created or changed in the workspace (paths relative to it)."""
    workspace: str | None = Field(default=None, exclude_if=_empty)
    """The host folder mounted at /workspace, when files were written."""


class ExecutionOutput(BaseEvent):
    """Lines a running step printed since the last ExecutionOutput (about every 0.2 s).

    Shown while the run goes on; the step's ExecutionFinished then carries all of its lines.
    """

    type: Literal["execution_output"] = "execution_output"
    step: int
    lines: list[LogLine]


class FinalAnswer(BaseEvent):
    type: Literal["final_answer"] = "final_answer"
    step: int
    text: str


class ToolCall(BaseEvent):
    type: Literal["tool_call"] = "tool_call"
    call_id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    step: int = 0
    """The agent step that made this call (0: no agent step, e.g. a recipe's command)."""
    run_step: int | None = None
    """The step whose running program made this call (through the sandbox's channel); None
    when the agent itself made it."""
    item: int | None = None
    """The item a recipe run's command worked on (its ordinal in the list); None: no item."""

    @property
    def recipe_item(self) -> int | None:
        """The item a recipe run's command worked on, from any schema: 9 and before kept it
        in `step` (the event stays as recorded)."""
        if self.item is None and self.schema_version < 10 and self.step:
            return self.step
        return self.item


class ToolResult(BaseEvent):
    type: Literal["tool_result"] = "tool_result"
    call_id: str
    name: str
    output: str
    facts: dict[str, Any] = Field(default_factory=dict)
    ok: bool = True
    duration: float = 0.0


class PhaseStarted(BaseEvent):
    type: Literal["phase_started"] = "phase_started"
    phase: str
    detail: str = ""


class PhaseFinished(BaseEvent):
    type: Literal["phase_finished"] = "phase_finished"
    phase: str
    ok: bool = True
    duration: float = 0.0
    summary: str = ""


class ItemsExtracted(BaseEvent):
    """Items appended to the session's item list (in batches, as they arrive)."""

    type: Literal["items_extracted"] = "items_extracted"
    items: list[Any]
    step: int = 0
    replace: bool = False


class OutputAnalyzed(BaseEvent):
    type: Literal["output_analyzed"] = "output_analyzed"
    analysis: OutputAnalysis
    step: int = 0


class FeedbackSubmitted(BaseEvent):
    type: Literal["feedback_submitted"] = "feedback_submitted"
    feedback: list[FieldFeedback]


class RefinementProgress(BaseEvent):
    type: Literal["refinement_progress"] = "refinement_progress"
    attempt: int
    max_attempts: int
    message: str
    fixed: list[str] = Field(default_factory=list)
    remaining: list[str] = Field(default_factory=list)
    unverified: list[str] = Field(default_factory=list)
    """Fields that changed with nothing to verify them against (not counted as fixed)."""


class FieldChange(BaseModel):
    """What a candidate version did to one field the feedback named: its coverage before and
    after (0..1), the check's verdict and the values of a few items before and after."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    field: str
    issue: str = ""
    before: float
    after: float
    verdict: ChangeVerdict
    samples: list[tuple[Any, Any]] = Field(default_factory=list)


class Artifact(BaseEvent):
    """A named document the session produced: a strategy, a recipe, a version of the code.

    Versions of one `name` count up from 1. A `candidate` waits for the user's
    VersionDecided; any other artifact is the current version as soon as it is recorded.
    """

    type: Literal["artifact"] = "artifact"
    name: str
    content: str
    format: ArtifactFormat = "text"
    version: int = 1
    origin: str = ""
    candidate: bool = False
    summary: str = ""
    changes: list[FieldChange] = Field(default_factory=list, exclude_if=_empty)
    """A candidate's verdict per field of the feedback (empty in sessions before schema 6)."""


class VersionDecided(BaseEvent):
    """The user accepted or rejected a candidate version of an artifact."""

    type: Literal["version_decided"] = "version_decided"
    name: str
    version: int
    accepted: bool
    reason: str = ""


class AttemptStarted(BaseEvent):
    """An attempt of a task (or workflow node) begins: step `step` generates and runs its
    code. `cached`: the step runs code from the cache, with no model call."""

    type: Literal["attempt_started"] = "attempt_started"
    step: int
    attempt: int
    max_attempts: int
    stage: TaskStage = "task"
    node: str = ""
    cached: bool = False


class CheckVerdict(BaseEvent):
    """One check of a step's code or of what its run left in the context."""

    type: Literal["check_verdict"] = "check_verdict"
    step: int
    check: CheckName
    passed: bool
    message: str = ""


class TaskResult(BaseEvent):
    """A task (or workflow node) ended. `context` is the updated context the task returns,
    `_ai_metadata` included; `input_context` what it was given. Values under secret-looking
    keys are masked in both."""

    type: Literal["task_result"] = "task_result"
    node: str = ""
    node_type: str = "task"
    status: Literal["success", "failed"]
    context: dict[str, Any]
    input_context: dict[str, Any] = Field(default_factory=dict)


def _unset(value: Any) -> bool:
    return value is None


class Sampling(BaseModel):
    """How a model samples its reply; a setting left None is the server's default (never
    sent, and left out of the JSON)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float | None = Field(default=None, ge=0, exclude_if=_unset)
    max_tokens: int | None = Field(default=None, ge=1, exclude_if=_unset)
    """Tokens per reply at most."""
    top_p: float | None = Field(default=None, gt=0, le=1, exclude_if=_unset)

    def given(self) -> dict[str, float | int]:
        """The settings that are set, as request parameters."""
        return self.model_dump(exclude_none=True)

    def __bool__(self) -> bool:
        return bool(self.given())


class LLMCall(BaseEvent):
    type: Literal["llm_call"] = "llm_call"
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    latency: float = 0.0
    cached: bool = False
    purpose: str = ""
    step: int = 0
    estimated: bool = False
    """The token counts were counted locally: the provider reported no usage."""
    sampling: Sampling | None = Field(default=None, exclude_if=_empty)
    """The sampling settings the call was sent with (None: all left to the server)."""


class Log(BaseEvent):
    type: Literal["log"] = "log"
    level: Literal["debug", "info", "warning", "error"] = "info"
    message: str


class Error(BaseEvent):
    type: Literal["error"] = "error"
    message: str
    kind: str = "error"
    detail: str = ""


class UserMessage(BaseEvent):
    """The user's message in a conversation: a follow-up opening turn `turn`, or (`queued`)
    a message typed while the agent worked, given to the model before its next step."""

    type: Literal["user_message"] = "user_message"
    turn: int
    text: str
    queued: bool = False


class TurnEnded(BaseEvent):
    """A turn of a conversation ended (answered, stopped, failed, interrupted by the user);
    the session waits for the next message."""

    type: Literal["turn_ended"] = "turn_ended"
    turn: int
    status: SessionStatus
    stopped_reason: str | None = None


class ModelChanged(BaseEvent):
    """The next turns use `model` (`/model NAME`)."""

    type: Literal["model_changed"] = "model_changed"
    model: str
    previous: str | None = None


class SessionResumed(BaseEvent):
    """A session goes on after it ended (or was interrupted): a continue, or a fork's start.
    `restore`: "state" (the sandbox's state is rebuilt by running its code again) or "clean"
    (a fresh sandbox); `runs`: how many runs restoring would take."""

    type: Literal["session_resumed"] = "session_resumed"
    restore: Literal["state", "clean"]
    runs: int = 0
    flagged: list[int] = Field(default_factory=list)
    """Steps whose code ran with the network or wrote outside the workspace (asked first)."""


class StateRestoreRun(BaseEvent):
    """One run of a session's code again, restoring the sandbox's state: run `done` of
    `total`, the code of step `step`."""

    type: Literal["state_restore_run"] = "state_restore_run"
    step: int
    done: int
    total: int
    ok: bool
    skipped: bool = False
    error: str = ""
    duration: float = 0.0


class StateRestored(BaseEvent):
    """Restoring ended: how many runs ran again, which failed or were left out, or that the
    user chose a clean sandbox instead."""

    type: Literal["state_restored"] = "state_restored"
    ran: int
    total: int
    failed: list[int] = Field(default_factory=list)
    skipped: list[int] = Field(default_factory=list)
    clean: bool = False
    duration: float = 0.0


class HistoryFitted(BaseEvent):
    """The conversation was fitted into the model's context before step `step`."""

    type: Literal["history_fitted"] = "history_fitted"
    step: int
    before: int
    after: int
    limit: int
    shortened: int = 0
    summarised: int = 0
    dropped: int = 0


BatchItemStatus = Literal["started", "finished", "failed", "retrying", "cancelled"]


class BatchEntry(BaseModel):
    """One item of a batch as queued: its index, what it is (a URL, a row, a task id) and the
    id its session gets (derived from the batch and the item, so a rerun never duplicates)."""

    item: int
    label: str
    child: str


class BatchQueued(BaseEvent):
    """Items of a batch were queued (all of them at the start; the rest on a resume)."""

    type: Literal["batch_queued"] = "batch_queued"
    entries: list[BatchEntry]
    total: int
    """How many items the batch has in all."""


class BatchItem(BaseEvent):
    """An item of a batch started, finished (its session stored), failed (its one line) or is
    run again (`retrying`: its worker died or its session failed and retries remain).
    `status`: the child session's status once finished; `passed`: an eval item's check."""

    type: Literal["batch_item"] = "batch_item"
    item: int
    state: BatchItemStatus
    child: str = ""
    status: str = ""
    line: str = ""
    seconds: float = 0.0
    attempt: int = 1
    worker: str = ""
    passed: bool | None = None


class SessionEnded(BaseEvent):
    type: Literal["session_ended"] = "session_ended"
    status: SessionStatus
    stopped_reason: str | None = None
    summary: str = ""


Event = Annotated[
    SessionStarted
    | ThoughtDelta
    | Thought
    | CodeProposed
    | ExecutionStarted
    | ExecutionFinished
    | ExecutionOutput
    | FinalAnswer
    | ToolCall
    | ToolResult
    | PhaseStarted
    | PhaseFinished
    | ItemsExtracted
    | OutputAnalyzed
    | FeedbackSubmitted
    | RefinementProgress
    | Artifact
    | VersionDecided
    | AttemptStarted
    | CheckVerdict
    | TaskResult
    | LLMCall
    | Log
    | Error
    | UserMessage
    | TurnEnded
    | ModelChanged
    | SessionResumed
    | StateRestoreRun
    | StateRestored
    | HistoryFitted
    | BatchQueued
    | BatchItem
    | SessionEnded,
    Field(discriminator="type"),
]

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


class EventSchemaError(ValueError):
    """An event written by a newer version of tui-agent than this one."""


def parse_event(data: str | bytes | dict[str, Any]) -> Event:
    """Parse one event from JSON text or a dict; a newer schema_version is refused."""
    raw = json.loads(data) if isinstance(data, str | bytes) else data
    version = raw.get("schema_version", SCHEMA_VERSION) if isinstance(raw, dict) else None
    if isinstance(version, int) and version > SCHEMA_VERSION:
        raise EventSchemaError(
            f"event schema {version} is newer than this tui-agent supports "
            f"({SCHEMA_VERSION}); upgrade tui-agent"
        )
    return EVENT_ADAPTER.validate_python(raw)


def dump_event(event: BaseEvent) -> str:
    """The event as one line of JSON (the stored and exported form)."""
    return event.model_dump_json()
