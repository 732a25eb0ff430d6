"""The card of one agent step: thought, code, the tool calls its program made, execution
output (live while it runs), the files the run wrote (images previewed), answer.

`show(step)` is idempotent and cheap when nothing changed, so the stream pane can call it for
every visible card once per frame. A thought that grows (streamed tokens) is shown as it
stands at each frame (the frames already batch the tokens).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, TypeVar

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.highlight import highlight
from textual.widget import Widget
from textual.widgets import Static

from tui_agent.events import ExecutionFinished, LogLine
from tui_agent.formatting import TEXT_CHARS, attempt_line, check_line, clipped
from tui_agent.session import StepState
from tui_agent.tui.prose import ProseView, prose_view, show_prose
from tui_agent.tui.widgets.files_view import FilesView
from tui_agent.tui.widgets.mounting import mount_into

MAX_LOG_LINES = 40
"""Output lines shown per step (the last ones); the rest are counted."""
MAX_RESULT_LINES = 16
MAX_TRACEBACK_LINES = 12
MAX_PROGRAM_CALLS = 20
"""Tool calls shown per step (the first ones); the rest are counted."""
UNFOLDED_LINES = 1_000
"""Lines of each part (output, traceback, result, tool calls) an unfolded card shows; the
whole text is one key away (`v`, the output screen)."""
UNFOLD_HINT = " · enter unfolds"
WHOLE_HINT = " · v shows them all"
CALL_WIDTH = 100


T = TypeVar("T")


def _tail(lines: list[T], limit: int) -> tuple[list[T], int]:
    """The last `limit` lines and how many were left out."""
    hidden = max(0, len(lines) - limit)
    return lines[hidden:], hidden


def _hint(expanded: bool) -> str:
    """How to see what a part leaves out: unfold the card, or (unfolded) the whole text."""
    return WHOLE_HINT if expanded else UNFOLD_HINT


def output_content(execution: ExecutionFinished, expanded: bool = False) -> Content:
    """stdout and stderr lines in order, each with a gutter naming its stream."""
    return log_content(execution.logs, execution.logs_truncated, expanded)


def log_content(logs: list[LogLine], truncated: bool = False, expanded: bool = False) -> Content:
    """The last MAX_LOG_LINES of `logs` (UNFOLDED_LINES once `expanded`), each with a gutter
    naming its stream."""
    lines, hidden = _tail(list(logs), UNFOLDED_LINES if expanded else MAX_LOG_LINES)
    parts: list[str | tuple[str, str]] = []
    if hidden:
        parts.append((f"… {hidden} earlier output lines{_hint(expanded)}\n", "dim"))
    for line in lines:
        text = clipped(line.text.rstrip("\n")) + "\n"
        if line.stream == "stderr":
            parts += [("err│ ", "$text-warning 60%"), (text, "$text-warning")]
        else:
            parts += [("out│ ", "dim"), text]
    if truncated:
        parts.append(("(the sandbox truncated the output)\n", "dim italic"))
    return Content.assemble(*parts).rstrip() if parts else Content("")


def error_content(execution: ExecutionFinished, expanded: bool = False) -> Content:
    """The error, time-out or kill of a failed execution, with the traceback's tail."""
    parts: list[str | tuple[str, str]] = []
    if execution.timed_out:
        parts.append((f"⏱ timed out after {execution.duration:.1f}s\n", "$text-error bold"))
    if execution.killed_reason:
        parts.append((f"killed: {execution.killed_reason}\n", "$text-error bold"))
    error = execution.error
    if error is not None:
        parts.append((f"✗ {clipped(error.type)}: {clipped(error.message)}\n", "$text-error bold"))
        limit = UNFOLDED_LINES if expanded else MAX_TRACEBACK_LINES
        trace, hidden = _tail(error.traceback.rstrip().splitlines(), limit)
        if hidden:
            parts.append((f"  … {hidden} earlier traceback lines{_hint(expanded)}\n", "dim"))
        parts += [(f"  {clipped(line)}\n", "$text-error 70%") for line in trace]
    return Content.assemble(*parts).rstrip() if parts else Content("")


def result_content(execution: ExecutionFinished, expanded: bool = False) -> Content:
    """The returned value as pretty JSON (cut after a few lines) and unserializable keys."""
    parts: list[str | tuple[str, str]] = []
    if execution.result is not None:
        limit = UNFOLDED_LINES if expanded else MAX_RESULT_LINES
        lines, hidden = _head(pretty(execution.result).splitlines(), limit)
        parts += [("→ ", "$text-success bold"), "\n  ".join(map(clipped, lines)) + "\n"]
        if hidden:
            parts.append((f"  … {hidden} more lines{_hint(expanded)}\n", "dim"))
    if execution.non_serializable:
        names = ", ".join(execution.non_serializable)
        parts.append((f"not serializable, left out: {names}\n", "dim italic"))
    return Content.assemble(*parts).rstrip() if parts else Content("")


def _head(lines: list[str], limit: int) -> tuple[list[str], int]:
    return lines[:limit], max(0, len(lines) - limit)


def pretty(value: Any) -> str:
    """A returned value as the cards show it: a string as it is, anything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def warm_highlighting(language: str = "python") -> None:
    """Build the highlighter's lexer for `language` ahead of the first card with code (its
    rules compile on first use, some tens of ms); run in a thread while the app starts."""
    highlight("", language=language)


def numbered_code(code: str, language: str) -> Content:
    """`code` highlighted in the app's theme, with a line-number gutter."""
    lines = highlight(code.rstrip("\n"), language=language).split("\n", allow_blank=True)
    width = len(str(len(lines)))
    parts: list[Content | tuple[str, str]] = []
    for number, line in enumerate(lines, start=1):
        parts += [(f"{number:>{width}} │ ", "$text-muted"), line, ("\n", "")]
    return Content.assemble(*parts).rstrip("\n")


def _one_line(text: str, width: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def program_calls_content(step: StepState, expanded: bool = False) -> Content:
    """The tool calls the step's program made, one line each: name(arguments), how it went
    and the first of its output."""
    parts: list[str | tuple[str, str]] = []
    limit = UNFOLDED_LINES if expanded else MAX_PROGRAM_CALLS
    for entry in step.tool_calls[:limit]:
        call, result = entry.call, entry.result
        arguments = ", ".join(
            f"{k}={json.dumps(v, ensure_ascii=False, default=str)}"
            for k, v in call.arguments.items()
        )
        parts += [("⚙ ", "$text-accent"), (call.name, "bold"), f"({_one_line(arguments, 60)})"]
        if result is None:
            parts.append(("  waiting…\n", "dim italic"))
            continue
        mark, style = ("✓", "$text-success") if result.ok else ("✗", "$text-error")
        parts += ["  ", (f"{mark} {result.duration:.2f}s", style)]
        parts += ["  ", (f"{_one_line(result.output, CALL_WIDTH)}\n", "" if result.ok else style)]
    hidden = len(step.tool_calls) - limit
    if hidden > 0:
        parts.append((f"… {hidden} more tool calls{_hint(expanded)}\n", "dim"))
    return Content.assemble(*parts).rstrip() if parts else Content("")


def refused(execution: ExecutionFinished | None) -> bool:
    """Whether the program was refused by its check and never ran."""
    return bool(execution and execution.error and execution.error.type == "ProgramRefused")


def step_title(step: StepState) -> str:
    """`Step 2`, with the model calls when the reply was re-asked (`Step 2 · 2 model calls`);
    a task's step names its attempt and stage (`Step 3 · attempt 2/3 · analysis`)."""
    parts = [f"Step {step.index}"]
    if step.attempt is not None:
        parts.append(attempt_line(step.attempt))
        if step.action in ("analysis", "task"):
            parts.append(step.action)
    if step.model_calls > 1:
        parts.append(f"{step.model_calls} model calls")
    if step.tool_calls:
        count = len(step.tool_calls)
        parts.append(f"{count} tool call{'s' if count != 1 else ''}")
    return " · ".join(parts)


def checks_content(step: StepState) -> Content:
    """The checks of a task's step, one line each: ✓ passed, ✗ refused with the reason."""
    parts: list[tuple[str, str]] = []
    for verdict in step.checks:
        style = "$text-success" if verdict.passed else "$text-error bold"
        parts.append((check_line(verdict) + "\n", style))
    return Content.assemble(*parts).rstrip() if parts else Content("")


def step_subtitle(step: StepState, closed: str | None = None) -> str:
    """Where the step stands: running, or how its execution ended and how long it took;
    `closed` is how the session ended (a step still running then says so)."""
    execution = step.execution
    if step.running and closed is not None:
        return f"■ {closed} while running"
    if step.running:
        return f"running on {step.backend}…" if step.backend else "running…"
    if refused(execution):
        return "✗ refused before running"
    if execution is not None:
        mark = "✓" if execution.success else "✗"
        return f"{mark} {execution.duration:.2f}s on {step.backend or 'sandbox'}"
    if step.final_answer is not None:
        return "answered"
    if any(not verdict.passed for verdict in step.checks):
        return "✗ refused before running"
    if step.code is not None:
        return "code proposed"
    if closed is not None:
        return "" if step.thought_complete else f"■ {closed}"
    return "thinking…" if not step.thought_complete else ""


def step_foldable(step: StepState) -> bool:
    """Whether the folded card leaves part of the step's output, traceback, result or tool
    calls out."""
    execution = step.execution
    logs = execution.logs if execution is not None else step.live_logs
    if len(logs) > MAX_LOG_LINES or len(step.tool_calls) > MAX_PROGRAM_CALLS:
        return True
    if execution is None:
        return False
    error = execution.error
    if error is not None and error.traceback.rstrip().count("\n") >= MAX_TRACEBACK_LINES:
        return True
    result = execution.result
    return result is not None and pretty(result).count("\n") >= MAX_RESULT_LINES


def execution_content(step: StepState, expanded: bool = False) -> Content:
    """A not-isolated warning, then the execution's output, error and result, spaced apart
    (`expanded`: up to UNFOLDED_LINES of each)."""
    parts: list[Content] = []
    if step.backend is not None and not step.isolated:
        warning = f"⚠ ran on '{step.backend}', which is not isolated from this machine"
        parts.append(Content.styled(warning, "$text-warning bold"))
    if step.execution is None and step.live_logs:
        parts.append(log_content(step.live_logs, expanded=expanded))
    if step.execution is not None:
        parts += [
            render(step.execution, expanded)
            for render in (output_content, error_content, result_content)
        ]
    return Content("\n\n").join(part for part in parts if part)


class StepCard(Vertical):
    """One step of the agent. The final-answer box is mounted only once there is one.

    Folded, its output, traceback, result and tool calls are cut to their last (or first)
    lines; unfolded (Enter on the stream pane) it shows up to UNFOLDED_LINES of
    each. `closed` is how the session ended (None while it runs)."""

    def __init__(self, step: StepState) -> None:
        super().__init__(classes="card step-card")
        self.closed: str | None = None
        self.border_title = step_title(step)
        self._step = step
        self._thought = step.thought
        self._code: tuple[str, str] | None = None
        self._execution_key: tuple[object, ...] | None = None
        self._expanded = False
        self._foldable = False
        self._checks: tuple[object, ...] = ()
        self._calls: tuple[object, ...] = ()
        self._final: str | None = None
        self._final_box: Vertical | None = None
        self._final_view: ProseView | None = None
        self._composed = False
        self._showing = asyncio.Lock()
        """One `show` at a time: a part mounted or replaced by one is there for the next."""
        self._thought_view = prose_view(clipped(step.thought, TEXT_CHARS), "thought")
        self._code_view = Static(classes="code")
        self._execution_view = Static(classes="execution")
        self._checks_view = Static(classes="checks")
        self._files_view = FilesView()
        self._calls_view = Static(classes="program-calls")

    @property
    def step(self) -> StepState:
        """The step shown."""
        return self._step

    def compose(self) -> ComposeResult:
        yield self._thought_view
        yield self._code_view
        yield self._execution_view

    def _parts(self) -> list[Widget]:
        """The card's parts in the order shown (those not mounted included)."""
        parts: list[Widget] = [self._thought_view, self._code_view, self._calls_view]
        parts += [self._execution_view, self._files_view, self._checks_view]
        return parts + ([self._final_box] if self._final_box is not None else [])

    async def _mounted(self, part: Widget) -> bool:
        """Mount `part` in its place among the parts when it is first needed (most steps
        make no tool calls, write no files and have no checks: their parts are never
        mounted); whether it is mounted."""
        if part.parent is self:
            return True
        parts = self._parts()
        later = [p for p in parts[parts.index(part) + 1 :] if p.parent is self]
        return await mount_into(self, [part], before=later[0] if later else None)

    async def on_mount(self) -> None:
        self._composed = True
        await self.show(self._step)

    async def show(self, step: StepState) -> None:
        """Bring the card up to date with `step` (only the parts that changed)."""
        self._step = step
        if not self._composed:
            return
        async with self._showing:
            await self._show_parts(self._step)  # the newest step, once the last show is done

    async def _show_parts(self, step: StepState) -> None:
        await self._show_thought(step)
        self._show_code(step)
        await self._show_calls(step)
        self._show_execution(step)
        await self._show_files(step)
        await self._show_checks(step)
        await self._show_final(step)
        if self._final_box is not None:  # with nothing above it, no space above it
            self._final_box.set_class(not step.thought and step.code is None, "-alone")
        self.set_class(step.running and self.closed is None, "-running")
        self.border_title = step_title(step)
        self.border_subtitle = step_subtitle(step, self.closed)

    @property
    def expanded(self) -> bool:
        return self._expanded

    @property
    def foldable(self) -> bool:
        """Whether unfolding shows more than the folded card."""
        return self._foldable

    async def set_expanded(self, expanded: bool) -> None:
        """Unfold (or fold) the step's output, traceback, result and tool calls."""
        self._expanded = expanded
        self.set_class(expanded, "-expanded")
        if self._composed:
            async with self._showing:
                await self._show_calls(self._step)
                self._show_execution(self._step)

    @property
    def files(self) -> FilesView:
        """The files the step's run wrote."""
        return self._files_view

    async def _show_thought(self, step: StepState) -> None:
        self._thought_view.display = bool(step.thought)
        if step.thought != self._thought:
            self._thought = step.thought
            text = clipped(step.thought, TEXT_CHARS)
            self._thought_view = await show_prose(self._thought_view, text)

    def _show_code(self, step: StepState) -> None:
        code = self._code_view
        code.display = step.code is not None
        key = (step.code or "", step.language)
        if step.code is None or key == self._code:
            return
        self._code = key
        code.update(numbered_code(clipped(step.code, TEXT_CHARS), step.language))

    def _show_execution(self, step: StepState) -> None:
        key = (
            step.execution,
            step.backend,
            step.isolated,
            len(step.live_logs),
            len(step.tool_calls),
            self._expanded,
        )
        if key == self._execution_key:
            return
        if key[:5] != (self._execution_key or ())[:5]:
            self._foldable = step_foldable(step)
        self._execution_key = key
        content = execution_content(step, self._expanded)
        widget = self._execution_view
        widget.display = bool(content)
        widget.update(content)

    async def _show_calls(self, step: StepState) -> None:
        calls = tuple((entry.call.call_id, entry.result) for entry in step.tool_calls)
        widget = self._calls_view
        widget.display = bool(calls)
        key = (calls, self._expanded)
        if key == self._calls or not (calls or widget.parent is self):
            return
        if await self._mounted(widget):
            self._calls = key
            widget.update(program_calls_content(step, self._expanded))

    async def _show_files(self, step: StepState) -> None:
        view = self._files_view
        wrote = step.execution is not None and bool(step.execution.files)
        if (wrote or view.parent is self) and await self._mounted(view):
            await view.show(step.execution)

    async def _show_checks(self, step: StepState) -> None:
        key = tuple(step.checks)
        widget = self._checks_view
        widget.display = bool(key)
        if key == self._checks or not (key or widget.parent is self):
            return
        if await self._mounted(widget):
            self._checks = key
            widget.update(checks_content(step))

    async def _show_final(self, step: StepState) -> None:
        answer = step.final_answer
        if answer == self._final:
            return
        self._final = answer
        if answer is None:
            if self._final_box is not None:
                await self._final_box.remove()
                self._final_box = self._final_view = None
        elif self._final_view is None:
            self._final_view = prose_view(clipped(answer, TEXT_CHARS), "final-answer")
            self._final_box = Vertical(self._final_view, classes="final")
            self._final_box.border_title = "Final answer"
            await mount_into(self, [self._final_box])
        else:
            self._final_view = await show_prose(self._final_view, clipped(answer, TEXT_CHARS))
