"""The items table: extracted items, one column per detected field.

Each header shows the field's name, type and a coverage badge coloured by band, with a "Fix"
marker under 50 % (a click on it opens the feedback form). Cells show at most 100 characters;
Enter shows the whole value and `f` asks for feedback on the field under the cursor. `y` copies
the whole value under the cursor, `Y` its item as JSON (export/clipboard.py says what in a toast).
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from rich.style import Style
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widget import Widget

from tui_agent.analysis import flatten_item, is_empty
from tui_agent.analysis.shapes import FieldDefinition, OutputAnalysis
from tui_agent.tui.export.clipboard import copy_text
from tui_agent.tui.screens.value import ValueModal, full_text
from tui_agent.tui.widgets.items_grid import Cell, GridColumn, ItemsGrid

CELL_LIMIT = 100
"""Characters of a value a cell shows; Enter shows the rest."""
VALUE_COLUMN = "value"
"""The one column of output that is not a list of records."""
_CONTROL_CHARACTERS = dict.fromkeys([*range(32), *range(127, 160), 0x2028, 0x2029], " ")
"""Characters that would break a one-line cell (line breaks, tabs, escapes), shown as spaces."""


def coverage_band(coverage: int) -> str:
    """ "low" under 50 %, "mid" under 80 %, else "high"."""
    return "low" if coverage < 50 else "mid" if coverage < 80 else "high"


def cell_text(value: Any) -> Cell:
    """How a value reads in one table cell: one line of at most `CELL_LIMIT` characters.

    Empty values (`is_empty`) give None. Text is shown as is, with line breaks and other
    control characters as spaces; anything else as JSON. A cut value ends with "…".
    """
    kind = type(value)
    if kind is str:
        if not value or value.isspace():
            return None
        text = value
    elif value is None:
        return None
    elif kind is bool:
        return "true" if value else "false"
    elif kind is int or (kind is float and value == value):
        text = repr(value)
    elif is_empty(value):
        return None
    else:
        text = json.dumps(value, ensure_ascii=False, default=str)
    if len(text) > CELL_LIMIT:
        text = text[:CELL_LIMIT] + "…"
    return text if text.isprintable() else text.translate(_CONTROL_CHARACTERS)


class ItemsTable(Widget):
    """Extracted items with per-field type and coverage in the column headers."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "items-table--name",
        "items-table--type",
        "items-table--coverage-low",
        "items-table--coverage-mid",
        "items-table--coverage-high",
        "items-table--fix",
    }

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "f",
            "request_feedback",
            "Fix field",
            id="items-table.fix-field",
            tooltip="Give feedback on the field under the cursor",
        ),
        Binding(
            "y",
            "copy_cell",
            "Copy",
            id="items-table.copy-cell",
            tooltip="Copy the whole value under the cursor to the clipboard",
            show=False,
        ),
        Binding(
            "Y",
            "copy_row",
            "Copy item",
            id="items-table.copy-row",
            tooltip="Copy the item under the cursor, as JSON, to the clipboard",
            show=False,
        ),
    ]

    class FeedbackRequested(Message):
        """The user asked to give feedback on `field` (a dotted field name)."""

        def __init__(self, field: str) -> None:
            super().__init__()
            self.field = field

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._items: list[Any] = []
        self._analysis: OutputAnalysis | None = None
        self._keys: list[str] = []
        self._whole_items = False
        self._seen_keys: dict[str, None] | None = {}
        self._seen_upto = 0

    def compose(self) -> ComposeResult:
        yield ItemsGrid(id="items-grid")

    @property
    def grid(self) -> ItemsGrid:
        """The grid showing the rows."""
        return self.query_one(ItemsGrid)

    @property
    def focused_field(self) -> str | None:
        """The field of the column under the cursor, if there are columns."""
        if not self._keys:
            return None
        return self._keys[self.grid.cursor_coordinate.column]

    def update_items(self, items: list[Any], analysis: OutputAnalysis | None) -> None:
        """Show `items` (the full current list) as described by `analysis`.

        When the list only grew, just the new rows are formatted and added; when its
        earlier items or the columns changed, the table is rebuilt.
        """
        had_columns, had_items = bool(self._keys), bool(self._items)
        start = len(self._items) if items[: len(self._items)] == self._items else 0
        if start == 0:
            self._seen_keys, self._seen_upto = {}, 0
        keys, whole_items = self._columns_for(items, analysis)
        self._items = list(items)
        self._analysis = analysis
        if start == 0 or (keys, whole_items) != (self._keys, self._whole_items):
            self._keys, self._whole_items = keys, whole_items
            self.grid.reset(self._grid_columns(), [self._row(item) for item in items])
        else:
            self.grid.relabel(self._grid_columns())
            self.grid.append_rows([self._row(item) for item in items[start:]])
        self.border_title = f"Items · {len(items):,}"
        if (bool(self._keys), bool(items)) != (had_columns, had_items):  # `f`, `y` come or go
            self.refresh_bindings()

    def _columns_for(
        self, items: list[Any], analysis: OutputAnalysis | None
    ) -> tuple[list[str], bool]:
        """The column keys, and whether they are the one column of whole items.

        Without analysed fields, records show the dotted names seen so far, in order.
        """
        if analysis is not None and analysis.fields:
            return [f.name for f in analysis.fields], False
        self._record_keys(items)
        if self._seen_keys:
            return list(self._seen_keys), False
        return ([VALUE_COLUMN] if items else []), True

    def _record_keys(self, items: list[Any]) -> None:
        """Add the field names of the items not yet looked at (None once one is no record)."""
        if self._seen_keys is not None:
            for item in items[self._seen_upto :]:
                if not isinstance(item, dict):
                    self._seen_keys = None
                    break
                self._seen_keys.update(dict.fromkeys(flatten_item(item)))
        self._seen_upto = len(items)

    def _row(self, item: Any) -> list[Cell]:
        if self._whole_items:
            return [cell_text(item)]
        if not isinstance(item, dict):
            return [None] * len(self._keys)
        flat = flatten_item(item)
        return [cell_text(flat.get(key)) for key in self._keys]

    def value_at(self, row: int, column: int) -> Any:
        """The whole value of a cell, as extracted (not cut)."""
        item = self._items[row]
        if self._whole_items:
            return item
        return flatten_item(item).get(self._keys[column]) if isinstance(item, dict) else None

    def _grid_columns(self) -> list[GridColumn]:
        fields = {f.name: f for f in self._analysis.fields} if self._analysis else {}
        return [self._grid_column(key, fields.get(key)) for key in self._keys]

    def _grid_column(self, key: str, field: FieldDefinition | None) -> GridColumn:
        def style(component: str) -> Style:
            return self.get_component_rich_style(component, partial=True)

        title = Text(key, style=style("items-table--name"), no_wrap=True)
        if field is None:
            return GridColumn(key, title, Text())
        band = coverage_band(field.coverage)
        subtitle = Text.assemble(
            (field.type, style("items-table--type")),
            " ",
            (f" {field.coverage}% ", style(f"items-table--coverage-{band}")),
        )
        if band == "low":
            subtitle.append(" ")
            subtitle.append("Fix", style("items-table--fix"))
        right = field.type == "number" and not field.mixed
        return GridColumn(key, title, subtitle, "right" if right else "left")

    def notify_style_update(self) -> None:
        super().notify_style_update()
        if self.is_mounted:
            # the headers' styles are read once every component style is updated
            self.call_after_refresh(self._restyle_headers)

    def _restyle_headers(self) -> None:
        # Runs after a refresh: by then the screen may be closing and the grid gone.
        grids = self.query(ItemsGrid)
        if self._keys and grids:
            grids.first().relabel(self._grid_columns())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "request_feedback":
            return self.focused_field is not None or None
        if action in ("copy_cell", "copy_row"):
            return self._can_copy or None
        return True

    @property
    def _can_copy(self) -> bool:
        """Whether there is a cell under the cursor."""
        return bool(self._keys and self._items)

    def action_copy_cell(self) -> None:
        if not self._can_copy:
            return
        row, column = self.grid.cursor_coordinate
        value = self.value_at(row, column)
        where = (
            f"item {row + 1}" if self._whole_items else f"{self._keys[column]} of item {row + 1}"
        )
        if value is None:
            self.notify(f"The {where} is empty: nothing copied.", markup=False)
            return
        copy_text(self.app, full_text(value), where)

    def action_copy_row(self) -> None:
        if not self._can_copy:
            return
        row = self.grid.cursor_coordinate.row
        text = json.dumps(self._items[row], indent=2, ensure_ascii=False, default=str)
        copy_text(self.app, text, f"item {row + 1} as JSON")

    def action_request_feedback(self) -> None:
        field = self.focused_field
        if field is not None:
            self.post_message(self.FeedbackRequested(field))

    @on(ItemsGrid.BadgeClicked)
    def badge_clicked(self, message: ItemsGrid.BadgeClicked) -> None:
        """A click on a Fix marker (a field under 50 %) opens the feedback form."""
        message.stop()
        key = self._keys[message.column]
        field = self._analysis.field(key) if self._analysis else None
        if field is not None and coverage_band(field.coverage) == "low":
            self.post_message(self.FeedbackRequested(key))

    @on(ItemsGrid.CellSelected)
    def show_value(self, message: ItemsGrid.CellSelected) -> None:
        message.stop()
        row, column = message.coordinate
        self.app.push_screen(ValueModal(self._keys[column], row + 1, self.value_at(row, column)))
