"""The items of a batch, one row each: what it is, where it got to, how its session ended,
its seconds and, when it failed, why (an eval item's check too). Rows are keyed by the item's
index; rows whose figures changed are updated in place, so a live batch keeps its cursor."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

from tui_agent.batch.state import BatchState, ItemState

STATES = {
    "queued": ("· queued", "dim"),
    "started": ("▶ running", "cyan"),
    "retrying": ("↻ retrying", "yellow"),
    "finished": ("✓ finished", "green"),
    "failed": ("✗ failed", "bold red"),
    "cancelled": ("■ cancelled", "yellow"),
}
"""How each item state reads in its cell."""
RESULTS: dict[bool | None, tuple[str, str]] = {True: ("pass", "green"), False: ("FAIL", "bold red")}
"""How an eval item's check reads (None: not checked, or not yet)."""


NARROW = 100
"""Below this width the status column is left out (the line under the table says it)."""
NARROW_LABEL = 16
"""Below this width a clipped label keeps its end only."""


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    width: int
    """0: half of what the fixed columns leave."""
    numeric: bool = False


COLUMNS = (
    Column("item", "#", 4, numeric=True),
    Column("label", "item", 0),
    Column("state", "state", 11),
    Column("result", "check", 5),
    Column("status", "status", 9),
    Column("seconds", "s", 6, numeric=True),
    Column("why", "why", 0),
)
"""Every column; `check` only on an eval batch (whether an item passed its check)."""


def clipped_label(label: str, width: int) -> str:
    """`label` in `width` characters: a URL without its scheme, then its start and its end,
    in a narrow cell its end only (what tells items apart: `127.0.…65/panel?page=2`,
    `…/panel?page=2`)."""
    if len(label) <= width:
        return label
    label = label.split("://", 1)[-1]
    if len(label) <= width or width < 2:
        return label
    head = width // 3 if width >= NARROW_LABEL else 0
    return f"{label[:head]}…{label[len(label) - (width - head - 1) :]}"


def failing(item: ItemState) -> bool:
    """Whether the item is one to look at: it failed, or its answer failed its check."""
    return item.state == "failed" or item.passed is False


def item_cells(item: ItemState, label_width: int) -> dict[str, Text]:
    """The cells of one item's row (plain Text: labels and lines are never markup), its label
    clipped to `label_width`."""
    state, style = STATES.get(item.state, (item.state, ""))
    result = RESULTS.get(item.passed, ("", ""))
    cells = {
        "item": Text(str(item.item + 1), justify="right"),
        "label": Text(clipped_label(item.label, label_width)),
        "state": Text(state, style=style),
        "status": Text(item.status),
        "result": Text(result[0], style=result[1]),
        "seconds": Text(f"{item.seconds:.1f}" if item.seconds else "", justify="right"),
        "why": Text(item.line, style="red" if failing(item) else "dim"),
    }
    for cell in cells.values():
        cell.no_wrap, cell.overflow = True, "ellipsis"
    return cells


class BatchItemsTable(DataTable[Text]):
    """A batch's items in their order (or its failures only); Enter posts RowSelected."""

    BINDINGS = [
        Binding(
            "enter",
            "select_cursor",
            "Open item",
            id="batch.open",
            tooltip="Open the item's session",
        ),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self._items: list[ItemState] = []
        self._eval = False
        self._shown: dict[int, dict[str, Text]] = {}
        self._layout: tuple[int, bool] = (0, False)
        self._label_width = 0

    @property
    def selected(self) -> int | None:
        """The index of the highlighted item (None: no rows)."""
        if not self.row_count:
            return None
        key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        return int(key) if key is not None else None

    def show(
        self, batch: BatchState, *, failures_only: bool = False, checked: bool = False
    ) -> None:
        """Show `batch`'s items (only the failing ones when `failures_only`); `checked`: an
        eval batch, whose items pass or fail a check."""
        items = sorted(batch.items.values(), key=lambda item: item.item)
        self._items = [item for item in items if failing(item)] if failures_only else items
        self._eval = checked
        if [item.item for item in self._items] != list(self._shown) or self._layout != (
            self.size.width,
            checked,
        ):
            self._rebuild(self.selected)
            return
        columns = [column.key for column in self._columns()]
        for item in self._items:
            cells = item_cells(item, self._label_width)
            shown = self._shown[item.item]
            for key in columns:
                if cells[key] != shown[key]:
                    self.update_cell(str(item.item), key, cells[key])
            self._shown[item.item] = cells

    def on_resize(self) -> None:
        if self._layout[0] != self.size.width:
            self._rebuild(self.selected)

    def _columns(self) -> list[Column]:
        left_out = {"result"} if not self._eval else set()
        if (self.size.width or NARROW) < NARROW:
            left_out.add("status")
        return [column for column in COLUMNS if column.key not in left_out]

    def _rebuild(self, selected: int | None) -> None:
        self._layout = (self.size.width, self._eval)
        width = self.size.width or NARROW
        columns = self._columns()
        fixed = sum(c.width for c in columns) + 2 * self.cell_padding * len(columns) + 1
        half = self._label_width = max(10, (width - fixed) // 2)
        self.clear(columns=True)
        for column in columns:
            label = Text(column.label, justify="right" if column.numeric else "left")
            size = column.width or half
            self.add_column(label, width=size, key=column.key)
        self._shown = {}
        for item in self._items:
            cells = item_cells(item, half)
            self._shown[item.item] = cells
            self.add_row(*(cells[c.key] for c in columns), key=str(item.item))
        indexes = list(self._shown)
        if selected in indexes:
            self.move_cursor(row=indexes.index(selected), animate=False)
