"""The whole text of one stream entry, as plain lines: what its card shows unfolded, with
nothing cut (every output line, the whole traceback, result, tool outputs, log and message).
Search runs over it, the output screen (`v`) shows it and `y` copies it. No widgets here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

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
from tui_agent.tui.stream.matches import Block
from tui_agent.tui.stream_groups import CallGroup, StreamEntry
from tui_agent.tui.widgets.entry_cards import CARD_KINDS, entry_content, pending_text
from tui_agent.tui.widgets.group_card import expanded_content
from tui_agent.tui.widgets.step_card import pretty, step_title


def entry_title(entry: StreamEntry) -> str:
    """A short name of the entry's card: `Step 2`, `item 3`, `plan`, `recipe v2`…"""
    if isinstance(entry, StepState):
        return step_title(entry)
    if isinstance(entry, CallGroup):
        if entry.item:
            return f"item {entry.item}"
        return entry.phase_name or entry.calls[0].call.name
    if isinstance(entry, Artifact):
        return f"{entry.name} v{entry.version}"
    if isinstance(entry, ToolCallState):
        return entry.call.name
    return f"{CARD_KINDS[type(entry)]} card"


def text_key(entry: StreamEntry) -> tuple[object, ...]:
    """Changes whenever the entry's text changed (steps, calls and groups grow in place)."""
    if isinstance(entry, StepState):
        execution = entry.execution
        return (
            len(entry.thought),
            entry.code,
            execution,
            len(entry.live_logs),
            len(entry.tool_calls),
            tuple(call.result for call in entry.tool_calls),
            len(entry.checks),
            entry.final_answer,
        )
    if isinstance(entry, CallGroup):
        return entry.key()
    if isinstance(entry, ToolCallState):
        return (entry.result,)
    if isinstance(entry, PhaseState):
        return (entry.finished,)
    return ()


def entry_lines(entry: StreamEntry, closed: str | None = None) -> list[str]:
    """Every line of the entry's text (`closed`: how the session ended)."""
    if isinstance(entry, StepState):
        return step_lines(entry)
    if isinstance(entry, CallGroup):
        return group_lines(entry, closed)
    if isinstance(entry, Artifact):
        return [*header_lines(entry), *artifact_text(entry).split("\n")]
    return CARD_LINES[type(entry)](entry, closed)


def header_lines(artifact: Artifact) -> list[str]:
    """`◆ name v2 · origin`, then the summary (the status the card shows is the session's, not
    the artifact's, so it is left out)."""
    head = f"◆ {artifact.name} v{artifact.version}"
    if artifact.origin:
        head += f" · {artifact.origin}"
    return [head, *(artifact.summary.split("\n") if artifact.summary else [])]


def tool_lines(entry: ToolCallState, closed: str | None = None, indent: str = "") -> list[str]:
    """`⚙ name(arguments)  ✓ 0.12s`, then every line of the call's output."""
    call, result = entry.call, entry.result
    arguments = ", ".join(
        f"{k}={json.dumps(v, ensure_ascii=False, default=str)}" for k, v in call.arguments.items()
    )
    head = f"{indent}⚙ {call.name}({arguments})"
    if result is None:
        return [head + pending_text(closed)[0]]
    mark = "✓" if result.ok else "✗"
    output = result.output.rstrip()
    lines = [f"{indent}  {line}" for line in output.split("\n")] if output else []
    return [f"{head}  {mark} {result.duration:.2f}s", *lines]


def phase_lines(phase: PhaseState, closed: str | None = None) -> list[str]:
    """`▸ name — detail  ✓ 1.00s`, then the whole summary."""
    head = f"▸ {phase.name}" + (f" — {phase.detail}" if phase.detail else "")
    finished = phase.finished
    if finished is None:
        return [head + pending_text(closed, "running…")[0]]
    mark = "✓" if finished.ok else "✗"
    summary = [f"  {line}" for line in finished.summary.split("\n")] if finished.summary else []
    return [f"{head}  {mark} {finished.duration:.2f}s", *summary]


def _as_shown(entry: Any, closed: str | None = None) -> list[str]:
    """The card's own text: for kinds whose card never cuts anything."""
    return entry_content(entry, closed).plain.split("\n")


def log_lines(log: Log, closed: str | None = None) -> list[str]:
    """`   info message`, every line of the message."""
    return f"{log.level:>7} {log.message}".split("\n")


def error_lines(error: Error, closed: str | None = None) -> list[str]:
    """`✗ kind: message`, then the whole detail."""
    detail = [f"  {line}" for line in error.detail.split("\n")] if error.detail else []
    return [*f"✗ {error.kind}: {error.message}".split("\n"), *detail]


def user_lines(message: UserMessage, closed: str | None = None) -> list[str]:
    """`you`, then the whole message."""
    queued = " · sent while the agent worked" if message.queued else ""
    return [f"you{queued}", *message.text.split("\n")]


CARD_LINES: dict[type, Callable[[Any, str | None], list[str]]] = {
    ToolCallState: tool_lines,
    PhaseState: phase_lines,
    Log: log_lines,
    Error: error_lines,
    UserMessage: user_lines,
    FeedbackSubmitted: _as_shown,
    RefinementProgress: _as_shown,
    VersionDecided: _as_shown,
    TaskResult: _as_shown,
    TurnEnded: _as_shown,
    ModelChanged: _as_shown,
    SessionResumed: _as_shown,
    StateRestored: _as_shown,
    HistoryFitted: _as_shown,
}
"""The lines of each kind of entry card (those that are not steps, groups or artifacts):
whole where the card cuts a long text, else as the card reads."""


def group_lines(group: CallGroup, closed: str | None = None) -> list[str]:
    """The group's head, then every call with its whole output, and the logs, in order (a
    lone call outside any phase: as its card shows it, a tool call)."""
    if group.single and isinstance(group.entries[0], ToolCallState):
        return tool_lines(group.entries[0], closed)
    lines = expanded_content(group, closed).plain.split("\n")[:1]
    if group.phase is not None and group.phase.finished and group.phase.finished.summary:
        lines.append(f"  {group.phase.finished.summary}")
    for entry in group.entries:
        if isinstance(entry, Log):
            lines.extend(f"  {line}" for line in entry.message.split("\n"))
        else:
            lines.extend(tool_lines(entry, closed, "  "))
    return lines


def step_lines(step: StepState) -> list[str]:
    """The step's title, thought, code, tool calls, output, error, result, checks and final
    answer, every line of each."""
    lines = [step_title(step)]
    if step.thought:
        lines += step.thought.split("\n")
    if step.code is not None:
        lines += [f"│ {line}" for line in step.code.rstrip("\n").split("\n")]
    for call in step.tool_calls:
        lines += tool_lines(call)
    execution = step.execution
    logs = execution.logs if execution is not None else step.live_logs
    for log in logs:
        gutter = "err│ " if log.stream == "stderr" else "out│ "
        lines += [gutter + text for text in log.text.rstrip("\n").split("\n")]
    if execution is not None:
        if execution.logs_truncated:
            lines.append("(the sandbox truncated the output)")
        if execution.timed_out:
            lines.append(f"⏱ timed out after {execution.duration:.1f}s")
        if execution.killed_reason:
            lines.append(f"killed: {execution.killed_reason}")
        error = execution.error
        if error is not None:
            lines.append(f"✗ {error.type}: {error.message}")
            lines += [f"  {line}" for line in error.traceback.rstrip().split("\n") if line]
        if execution.result is not None:
            result = pretty(execution.result).split("\n")
            lines += [f"→ {result[0]}", *(f"  {line}" for line in result[1:])]
    lines += [check_line(verdict) for verdict in step.checks]
    if step.final_answer is not None:
        lines += ["Final answer", *step.final_answer.split("\n")]
    return lines


class EntryTexts:
    """The text of each stream entry as a search block, made again only when the entry
    changed."""

    def __init__(self) -> None:
        self._cache: dict[int, tuple[StreamEntry, tuple[object, ...], Block]] = {}

    def blocks(self, entries: list[StreamEntry], closed: str | None = None) -> list[Block]:
        """Every entry's lines, in order (`closed`: how the session ended)."""
        cache: dict[int, tuple[StreamEntry, tuple[object, ...], Block]] = {}
        blocks = []
        for entry in entries:
            key = (*text_key(entry), closed)
            cached = self._cache.get(id(entry))
            if cached is None or cached[0] is not entry or cached[1] != key:
                cached = (entry, key, Block(entry_lines(entry, closed)))
            cache[id(entry)] = cached
            blocks.append(cached[2])
        self._cache = cache
        return blocks
