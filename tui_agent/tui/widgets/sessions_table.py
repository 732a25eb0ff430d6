"""The sessions list of the home screen: one row per session (see tui/session_rows.py), keyed
by session id; a batch's row carries its counts, its items sit under it, indented."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

from tui_agent.formatting import format_cost, format_duration, format_tokens
from tui_agent.session import SessionSummary
from tui_agent.terminal_text import visible
from tui_agent.tui.batch.items import clipped_label
from tui_agent.tui.session_rows import BatchCounts, Row
from tui_agent.tui.widgets.status_line import STATUS_LABELS, status_label

NARROW = 110
"""Below this width the items and tokens columns are left out and dates lose the year."""
SHORT_ID = 6
"""Characters of a parent session's id a fork's title shows."""
MIN_TITLE = 12
"""Characters left after a batch item's label that its own title needs to be shown."""


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    width: int
    wide_only: bool = False
    numeric: bool = False


COLUMNS = (
    Column("kind", "kind", 9),
    Column("title", "title", 0),
    Column("status", "status", 11),
    Column("started", "started", 16),
    Column("duration", "duration", 8, numeric=True),
    Column("items", "items", 6, wide_only=True, numeric=True),
    Column("tokens", "tokens", 7, wide_only=True, numeric=True),
    Column("cost", "cost", 9, numeric=True),
)


STATUS_COLORS = {
    "running": "cyan",
    "waiting": "blue",
    "completed": "green",
    "failed": "red",
    "cancelled": "yellow",
    "stopped": "yellow",
    "interrupted": "magenta",
    "partial": "yellow",
}


def lineage(parent: str) -> str:
    """`↳ abc123@3`: the session and step a fork came from (`parent`: "ID@STEP")."""
    session_id, _, step = parent.rpartition("@")
    return f"↳ {session_id[:SHORT_ID]}@{step}"


def counts_text(counts: BatchCounts, expanded: bool) -> Text:
    """`▸ 5/6 ✗1 ▶1 `: a batch's items done of all, failed and running (▾: listed below)."""
    text = Text(f"{'▾' if expanded else '▸'} {counts.done}/{counts.total}", style="bold")
    if counts.failed:
        text.append(f" ✗{counts.failed}", style="bold red")
    if counts.running:
        text.append(f" ▶{counts.running}", style="cyan")
    text.append(" ")
    return text


def row_cells(row: Row, narrow: bool, title_width: int) -> dict[str, Text]:
    """The cells of `row`: a batch's title starts with its counts; an item's, under its
    batch, with its place in the batch and what it is (in the `title_width` it has)."""
    cells = summary_cells(row.summary, narrow)
    title = cells["title"]
    if row.counts is not None:
        if title.plain.startswith("batch "):  # the kind column says so
            title = title[len("batch ") :]
        title = Text.assemble(counts_text(row.counts, row.expanded), title)
    elif row.under is not None:
        head = Text.styled("  └ " if row.last else "  ├ ", "dim")
        if row.number:
            head.append(f"#{row.number} ")
        if row.label:
            head.append(clipped_label(visible(row.label), title_width - len(head) - 1))
        if title_width - len(head) >= MIN_TITLE:  # the item's own title, when it has room
            title.stylize("dim")
            title = Text.assemble(head, "  " if row.label else "", title)
        else:
            title = head
    title.no_wrap, title.overflow = True, "ellipsis"
    cells["title"] = title
    return cells


def summary_cells(summary: SessionSummary, narrow: bool) -> dict[str, Text]:
    """The cells of one row (plain Text: titles are never read as markup; controls in them
    are drawn, never sent to the terminal); a fork's title says where it came from."""
    started = time.localtime(summary.started_at)
    tokens = summary.prompt_tokens + summary.completion_tokens
    cells = {
        "kind": summary.kind,
        "title": summary.title,
        "status": f"● {status_label(summary.status)}",
        "started": time.strftime("%m-%d %H:%M" if narrow else "%Y-%m-%d %H:%M", started),
        "duration": format_duration(summary.duration),
        "items": f"{summary.item_count:,}",
        "tokens": format_tokens(tokens),
        "cost": format_cost(summary.cost, summary.cost_complete),
    }
    row = {
        key: Text(visible(value), no_wrap=True, overflow="ellipsis") for key, value in cells.items()
    }
    row["status"].stylize(STATUS_COLORS.get(summary.status, ""))
    if summary.parent is not None:
        row["title"] = Text.assemble((lineage(summary.parent), "magenta"), " ", row["title"])
        row["title"].no_wrap, row["title"].overflow = True, "ellipsis"
    for column in COLUMNS:
        if column.numeric:
            row[column.key].justify = "right"
    return row


class SessionsTable(DataTable[Text]):
    """Sessions, newest first, batch items under their batch; Enter opens the highlighted one
    (posts RowSelected)."""

    BINDINGS = [
        Binding("enter", "select_cursor", "Open", id="home.open", tooltip="Open the session"),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self._rows: list[Row] = []
        self._layout_width = 0

    @property
    def selected_id(self) -> str | None:
        """Session id of the highlighted row."""
        if not self.row_count:
            return None
        key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key
        return key.value

    @property
    def selected_row(self) -> Row | None:
        """The highlighted row (None: no rows)."""
        selected = self.selected_id
        return next((row for row in self._rows if row.summary.session_id == selected), None)

    def show(self, rows: list[Row], select: str | None = None) -> None:
        """Replace the rows, highlighting `select` (else the same session as before) when it
        is still there."""
        ids = {row.summary.session_id for row in rows}
        selected = select if select in ids else self.selected_id
        self._rows = rows
        self._rebuild(selected)

    def on_resize(self) -> None:
        if self.size.width != self._layout_width:
            self._rebuild(self.selected_id)

    def _rebuild(self, selected: str | None) -> None:
        width = self.size.width or NARROW
        self._layout_width = width
        narrow = width < NARROW
        columns = [c for c in COLUMNS if not (narrow and c.wide_only)]
        if narrow:
            columns = [replace(c, width=11) if c.key == "started" else c for c in columns]
        if any(row.summary.status in STATUS_LABELS for row in self._rows):  # `● waiting for you`
            columns = [replace(c, width=17) if c.key == "status" else c for c in columns]
        fixed = sum(c.width + 2 * self.cell_padding for c in columns if c.width)
        title_width = max(12, width - fixed - 2 * self.cell_padding - 1)
        self.clear(columns=True)
        for column in columns:
            label = Text(column.label, justify="right" if column.numeric else "left")
            self.add_column(label, width=column.width or title_width, key=column.key)
        for row in self._rows:
            cells = row_cells(row, narrow, title_width)
            self.add_row(*(cells[c.key] for c in columns), key=row.summary.session_id)
        ids = [row.summary.session_id for row in self._rows]
        if selected in ids:
            self.move_cursor(row=ids.index(selected), animate=False)
