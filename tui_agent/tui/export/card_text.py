"""A stream card as plain text, whole (what `y` on the stream copies): a step's thought, code,
the calls its program made, its whole output, error, result and answer; an artifact's
content; a call group's calls with their whole output; any other card as it reads."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from textual.content import Content

from tui_agent.events import (
    Artifact,
    Error,
    FeedbackSubmitted,
    HistoryFitted,
    Log,
    ModelChanged,
    RefinementProgress,
    SessionResumed,
    StateRestored,
    TaskResult,
    TurnEnded,
    UserMessage,
    VersionDecided,
)
from tui_agent.formatting import artifact_text, check_line
from tui_agent.session import PhaseState, StepState, ToolCallState
from tui_agent.tui.stream_groups import CallGroup, StreamEntry
from tui_agent.tui.widgets.entry_cards import (
    decision_content,
    feedback_content,
    fitted_content,
    model_changed_content,
    phase_content,
    refinement_content,
    restored_content,
    resumed_content,
    task_result_content,
    turn_ended_content,
)


def _pretty(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def tool_text(entry: ToolCallState) -> str:
    """`name({"arg": ...})`, then its whole output (or that it is waiting)."""
    call, result = entry.call, entry.result
    head = f"{call.name}({json.dumps(call.arguments, ensure_ascii=False, default=str)})"
    if result is None:
        return f"{head}\nwaiting…"
    mark = "✓" if result.ok else "✗"
    return f"{head}  {mark} {result.duration:.2f}s\n{result.output.rstrip()}".rstrip()


def step_text(step: StepState) -> str:
    """Every part of a step, whole, under a heading each."""
    sections = [f"Step {step.index}"]
    if step.thought.strip():
        sections.append("Thought:\n" + step.thought.strip())
    if step.code is not None:
        sections.append(f"Code ({step.language}):\n" + step.code.rstrip())
    if step.tool_calls:
        sections.append("Tool calls:\n" + "\n".join(map(tool_text, step.tool_calls)))
    execution = step.execution
    logs = execution.logs if execution is not None else step.live_logs
    if logs:
        sections.append("Output:\n" + "\n".join(line.text.rstrip("\n") for line in logs))
    if execution is not None:
        if execution.timed_out:
            sections.append(f"Timed out after {execution.duration:.1f}s")
        if execution.killed_reason:
            sections.append(f"Killed: {execution.killed_reason}")
        if execution.error is not None:
            error = execution.error
            trace = f"\n{error.traceback.rstrip()}" if error.traceback.strip() else ""
            sections.append(f"Error: {error.type}: {error.message}{trace}")
        if execution.result is not None:
            sections.append("Result:\n" + _pretty(execution.result))
    if step.checks:
        sections.append("Checks:\n" + "\n".join(map(check_line, step.checks)))
    if step.final_answer is not None:
        sections.append("Answer:\n" + step.final_answer.strip())
    return "\n\n".join(sections)


def group_text(group: CallGroup) -> str:
    """A group's phase (or item), then each call with its whole output and each log."""
    head = f"item {group.item}" if group.item else group.phase_name
    parts = [head]
    for entry in group.entries:
        parts.append(entry.message if isinstance(entry, Log) else tool_text(entry))
    return "\n\n".join(parts)


def _as_shown(render: Callable[[Any], Content]) -> Callable[[Any], str]:
    return lambda entry: render(entry).plain


CARD_TEXTS: dict[type, Callable[[Any], str]] = {
    ToolCallState: tool_text,
    Log: lambda entry: entry.message,
    Error: lambda entry: "\n".join(part for part in (entry.message, entry.detail) if part),
    UserMessage: lambda entry: entry.text,
    PhaseState: _as_shown(phase_content),
    FeedbackSubmitted: _as_shown(feedback_content),
    RefinementProgress: _as_shown(refinement_content),
    VersionDecided: _as_shown(decision_content),
    TaskResult: _as_shown(task_result_content),
    TurnEnded: _as_shown(turn_ended_content),
    ModelChanged: _as_shown(model_changed_content),
    SessionResumed: _as_shown(resumed_content),
    StateRestored: _as_shown(restored_content),
    HistoryFitted: _as_shown(fitted_content),
}
"""The text of each kind of entry card: whole where it can be long, else as the card reads."""


def entry_text(entry: StreamEntry) -> str:
    """The plain text of the card showing `entry`, whole."""
    if isinstance(entry, StepState):
        return step_text(entry)
    if isinstance(entry, Artifact):
        return artifact_text(entry)
    if isinstance(entry, CallGroup):
        return group_text(entry)
    return CARD_TEXTS[type(entry)](entry)


def entry_name(entry: StreamEntry) -> str:
    """What the card is, for the toast saying it was copied: `step 2`, `recipe v1`, `card`."""
    if isinstance(entry, StepState):
        return f"step {entry.index}"
    if isinstance(entry, Artifact):
        return f"{entry.name} v{entry.version}"
    if isinstance(entry, CallGroup):
        return f"item {entry.item}" if entry.item else f"{entry.phase_name} calls"
    return "card"
