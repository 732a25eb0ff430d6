"""The card of a group of tool calls: a phase with its probes, or one list item's commands.

Folded, a phase shows its outcome, how many calls it made and the latest of them; a list
item shows one line (its commands, how they went, what was saved). Enter on the stream pane
(or a click) unfolds every call with the first lines of its output, and the logs between.
"""

from __future__ import annotations

from textual import events
from textual.content import Content
from textual.widgets import Static

from tui_agent.events import Log
from tui_agent.session import ToolCallState
from tui_agent.tui.stream_groups import CallGroup
from tui_agent.tui.widgets.entry_cards import (
    LOG_STYLES,
    pending_text,
    phase_content,
    tool_content,
)

PHASE_NOUNS = {"plan": "probe"}
"""What a phase's calls are called on its card (default: command)."""


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'s' if count != 1 else ''}"


def _first_line(text: str) -> str:
    return text.strip().split("\n", 1)[0]


def call_line(entry: ToolCallState, closed: str | None = None) -> Content:
    """`⚙ NAME ✓ 0.12s  first line of the output` (or `waiting…`, or how the session ended)."""
    call, result = entry.call, entry.result
    parts: list[str | tuple[str, str]] = [("⚙ ", "$text-accent"), (call.name, "bold")]
    if result is None:
        parts.append(pending_text(closed))
    else:
        mark, style = ("✓", "$text-success") if result.ok else ("✗", "$text-error")
        parts += [" ", (f"{mark} {result.duration:.2f}s", style)]
        line = _first_line(result.output)
        if line:
            parts.append((f"  {line}", "" if result.ok else "$text-error"))
    return Content.assemble(*parts)


def outcome(group: CallGroup, closed: str | None = None) -> Content:
    """`✓ 3 commands · 0.42s`, `✗ 1 of 3 failed`, or `running…` (`■ cancelled` once the
    session ended: `closed`)."""
    calls = group.calls
    noun = PHASE_NOUNS.get(group.phase_name, "command")
    if not calls:
        return Content("")
    if group.waiting:
        text, style = pending_text(closed, "running…")
        return Content.styled(f"{_plural(len(calls), noun)} ·{text[1:]}", style)
    if group.failed:
        failed = f"✗ {group.failed} of {_plural(len(calls), noun)} failed"
        return Content.styled(failed, "$text-error")
    return Content.styled(f"✓ {_plural(len(calls), noun)} · {group.duration:.2f}s", "$text-success")


def item_summary(group: CallGroup) -> str:
    """What the item's commands came to: the SAVE's output, else the latest output."""
    results = [c.result for c in group.calls if c.result is not None]
    saved = [r for r in results if r.ok and r.name == "SAVE"]
    failed = [r for r in results if not r.ok]
    chosen = failed or saved or results
    return _first_line(chosen[-1].output) if chosen else ""


def folded_content(group: CallGroup, closed: str | None = None) -> Content:
    """The folded card: one line for an item; for a phase its header, count and latest call
    (for a phase going on after other cards, also the call it went on with: a page turn)."""
    if group.item:
        parts: list[str | Content | tuple[str, str]] = [
            ("▪ ", "$text-accent"),
            (f"item {group.item}", "bold"),
            "  ",
            outcome(group, closed),
        ]
        summary = item_summary(group)
        if summary:
            parts.append((f"  {summary}", "$text-muted"))
        return Content.assemble(*parts)
    calls = group.calls
    shown = calls[-1:]
    if group.phase is None and len(calls) > 1:
        shown = [calls[0], calls[-1]]
    last_log = next((e for e in reversed(group.entries) if isinstance(e, Log)), None)
    lines = [_head(group, closed)]
    lines.extend(Content("  ") + call_line(call, closed) for call in shown)
    if last_log is not None:
        lines.append(Content.styled(f"  {_first_line(last_log.message)}", "$text-muted"))
    return Content("\n").join(lines)


def _head(group: CallGroup, closed: str | None = None) -> Content:
    """The phase line (or `▸ phase (cont.)`), with how many calls it made and how many
    failed."""
    if group.phase is not None:
        head = phase_content(group.phase, closed).split("\n")[0]
    else:
        head = Content.assemble(("▸ ", "$text-accent"), (group.phase_name, "bold"), " (cont.)")
    calls = group.calls
    if not calls:
        return head
    noun = PHASE_NOUNS.get(group.phase_name, "command")
    parts: list[str | Content | tuple[str, str]] = [head, f" · {_plural(len(calls), noun)}"]
    if group.failed:
        parts.append((f", {group.failed} failed", "$text-error"))
    phase_says_it = group.phase is not None and group.phase.finished is None
    if group.waiting and not (closed and phase_says_it):  # say how it ended once
        text, style = pending_text(closed, "running…")
        parts.append((f" ·{text[1:]}", style))
    return Content.assemble(*parts)


def expanded_content(group: CallGroup, closed: str | None = None) -> Content:
    """Every call with the first lines of its output, and the logs, in order."""
    if group.item:
        head = Content.assemble(
            ("▪ ", "$text-accent"), (f"item {group.item}", "bold"), "  ", outcome(group, closed)
        )
    else:
        head = _head(group, closed)
    lines = [head]
    if group.phase is not None and group.phase.finished and group.phase.finished.summary:
        lines.append(Content.styled(f"  {group.phase.finished.summary}", "dim"))
    for entry in group.entries:
        if isinstance(entry, Log):
            lines.append(Content.styled(f"  {entry.message}", LOG_STYLES[entry.level] or "dim"))
        else:
            body = tool_content(entry, closed)
            lines.append(Content("  ") + body.split("\n")[0])
            lines.extend(Content("  ") + line for line in body.split("\n")[1:])
    return Content("\n").join(lines)


class GroupCard(Static):
    """A call group, folded until Enter (on the stream pane) or a click unfolds it.

    `closed` is how the session ended (None while it runs)."""

    def __init__(self, group: CallGroup, closed: str | None = None) -> None:
        kind = "item" if group.item else "phase"
        super().__init__(classes=f"card group-card {kind}-card")
        self.closed = closed
        self._group = group
        self._expanded = False
        self._key: tuple[object, ...] | None = None
        self._render_group()  # before the first paint: mounting costs one render, not two

    @property
    def expanded(self) -> bool:
        return self._expanded

    @property
    def foldable(self) -> bool:
        """Whether unfolding shows more than the folded card."""
        return not self._group.single and bool(self._group.entries)

    async def show(self, group: CallGroup) -> None:
        self._group = group
        self._render_group()

    async def set_expanded(self, expanded: bool) -> None:
        self._expanded = expanded
        self._render_group()

    async def on_click(self, event: events.Click) -> None:
        event.stop()
        await self.set_expanded(not self._expanded)

    def _render_group(self) -> None:
        group = self._group
        key = (group.key(), self._expanded, self.closed)
        if key == self._key:
            return
        self._key = key
        self.set_class(self._expanded, "-expanded")
        self.set_class(group.failed > 0, "-failed")
        if group.single:
            entry = group.entries[0]
            assert isinstance(entry, ToolCallState)
            self.update(tool_content(entry, self.closed))
        elif self._expanded:
            self.update(expanded_content(group, self.closed))
        else:  # a folded item is one line (no wrap): its height never changes
            self.update(folded_content(group, self.closed), layout=not group.item)
