"""Cards for the timeline entries that are not agent steps: tool calls, phases, logs, errors,
feedback, refinement progress, version decisions and a conversation's own entries (the user's
messages, turn ends, model switches, resumes, restored state, fitted history). Each renders
to one Static and re-renders only on change (artifacts have their own card, artifact_card.py).
"""

from __future__ import annotations

import json
from typing import Any

from textual.content import Content
from textual.widgets import Static

from tui_agent.events import (
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
from tui_agent.formatting import clipped, task_result_line
from tui_agent.session import PhaseState, ToolCallState

MAX_TOOL_OUTPUT_LINES = 8
MAX_ARGUMENT_CHARS = 120
LOG_STYLES = {
    "debug": "dim",
    "info": "",
    "warning": "$text-warning",
    "error": "$text-error",
}


def _arguments(arguments: dict[str, Any]) -> str:
    text = ", ".join(
        f"{k}={json.dumps(v, ensure_ascii=False, default=str)}" for k, v in arguments.items()
    )
    return text if len(text) <= MAX_ARGUMENT_CHARS else text[: MAX_ARGUMENT_CHARS - 1] + "…"


def pending_text(closed: str | None, waiting: str = "waiting…") -> tuple[str, str]:
    """What a call, phase or step with no outcome says: `waiting…` while the session runs,
    else how the session ended (`■ cancelled`)."""
    if closed is None:
        return f"  {waiting}", "dim italic"
    return f"  ■ {closed}", "$text-warning"


def tool_content(entry: ToolCallState, closed: str | None = None) -> Content:
    """`⚙ name(args)` then the result's first lines, or `waiting…` (the session's end once it
    ended: `closed`)."""
    call, result = entry.call, entry.result
    parts: list[str | tuple[str, str]] = [
        ("⚙ ", "$text-accent"),
        (call.name, "bold"),
        f"({_arguments(call.arguments)})",
    ]
    if result is None:
        parts.append(pending_text(closed))
        return Content.assemble(*parts)
    mark, style = ("✓", "$text-success") if result.ok else ("✗", "$text-error")
    parts += ["  ", (f"{mark} {result.duration:.2f}s", style)]
    lines = result.output.rstrip().splitlines()
    for line in lines[:MAX_TOOL_OUTPUT_LINES]:
        parts.append((f"\n  {clipped(line)}", "" if result.ok else "$text-error"))
    if len(lines) > MAX_TOOL_OUTPUT_LINES:
        hidden = len(lines) - MAX_TOOL_OUTPUT_LINES
        parts.append((f"\n  … {hidden} more lines · v shows them all", "dim"))
    return Content.assemble(*parts)


def phase_content(phase: PhaseState, closed: str | None = None) -> Content:
    """`▸ name — detail` with its outcome and duration once finished (or the session's end:
    `closed`)."""
    parts: list[str | tuple[str, str]] = [("▸ ", "$text-accent"), (phase.name, "bold")]
    if phase.detail:
        parts.append(f" — {clipped(phase.detail)}")
    finished = phase.finished
    if finished is None:
        parts.append(pending_text(closed, "running…"))
        return Content.assemble(*parts)
    mark, style = ("✓", "$text-success") if finished.ok else ("✗", "$text-error")
    parts += ["  ", (f"{mark} {finished.duration:.2f}s", style)]
    if finished.summary:
        parts.append(("\n  " + clipped(finished.summary), "dim"))
    return Content.assemble(*parts)


def log_content(log: Log) -> Content:
    message = clipped(log.message)
    return Content.assemble((f"{log.level:>7} ", "dim"), (message, LOG_STYLES[log.level]))


def error_content(error: Error) -> Content:
    headline = f"✗ {clipped(error.kind)}: {clipped(error.message)}"
    parts: list[str | tuple[str, str]] = [(headline, "$text-error bold")]
    if error.detail:
        parts.append((f"\n  {clipped(error.detail)}", "$text-error 70%"))
    return Content.assemble(*parts)


def feedback_content(event: FeedbackSubmitted) -> Content:
    fields = ", ".join(f"{f.field} ({f.issue})" for f in event.feedback)
    count = len(event.feedback)
    return Content.assemble(
        ("✎ feedback submitted", "$text-accent bold"),
        f" on {count} field{'s' if count != 1 else ''}: {fields}",
    )


def attempt_meter(attempt: int, max_attempts: int) -> str:
    """`▰▰▱▱▱`: attempts started out of the maximum."""
    done = max(0, min(attempt, max_attempts))
    return "▰" * done + "▱" * (max_attempts - done)


def refinement_content(event: RefinementProgress) -> Content:
    """`↻ attempt 2/5 ▰▰▱▱▱  message`, then the fixed and the remaining fields."""
    parts: list[str | tuple[str, str]] = [
        ("↻ ", "$text-accent"),
        (f"attempt {event.attempt}/{event.max_attempts}", "bold"),
        " ",
        (attempt_meter(event.attempt, event.max_attempts), "$text-accent"),
        f"  {event.message}",
    ]
    if event.fixed:
        parts.append((f"\n  ✓ fixed: {', '.join(event.fixed)}", "$text-success"))
    if event.remaining:
        parts.append((f"\n  … remaining: {', '.join(event.remaining)}", "$text-warning"))
    return Content.assemble(*parts)


def decision_content(event: VersionDecided) -> Content:
    """`✓ accepted recipe v2` or `✗ rejected code v3`, with the reason if one was given."""
    mark, verb, style = (
        ("✓", "accepted", "$text-success") if event.accepted else ("✗", "rejected", "$text-error")
    )
    parts: list[str | tuple[str, str]] = [
        (f"{mark} {verb} ", f"{style} bold"),
        (f"{event.name} v{event.version}", "bold"),
    ]
    if event.reason:
        parts.append((f" — {event.reason}", "dim"))
    return Content.assemble(*parts)


def task_result_content(event: TaskResult) -> Content:
    """`🧾 node: success · wrote a, b · 1 attempt · 2 model calls · $0.0010`."""
    style = "$text-success bold" if event.status == "success" else "$text-error bold"
    node = f"{event.node}: " if event.node and event.node != "task" else ""
    return Content.assemble(("🧾 ", ""), (f"{node}{task_result_line(event)}", style))


def user_message_content(event: UserMessage) -> Content:
    """`you:` and the message; one sent while the agent worked says so."""
    parts: list[str | tuple[str, str]] = [("you", "$text-primary bold")]
    if event.queued:
        parts.append((" · sent while the agent worked", "dim italic"))
    parts += [("\n", ""), clipped(event.text, 4000)]
    return Content.assemble(*parts)


def turn_ended_content(event: TurnEnded) -> Content:
    """`── turn 2 · completed ──`: a thin line between turns."""
    reason = event.stopped_reason
    how = event.status + (f": {reason}" if reason and reason != event.status else "")
    style = "$text-success" if event.status == "completed" else "$text-warning"
    return Content.assemble(
        ("── ", "dim"), (f"turn {event.turn} · ", "dim"), (how, style), (" ──", "dim")
    )


def model_changed_content(event: ModelChanged) -> Content:
    previous = f" (was {event.previous})" if event.previous else ""
    return Content.assemble(("⇄ model ", "$text-accent"), (event.model, "bold"), (previous, "dim"))


def resumed_content(event: SessionResumed) -> Content:
    """`↺ continued · restoring the state: 3 runs (step 2 flagged)` or `… with a clean sandbox`."""
    if event.restore == "clean" or not event.runs:
        how = "with a clean sandbox" if event.restore == "clean" else "nothing to restore"
    else:
        how = f"restoring the state: {event.runs} run{'s' if event.runs != 1 else ''}"
    parts: list[str | tuple[str, str]] = [("↺ continued", "$text-accent bold"), f" · {how}"]
    if event.flagged:
        steps = ", ".join(str(step) for step in event.flagged)
        parts.append((f" (flagged: step{'s' if len(event.flagged) != 1 else ''} {steps})", "dim"))
    return Content.assemble(*parts)


def _steps(steps: list[int]) -> str:
    return f"step{'s' if len(steps) != 1 else ''} " + ", ".join(str(step) for step in steps)


def restored_content(event: StateRestored) -> Content:
    """`✓ state restored: 3 of 3 runs in 1.20s`, with what failed and was left out."""
    if event.clean:
        return Content.assemble(("○ state not restored", "$text-warning bold"), ": a clean sandbox")
    ok = not event.failed
    mark, style = ("✓", "$text-success") if ok else ("!", "$text-warning")
    parts: list[str | tuple[str, str]] = [
        (f"{mark} state restored", f"{style} bold"),
        f": {event.ran} of {event.total} run{'s' if event.total != 1 else ''}",
        (f" in {event.duration:.2f}s", "dim"),
    ]
    if event.failed:
        verb = "failed and was" if len(event.failed) == 1 else "failed and were"
        parts.append((f"; {_steps(event.failed)} {verb} left out", "$text-warning"))
    left_out = [step for step in event.skipped if step not in event.failed]
    if left_out:
        parts.append((f"; {_steps(left_out)} not run again", "dim"))
    return Content.assemble(*parts)


def fitted_content(event: HistoryFitted) -> Content:
    """`⇲ history fitted before step 7: 9,800 → 3,900 tokens (limit 4,000) · …`."""
    what = [
        f"{count} {label}"
        for count, label in (
            (event.shortened, "outputs shortened"),
            (event.summarised, "messages summarised"),
            (event.dropped, "left out"),
        )
        if count
    ]
    return Content.assemble(
        ("⇲ history fitted", "$text-accent bold"),
        f" before step {event.step}: {event.before:,} → {event.after:,} tokens"
        f" (limit {event.limit:,})",
        (" · " + ", ".join(what) if what else "", "dim"),
    )


class EntryCard(Static):
    """A one-Static card; `show` re-renders only when the entry's visible parts changed.

    `closed` is how the session ended (None while it runs): a call or phase still waiting
    then says so instead of `waiting…`.
    """

    def __init__(self, entry: Any, kind: str) -> None:
        super().__init__(classes=f"card entry-card {kind}-card")
        self.closed: str | None = None
        self._key: tuple[object, ...] | None = None
        self._entry = entry
        self._composed = False

    def on_mount(self) -> None:
        self._composed = True
        self._render_entry(self._entry)

    async def show(self, entry: Any) -> None:
        self._entry = entry
        if self._composed:
            self._render_entry(entry)

    def _render_entry(self, entry: Any) -> None:
        key = (*_entry_key(entry), self.closed)
        if key != self._key:
            self._key = key
            self.update(entry_content(entry, self.closed))


def entry_content(entry: Any, closed: str | None = None) -> Content:
    """The card of a timeline entry that is not a step, a group or an artifact (`closed`:
    how the session ended)."""
    if isinstance(entry, ToolCallState | PhaseState):
        return _RENDERERS[type(entry)](entry, closed)
    return _RENDERERS[type(entry)](entry)


def _entry_key(entry: Any) -> tuple[object, ...]:
    if isinstance(entry, ToolCallState):
        return (entry.call, entry.result)
    if isinstance(entry, PhaseState):
        return (entry.name, entry.started_ts, entry.finished)
    return (entry,)


_RENDERERS: dict[type, Any] = {
    ToolCallState: tool_content,
    PhaseState: phase_content,
    Log: log_content,
    Error: error_content,
    FeedbackSubmitted: feedback_content,
    RefinementProgress: refinement_content,
    VersionDecided: decision_content,
    TaskResult: task_result_content,
    UserMessage: user_message_content,
    TurnEnded: turn_ended_content,
    ModelChanged: model_changed_content,
    SessionResumed: resumed_content,
    StateRestored: restored_content,
    HistoryFitted: fitted_content,
}

CARD_KINDS: dict[type, str] = {
    ToolCallState: "tool",
    PhaseState: "phase",
    Log: "log",
    Error: "error",
    FeedbackSubmitted: "feedback",
    RefinementProgress: "refinement",
    VersionDecided: "decision",
    TaskResult: "task-result",
    UserMessage: "user",
    TurnEnded: "turn",
    ModelChanged: "model",
    SessionResumed: "resumed",
    StateRestored: "restored",
    HistoryFitted: "fitted",
}
