"""Headless output: events rendered with rich, one block per event, and summaries."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderableType
from rich.markdown import Markdown
from rich.markup import escape
from rich.panel import Panel
from rich.segment import Segment
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from tui_agent.batch.state import BatchState
from tui_agent.events import (
    Artifact,
    AttemptStarted,
    BatchItem,
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
    HistoryFitted,
    ItemsExtracted,
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
    StateRestored,
    StateRestoreRun,
    TaskResult,
    Thought,
    ToolCall,
    ToolResult,
    TurnEnded,
    UserMessage,
    VersionDecided,
    current_kind,
)
from tui_agent.formatting import (
    artifact_text,
    attempt_line,
    check_line,
    format_cost,
    format_duration,
    format_size,
    task_result_line,
)
from tui_agent.report import search_query, tool_call_counts
from tui_agent.session import SessionState, SessionSummary
from tui_agent.terminal_text import visible, visible_event, without_unsafe
from tui_agent.turn_text import (
    fitted_line,
    model_changed_line,
    restore_run_line,
    restored_line,
    resumed_line,
    turn_ended_line,
    user_message_line,
)


class TerminalConsole(Console):
    """A rich Console that never writes a control sequence it was given as text.

    The printer shows recorded text through `visible_event`; this is the net under it:
    whatever text still holds an unsafe character (a renderable built elsewhere) loses it
    after layout, where it is zero cells wide. rich's own styles and controls pass.
    """

    def render(
        self, renderable: RenderableType, options: ConsoleOptions | None = None
    ) -> Iterable[Segment]:
        for segment in super().render(renderable, options):
            if segment.control or not segment.text:
                yield segment
            else:
                yield Segment(without_unsafe(segment.text), segment.style)


def log_text(lines: list[LogLine]) -> Text:
    """Output lines: stdout plain, stderr yellow."""
    text = Text()
    for line in lines:
        text.append(line.text + "\n", style="yellow" if line.stream == "stderr" else "")
    return text


def execution_text(event: ExecutionFinished, with_logs: bool = True) -> Text:
    """stdout plain, stderr yellow, the error red; limits and lost values called out."""
    text = log_text(event.logs) if with_logs else Text()
    if event.logs_truncated:
        text.append("[output truncated]\n", style="bold yellow")
    if event.error is not None:
        headline = f"{event.error.type}: {event.error.message}"
        trace = event.error.traceback.rstrip()
        if trace:
            text.append(trace + "\n", style="red")
        if not trace.endswith(headline):
            text.append(headline + "\n", style="bold red")
    if event.killed_reason:
        text.append(f"killed: {event.killed_reason}\n", style="bold red")
    if event.result is not None:
        text.append("→ " + _short_json(event.result) + "\n", style="cyan")
    for path in event.non_serializable:
        text.append(f"not JSON-serializable: {path}\n", style="magenta")
    for written in event.files:
        text.append(f"🗂 wrote {written.path} ({format_size(written.size)})\n", style="blue")
    text.rstrip()
    return text


PRINTED_ARTIFACT_LINES = 24
"""Lines of a recipe or code artifact printed headless (a strategy is printed whole)."""
SYNTAX = {"json": "json", "python": "python", "text": "text"}


def artifact_title(artifact: Artifact) -> Text:
    """`📄 recipe v2 · origin`, marked when it is a candidate, with its summary."""
    text = Text.assemble(("📄 ", ""), (f"{artifact.name} v{artifact.version}", "bold"))
    if artifact.origin:
        text.append(f" · {artifact.origin}")
    if artifact.candidate:
        text.append(" · candidate, awaiting a decision", style="bold yellow")
    if artifact.summary:
        text.append(f"\n   {artifact.summary}", style="dim")
    return text


def render_artifact(artifact: Artifact) -> RenderableType:
    """A strategy (Markdown) in full; a recipe or code cut after a few lines, with a hint."""
    title = artifact_title(artifact)
    if artifact.format == "markdown":
        return Group(title, Markdown(artifact.content))
    lines = artifact_text(artifact).split("\n")
    shown = "\n".join(lines[:PRINTED_ARTIFACT_LINES])
    parts: list[RenderableType] = [
        title,
        Syntax(shown, SYNTAX[artifact.format], line_numbers=True, theme="ansi_dark"),
    ]
    hidden = len(lines) - PRINTED_ARTIFACT_LINES
    if hidden > 0:
        session = visible(artifact.session_id[:8]) or "SESSION"
        parts.append(
            Text(
                f"   … {hidden} more lines (the whole {artifact.name}: "
                f"tui-agent sessions export {session} -o FILE)",
                style="dim",
            )
        )
    return Group(*parts)


def refinement_text(event: RefinementProgress) -> Text:
    """`🔁 attempt 2/5: message`, then the fixed and the remaining fields."""
    text = Text.assemble(
        ("🔁 ", ""), (f"attempt {event.attempt}/{event.max_attempts}", "bold"), f": {event.message}"
    )
    if event.fixed:
        text.append(f"\n   fixed: {', '.join(event.fixed)}", style="green")
    if event.unverified:
        text.append(f"\n   changed, not verified: {', '.join(event.unverified)}", style="yellow")
    if event.remaining:
        text.append(f"\n   remaining: {', '.join(event.remaining)}", style="yellow")
    return text


def decision_text(event: VersionDecided) -> Text:
    """`✅ accepted recipe v2` or `❎ rejected code v3` (with the reason)."""
    verb, mark, style = (
        ("accepted", "✅", "bold green") if event.accepted else ("rejected", "❎", "bold yellow")
    )
    text = Text(f"{mark} {verb} {event.name} v{event.version}", style=style)
    if event.reason:
        text.append(f": {event.reason}", style="")
    return text


def _first_lines(text: str, limit: int = 12) -> str:
    """`text` cut to its first `limit` lines, saying how many more there were."""
    lines = text.splitlines()
    if len(lines) <= limit:
        return text
    return "\n".join([*lines[:limit], f"… {len(lines) - limit} more lines"])


def _short_json(value: Any, limit: int = 400) -> str:
    dumped = json.dumps(value, ensure_ascii=False, default=str)
    return dumped if len(dumped) <= limit else dumped[: limit - 1] + "…"


class EventPrinter:
    """Prints events as they arrive (`--headless`), one emoji-marked block each."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or TerminalConsole()
        self._streamed: dict[int, int] = {}  # step -> lines printed live

    def __call__(self, event: Event, _state: SessionState | None = None) -> None:
        event = visible_event(event)
        if isinstance(event, ExecutionOutput):  # live output: printed as the run goes on
            if event.step not in self._streamed:
                self._streamed[event.step] = 0
                self.console.print(Text("⏳ Output:", style="bold blue"))
            self._streamed[event.step] += len(event.lines)
            self.console.print(log_text(event.lines), end="")
            return
        if isinstance(event, ExecutionFinished) and event.step in self._streamed:
            rest = event.logs[self._streamed.pop(event.step) :]
            self.console.print(log_text(rest), end="")
            renderable: RenderableType | None = render_execution(event, with_logs=False)
        else:
            renderable = render_event(event)
        if renderable is not None:
            self.console.print(renderable)


def render_execution(event: ExecutionFinished, with_logs: bool = True) -> RenderableType:
    title = "✅ Execution Result:" if event.success else "❌ Execution Failed:"
    return Group(
        Text(title, style="bold green" if event.success else "bold red"),
        execution_text(event, with_logs),
    )


def render_event(event: Event) -> RenderableType | None:
    """The headless rendering of one event, or None for events shown only in the TUI (its
    text made visible: no control sequence in it reaches the terminal)."""
    event = visible_event(event)
    match event:
        case SessionStarted():
            started = Text.assemble(
                ("▶ ", "bold"), (event.title, "bold"), f"  [{current_kind(event.kind)}]"
            )
            if event.parent is not None:
                fork = f"  fork of {event.parent.session_id} at step {event.parent.at_step}"
                started.append(fork, style="dim")
            return started
        case UserMessage():
            return Text(f"🧑 {user_message_line(event)}", style="bold")
        case TurnEnded():
            return Text(f"── {turn_ended_line(event)}", style="dim")
        case ModelChanged():
            return Text(f"🔀 {model_changed_line(event)}", style="cyan")
        case SessionResumed():
            return Text(f"↻ {resumed_line(event)}", style="bold")
        case BatchQueued():
            count = len(event.entries)
            return Text(f"⧉ {count} of {event.total} items queued", style="bold")
        case BatchItem() if event.state != "started":
            return batch_item_text(event)
        case StateRestoreRun():
            return Text(f"   {restore_run_line(event)}", style="dim" if event.ok else "yellow")
        case StateRestored():
            return Text(f"↻ {restored_line(event)}", style="bold")
        case HistoryFitted():
            return Text(f"✂ {fitted_line(event)}", style="yellow")
        case Thought() if event.text:
            return Text.assemble(("🤖 Thinking: ", "bold magenta"), event.text)
        case AttemptStarted():
            return Text(f"🔁 {attempt_line(event)}", style="bold")
        case CheckVerdict():
            return Text(f"   {check_line(event)}", style="green" if event.passed else "bold red")
        case TaskResult():
            mark, style = ("🧾", "bold green") if event.status == "success" else ("🧾", "bold red")
            node = f"{event.node}: " if event.node and event.node != "task" else ""
            return Text(f"{mark} {node}{task_result_line(event)}", style=style)
        case CodeProposed() if event.action == "analysis":
            return Group(
                Text("🔎 Analysis Code:", style="bold blue"),
                Syntax(event.code, event.language, line_numbers=True, theme="ansi_dark"),
            )
        case CodeProposed():
            return Group(
                Text("💻 Executing Code:", style="bold blue"),
                Syntax(event.code, event.language, line_numbers=True, theme="ansi_dark"),
            )
        case ExecutionStarted() if not event.isolated:
            return Text(f"⚠ {event.backend} backend: code runs NOT isolated", style="bold yellow")
        case ExecutionFinished() if event.error and event.error.type == "ProgramRefused":
            return Group(
                Text("🛑 Refused before running:", style="bold red"),
                Text(event.error.message, style="red"),
            )
        case ExecutionFinished():
            return render_execution(event)
        case FinalAnswer():
            return Panel(event.text, title="🎯 Final Answer", border_style="green")
        case ToolCall():
            indent = "   " if event.run_step is not None else ""  # made by a running program
            return Text(
                f"{indent}🔧 {event.name}({_short_json(event.arguments, 200)})", style="cyan"
            )
        case ToolResult():
            return Text(("  ↳ " if event.ok else "  ✗ ") + _first_lines(event.output), style="dim")
        case PhaseStarted():
            return Text(f"── {event.phase} ── {event.detail}".rstrip(" ─"), style="bold")
        case PhaseFinished():
            return Text(
                f"   {event.phase} done in {format_duration(event.duration)} {event.summary}",
                style="dim",
            )
        case ItemsExtracted():
            count = len(event.items)
            noun = "item" if count == 1 else "items"
            told = f"{count} {noun} in all" if event.replace else f"+{count} {noun}"
            return Text(f"📦 {told}", style="cyan")
        case OutputAnalyzed():
            return analysis_table(event)
        case FeedbackSubmitted():
            fields = ", ".join(f"{f.field} ({f.issue})" for f in event.feedback)
            return Text(f"📝 feedback: {fields}", style="magenta")
        case RefinementProgress():
            return refinement_text(event)
        case Artifact():
            return render_artifact(event)
        case VersionDecided():
            return decision_text(event)
        case Log():
            return Text(
                event.message, style="dim" if event.level in ("debug", "info") else "yellow"
            )
        case Error():
            return Text(f"error: {event.message}", style="bold red")
        case SessionEnded():
            reason = f" ({event.stopped_reason})" if event.stopped_reason else ""
            ended = Text(f"■ {event.status}{reason}", style="bold")
            if event.summary:
                ended.append(f"\n  {event.summary}", style="dim")
            return ended
    return None


def analysis_table(event: OutputAnalyzed) -> RenderableType:
    analysis = event.analysis
    if not analysis.is_structured:
        return Text(f"📊 output: one {analysis.type} value, not a list of records (no fields)")
    table = Table(title=f"📊 {analysis.item_count} items", title_justify="left")
    for column in ("field", "type", "coverage", "examples"):
        table.add_column(column)
    for field in analysis.fields:
        band = "red" if field.coverage < 50 else "yellow" if field.coverage < 80 else "green"
        table.add_row(
            field.name,
            field.type + (" (mixed)" if field.mixed else ""),
            Text(f"{field.coverage}% ({field.populated})", style=band),
            escape(_short_json(field.examples, 60)),
        )
    return table


SESSION_COLUMNS = ("id", "kind", "status", "started", "took", "items", "tokens", "cost", "title")


def sessions_table(summaries: list[SessionSummary]) -> Table:
    """The sessions list; ids are shown by their first 8 digits (any unique prefix works).
    Every cell is made visible (a summary's text comes from the session's events)."""
    table = Table(box=None, padding=(0, 1), pad_edge=False, header_style="bold")
    for column in SESSION_COLUMNS:
        if column == "title":
            table.add_column(column, min_width=20, overflow="fold")
        else:
            table.add_column(column, no_wrap=True)
    for s in map(visible_event, summaries):
        table.add_row(
            visible(s.session_id[:8]),
            s.kind,
            s.status,
            time.strftime("%m-%d %H:%M", time.localtime(s.started_at)),
            format_duration(s.duration),
            str(s.item_count),
            str(s.prompt_tokens + s.completion_tokens),
            format_cost(s.cost, s.cost_complete),
            escape(s.title) + _lineage(s),
        )
    return table


def _lineage(summary: SessionSummary) -> str:
    if summary.parent:
        return f"  [dim](fork of {escape(summary.parent)})[/]"
    if summary.batch:
        return f"  [dim](item of batch {escape(summary.batch[:8])})[/]"
    return ""


_ITEM_STYLES = {"finished": "green", "failed": "bold red", "retrying": "yellow"}


def batch_item_text(event: BatchItem) -> Text:
    """One line for an item of a batch that ended (or is run again)."""
    verdict = {True: ", passed", False: ", failed its check"}.get(event.passed, "")  # type: ignore[arg-type]
    status = f" ({event.status}{verdict})" if event.status else ""
    seconds = f" in {event.seconds:.1f} s" if event.seconds else ""
    line = f": {event.line}" if event.line and event.passed is not True else ""
    text = f"item {event.item + 1} {event.state}{status}{seconds}{line}"
    return Text(text, style=_ITEM_STYLES.get(event.state, "dim"))


def _batch_items_line(batch: BatchState) -> str:
    """`5 of 6 done, 1 failed`; of an eval batch, its checks too (an answer failing its check
    is no failed item: an item that could not run has errored)."""
    checked = [item.passed for item in batch.items.values() if item.passed is not None]
    if not checked:
        return f"{batch.done} of {batch.total} done, {len(batch.failures)} failed"
    return (
        f"{batch.done} of {batch.total} done, {len(batch.failures)} errored;"
        f" {sum(checked)} of {batch.total} passed their check"
    )


def batch_report(state: SessionState) -> RenderableType:
    """A batch session's report (`sessions show` for kind "batch"): its totals, then a row
    per item with its session's id; `state` folded from display copies of its events."""
    batch = state.batch
    if batch is None:
        return Text("not a batch")
    overview = Table.grid(padding=(0, 2))
    overview.add_column(style="bold")
    overview.add_column()
    rate = batch.rate
    rows = [
        ("batch", f"{visible(state.session_id)}  {state.title}"),
        ("engine", str(state.params.get("engine", "—"))),
        ("status", state.status + (f" ({state.stopped_reason})" if state.stopped_reason else "")),
        ("items", _batch_items_line(batch)),
        ("took", format_duration(state.duration) + (f", {rate:.2f} items/s" if rate else "")),
    ]
    for label, value in rows:
        overview.add_row(label, escape(value))
    table = Table(box=None, padding=(0, 1), pad_edge=False, header_style="bold")
    for column in ("#", "item", "state", "session", "status", "s", "why"):
        table.add_column(column, overflow="fold", no_wrap=column in ("#", "session"))
    for item in sorted(batch.items.values(), key=lambda i: i.item):
        status = item.status + {True: " pass", False: " FAIL"}.get(item.passed, "")  # type: ignore[arg-type]
        table.add_row(
            str(item.item + 1),
            escape(item.label),
            Text(item.state, style=_ITEM_STYLES.get(item.state, "")),
            visible(item.child[:8]) if item.stored else "",
            escape(status),
            f"{item.seconds:.1f}" if item.seconds else "",
            escape(item.line),
        )
    return Group(Text("Batch report", style="bold"), overview, table)


REPORT_ROWS = 20
"""Items listed in a session report (the rest are counted; `sessions export` has them all)."""
REPORT_HIDDEN = ("text", "content")
"""Item keys too long for the report's lines (the whole details text)."""


def session_report(state: SessionState) -> RenderableType:
    """The session report of a recipe run (`sessions show` for kind "scrape"); `state` is
    folded from display copies (`visible_event`) of the session's events."""
    overview = Table.grid(padding=(0, 2))
    overview.add_column(style="bold")
    overview.add_column()
    ended = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(state.ended_at or state.last_ts))
    rows = [
        ("session", f"{visible(state.session_id)}  {state.title}"),
        ("source", str(state.test_context.get("url", ""))),
        ("started", time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(state.started_at))),
        ("ended", f"{ended}  (took {format_duration(state.duration)})"),
        ("success", "yes" if state.status == "completed" else f"no ({state.status})"),
        ("stopped", state.stopped_reason or "—"),
        ("items", f"{len(state.items)} extracted (max {state.params.get('max_items') or '—'})"),
        ("commands", _commands_line(state)),
    ]
    query = search_query(state.recipe_in_use())
    if query:
        rows.insert(2, ("search", query))
    rows.extend(("error", error.message) for error in state.errors)
    for label, value in rows:
        overview.add_row(label, escape(value))
    parts: list[RenderableType] = [Text("Session report", style="bold"), overview]
    parts.append(_steps_table(state))
    logs = [e for e in state.timeline if isinstance(e, Log) and e.level != "debug"]
    if logs:
        parts.append(Text("Logs", style="bold"))
        parts.extend(Text(f"  {log.message}", style="yellow") for log in logs)
    if state.analysis is not None and state.items:
        parts.append(analysis_table(OutputAnalyzed(analysis=state.analysis)))
        parts.append(_item_lines(state.items))
    strategy = state.artifact("strategy")
    if strategy is not None:
        parts.append(Text(f"Strategy ({strategy.origin or 'planner'})", style="bold"))
        parts.append(Markdown(strategy.content))
    recipe = state.recipe_in_use()
    if recipe is not None:
        parts.append(_recipe_lines(recipe))
    return Group(*parts)


def _commands_line(state: SessionState) -> str:
    """Tool calls per phase: "list 620 (0 failed) · plan 31 (2 failed) · recipe 14"."""
    parts = []
    for phase, count in tool_call_counts(state).items():
        failed = f" ({count.failed} failed)" if count.failed else ""
        parts.append(f"{phase} {count.calls}{failed}")
    return " · ".join(parts) or "none"


def _steps_table(state: SessionState) -> Table:
    """Phases, then each command name: how often it ran, failed, and for how long."""
    table = Table(title="Steps", title_justify="left", box=None, header_style="bold")
    for column in ("step", "runs", "failed", "time", "last result"):
        table.add_column(column, overflow="ellipsis", no_wrap=column != "last result")
    for phase in state.phases:
        done = phase.finished
        table.add_row(
            f"phase {phase.name}",
            "1",
            "0" if done is None or done.ok else "1",
            format_duration(done.duration) if done else "…",
            escape(done.summary if done else phase.detail),
        )
    by_name: dict[str, list[Any]] = {}
    for entry in state.tool_calls.values():
        by_name.setdefault(entry.call.name, []).append(entry)
    for name, entries in by_name.items():
        results = [e.result for e in entries if e.result is not None]
        failures = [r for r in results if not r.ok]
        last = (failures or results or [None])[-1]
        table.add_row(
            name,
            str(len(entries)),
            str(len(failures)),
            f"{sum(r.duration for r in results):.2f}s",
            escape(_short(last.output if last else "")),
        )
    return table


def _item_lines(items: list[Any]) -> RenderableType:
    """The first items, one line each: their values in field order, separated by " · "."""
    columns: list[str] = []
    for item in items:
        if isinstance(item, dict):
            columns.extend(k for k in item if k not in columns and k not in REPORT_HIDDEN)
    more = f", the first {REPORT_ROWS}" if len(items) > REPORT_ROWS else ""
    lines = [Text(f"Items ({len(items)}{more}): " + " · ".join(columns), style="bold")]
    for number, item in enumerate(items[:REPORT_ROWS], 1):
        values = item if isinstance(item, dict) else {"": item}
        shown = " · ".join(_short(values.get(c), 40) or "—" for c in columns)
        lines.append(Text(f"{number:>3}  {shown}", no_wrap=True, overflow="ellipsis"))
    return Group(*lines)


def _recipe_lines(document: dict[str, Any]) -> RenderableType:
    """The bindings, one per line, and the recipe's commands as an indented tree."""
    lines = [Text("Bindings", style="bold")]
    for name, value in document.get("bindings", {}).items():
        lines.append(Text(f"  {name:<16} {_short(value, 200)}"))
    recipe = document.get("recipe", {})
    config = json.dumps(recipe.get("config", {}))
    lines.append(Text(f"Recipe {recipe.get('id')}: {recipe.get('name')}  {config}", style="bold"))

    def walk(commands: list[Any], depth: int) -> None:
        for command in commands:
            if not isinstance(command, dict):
                continue
            rest = {k: v for k, v in command.items() if k not in ("type", "body")}
            arguments = " ".join(f"{k}={_short(v, 60)}" for k, v in rest.items())
            lines.append(Text(f"{'  ' * depth}{command.get('type')} {arguments}".rstrip()))
            walk(command.get("body", []), depth + 1)

    walk(recipe.get("commands", []), 1)
    return Group(*lines)


def _short(value: Any, limit: int = 80) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"
