"""A virtual grid of text cells: only the rows on screen are ever rendered.

Built on the Line API (`ScrollView.render_line`), so a table of 10,000s of rows paints as
fast as a screenful, and appending rows costs only the new rows. Cells hold display text
(the caller formats values); `None` shows a dim "(empty)". A fixed two-line header and a
fixed "#" row-number column stay in place while the data scrolls under them.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import ClassVar, Literal

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.coordinate import Coordinate
from textual.geometry import Region, Size, Spacing
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

Cell = str | None
"""The display text of one cell; None is an empty value."""

EMPTY_TEXT = "(empty)"
HEADER_HEIGHT = 2
MIN_COLUMN_WIDTH = 12
"""The narrowest a column gets when it is squeezed to fit the screen (padding included)."""
MAX_COLUMN_WIDTH = 40
"""The widest a column gets (padding included), or a third of the screen if that is more;
Enter shows a whole value."""
_ROW_CACHE_SIZE = 512


@dataclass(frozen=True)
class GridColumn:
    """One column: its key, its two header lines and how its cells are aligned."""

    key: str
    title: Text
    subtitle: Text
    align: Literal["left", "right"] = "left"


class ItemsGrid(ScrollView, can_focus=True):
    """A keyboard-driven grid of text cells with a cell cursor."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "items-grid--header",
        "items-grid--header-cursor",
        "items-grid--row-number",
        "items-grid--odd-row",
        "items-grid--empty",
        "items-grid--cursor",
        "items-grid--cursor-blurred",
    }

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor_up", show=False, id="items-grid.up", tooltip="Previous row"),
        Binding("down", "cursor_down", show=False, id="items-grid.down", tooltip="Next row"),
        Binding("left", "cursor_left", show=False, id="items-grid.left", tooltip="Previous field"),
        Binding("right", "cursor_right", show=False, id="items-grid.right", tooltip="Next field"),
        Binding(
            "pageup",
            "cursor_page_up",
            show=False,
            id="items-grid.page-up",
            tooltip="One screen of rows up",
        ),
        Binding(
            "pagedown",
            "cursor_page_down",
            show=False,
            id="items-grid.page-down",
            tooltip="One screen of rows down",
        ),
        Binding(
            "home",
            "cursor_first_row",
            show=False,
            id="items-grid.first-row",
            tooltip="Go to the first row",
        ),
        Binding(
            "end",
            "cursor_last_row",
            show=False,
            id="items-grid.last-row",
            tooltip="Go to the last row",
        ),
        Binding(
            "enter",
            "select_cell",
            "Full value",
            id="items-grid.select",
            tooltip="Show the whole value of the cell under the cursor",
        ),
    ]

    cursor_coordinate: reactive[Coordinate] = reactive(Coordinate(0, 0))
    """The cell under the cursor (row, column), clamped to the grid."""

    class CellSelected(Message):
        """Enter (or a click on the cursor cell) asked for a cell."""

        def __init__(self, grid: ItemsGrid, coordinate: Coordinate) -> None:
            super().__init__()
            self.grid = grid
            self.coordinate = coordinate

        @property
        def control(self) -> ItemsGrid:
            return self.grid

    class BadgeClicked(Message):
        """A click on a column's second header line (its type, coverage badge and Fix)."""

        def __init__(self, grid: ItemsGrid, column: int) -> None:
            super().__init__()
            self.grid = grid
            self.column = column

        @property
        def control(self) -> ItemsGrid:
            return self.grid

    def __init__(self, *, name: str | None = None, id: str | None = None) -> None:
        super().__init__(name=name, id=id)
        self._columns: list[GridColumn] = []
        self._rows: list[list[Cell]] = []
        self._cell_widths: list[int] = []
        self._widths: list[int] = []
        self._offsets: list[int] = [0]
        self._number_width = 3
        self._row_cache: dict[int, Strip] = {}
        self._header_cache: dict[int, list[tuple[Strip, Strip]]] = {}
        """The two header lines (number part, data part) by cursor column."""
        self._palette_cache: _Palette | None = None

    @property
    def columns(self) -> Sequence[GridColumn]:
        """The columns, left to right (the "#" column is not one of them)."""
        return self._columns

    @property
    def row_count(self) -> int:
        """How many rows the grid holds."""
        return len(self._rows)

    def row(self, index: int) -> Sequence[Cell]:
        """The cells of row `index` as displayed."""
        return self._rows[index]

    def reset(self, columns: Sequence[GridColumn], rows: Sequence[Sequence[Cell]] = ()) -> None:
        """Replace every column and row."""
        self._columns = list(columns)
        self._rows = []
        self._cell_widths = [0] * len(self._columns)
        self.append_rows(rows)
        self.cursor_coordinate = self.cursor_coordinate

    def relabel(self, columns: Sequence[GridColumn]) -> None:
        """Replace the headers (and alignment) of the same columns, keeping the rows."""
        if [c.key for c in columns] != [c.key for c in self._columns]:
            raise ValueError("relabel() needs the same column keys; use reset()")
        self._columns = list(columns)
        self._update_layout()

    def append_rows(self, rows: Sequence[Sequence[Cell]]) -> None:
        """Add rows at the bottom; each has one cell per column."""
        width = len(self._columns)
        new = [list(row) for row in rows]
        if any(len(row) != width for row in new):
            raise ValueError(f"every row needs {width} cells")
        for index, cells in enumerate(zip(*new, strict=True)):
            self._cell_widths[index] = max(self._cell_widths[index], _widest(cells))
        self._rows.extend(new)
        self._update_layout()

    def _update_layout(self) -> None:
        """Recompute column widths and the virtual size, and drop rendered lines."""
        self._number_width = len(str(max(len(self._rows), 1))) + 2
        room = max(self.size.width - self._number_width, MIN_COLUMN_WIDTH)
        widest = min(max(MAX_COLUMN_WIDTH, room // 3), room)
        self._widths = [
            min(max(cell_len(c.title.plain), cell_len(c.subtitle.plain), cells) + 2, widest)
            for c, cells in zip(self._columns, self._cell_widths, strict=True)
        ]
        self._offsets = [0, *accumulate(self._widths)]
        self.virtual_size = Size(
            self._number_width + self._offsets[-1], HEADER_HEIGHT + len(self._rows)
        )
        self._clear_caches()

    def _clear_caches(self) -> None:
        self._row_cache.clear()
        self._header_cache.clear()
        self.refresh()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._palette_cache = None
        self._clear_caches()

    def on_resize(self, _: events.Resize) -> None:
        self._update_layout()

    def on_focus(self, _: events.Focus) -> None:
        self.refresh()

    def on_blur(self, _: events.Blur) -> None:
        self.refresh()

    def validate_cursor_coordinate(self, value: Coordinate) -> Coordinate:
        return Coordinate(
            max(0, min(value.row, len(self._rows) - 1)),
            max(0, min(value.column, len(self._columns) - 1)),
        )

    def watch_cursor_coordinate(self) -> None:
        self.refresh()
        self._scroll_cursor_into_view()

    def _scroll_cursor_into_view(self) -> None:
        if len(self._widths) != len(self._columns) or not self._columns:
            return  # not laid out yet
        row, column = self.cursor_coordinate
        region = Region(
            self._number_width + self._offsets[column],
            HEADER_HEIGHT + row,
            self._widths[column],
            1,
        )
        spacing = Spacing(HEADER_HEIGHT, 0, 0, self._number_width)
        self.scroll_to_region(region, spacing=spacing, animate=False, force=True)

    @property
    def _page_rows(self) -> int:
        return max(self.scrollable_content_region.height - HEADER_HEIGHT, 1)

    def _move(self, rows: int = 0, columns: int = 0) -> None:
        row, column = self.cursor_coordinate
        self.cursor_coordinate = Coordinate(row + rows, column + columns)

    def action_cursor_up(self) -> None:
        self._move(rows=-1)

    def action_cursor_down(self) -> None:
        self._move(rows=1)

    def action_cursor_left(self) -> None:
        self._move(columns=-1)

    def action_cursor_right(self) -> None:
        self._move(columns=1)

    def action_cursor_page_up(self) -> None:
        self._move(rows=-self._page_rows)

    def action_cursor_page_down(self) -> None:
        self._move(rows=self._page_rows)

    def action_cursor_first_row(self) -> None:
        self.cursor_coordinate = Coordinate(0, self.cursor_coordinate.column)

    def action_cursor_last_row(self) -> None:
        self.cursor_coordinate = Coordinate(len(self._rows) - 1, self.cursor_coordinate.column)

    def action_select_cell(self) -> None:
        if self._rows and self._columns:
            self.post_message(self.CellSelected(self, self.cursor_coordinate))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or not self._columns:
            return
        scroll_x, scroll_y = self.scroll_offset
        column = self.cursor_coordinate.column
        if offset.x >= self._number_width:
            column = bisect_right(self._offsets, scroll_x + offset.x - self._number_width) - 1
        row = self.cursor_coordinate.row
        if offset.y >= HEADER_HEIGHT:
            row = scroll_y + offset.y - HEADER_HEIGHT
        target = Coordinate(row, min(column, len(self._columns) - 1))
        if offset.y == HEADER_HEIGHT - 1 and offset.x >= self._number_width:
            self.cursor_coordinate = target
            self.post_message(self.BadgeClicked(self, target.column))
        elif target == self.cursor_coordinate and offset.y >= HEADER_HEIGHT:
            self.action_select_cell()
        elif row < len(self._rows) or offset.y < HEADER_HEIGHT:
            self.cursor_coordinate = target

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        palette = self._palette
        if y < HEADER_HEIGHT:
            number, data = self._header_strips(y)
        elif (row := scroll_y + y - HEADER_HEIGHT) < len(self._rows):
            number, data = self._row_strips(row)
        else:
            return Strip.blank(width, palette.base)
        room = max(width - self._number_width, 0)
        line = Strip.join([number, data.crop_extend(scroll_x, scroll_x + room, palette.base)])
        return line.crop(0, width)

    @property
    def _palette(self) -> _Palette:
        """The styles a render needs, resolved once per stylesheet update."""
        if self._palette_cache is None:
            self._palette_cache = _Palette.of(self)
        return self._palette_cache

    def _header_strips(self, y: int) -> tuple[Strip, Strip]:
        key = self.cursor_coordinate.column
        if key not in self._header_cache:
            self._header_cache[key] = [self._render_header(y=0), self._render_header(y=1)]
        return self._header_cache[key][y]

    def _render_header(self, y: int) -> tuple[Strip, Strip]:
        console = self.app.console
        palette = self._palette
        label = "#" if y == 0 else ""
        number = Strip(
            [Segment(f"{label:>{self._number_width - 1}} ", palette.header)], self._number_width
        )
        segments: list[Segment] = []
        for index, (column, width) in enumerate(zip(self._columns, self._widths, strict=True)):
            cursor = index == self.cursor_coordinate.column
            style = palette.header_cursor if cursor else palette.header
            text = (column.title if y == 0 else column.subtitle).copy()
            text.truncate(width - 2, overflow="ellipsis")
            text.align(column.align, width - 2)
            segments.append(Segment(" ", style))
            segments.extend(Segment.apply_style(text.render(console), style))
            segments.append(Segment(" ", style))
        return number, Strip(segments, self._offsets[-1])

    def _row_strips(self, row: int) -> tuple[Strip, Strip]:
        odd = row % 2
        number = Strip(
            [Segment(f"{row + 1:>{self._number_width - 1}} ", self._palette.number[odd])],
            self._number_width,
        )
        cursor = self.cursor_coordinate
        if row == cursor.row:
            return number, self._render_row(row, cursor.column)
        data = self._row_cache.get(row)
        if data is None:
            if len(self._row_cache) >= _ROW_CACHE_SIZE:
                self._row_cache.clear()
            data = self._row_cache[row] = self._render_row(row, None)
        return number, data

    def _render_row(self, row: int, cursor_column: int | None) -> Strip:
        palette = self._palette
        odd = row % 2
        base, empty = palette.row[odd], palette.empty[odd]
        cursor = palette.cursor if self.has_focus else palette.cursor_blurred
        segments = []
        for index, (cell, column, width) in enumerate(
            zip(self._rows[row], self._columns, self._widths, strict=True)
        ):
            style = empty if cell is None else base
            if index == cursor_column:
                style += cursor
            segments.append(Segment(_fit(cell, width - 2, column.align), style))
        return Strip(segments, self._offsets[-1])


@dataclass(frozen=True)
class _Palette:
    """The grid's styles, combined from its component classes (even row first, then odd)."""

    base: Style
    header: Style
    header_cursor: Style
    row: tuple[Style, Style]
    number: tuple[Style, Style]
    empty: tuple[Style, Style]
    cursor: Style
    cursor_blurred: Style

    @classmethod
    def of(cls, grid: ItemsGrid) -> _Palette:
        def style(component: str, partial: bool = False) -> Style:
            return grid.get_component_rich_style(component, partial=partial)

        base = grid.rich_style
        rows = (base, base + style("items-grid--odd-row"))
        header = base + style("items-grid--header")
        return cls(
            base=base,
            header=header,
            header_cursor=header + style("items-grid--header-cursor"),
            row=rows,
            number=(
                rows[0] + style("items-grid--row-number", partial=True),
                rows[1] + style("items-grid--row-number", partial=True),
            ),
            empty=(
                rows[0] + style("items-grid--empty", partial=True),
                rows[1] + style("items-grid--empty", partial=True),
            ),
            cursor=style("items-grid--cursor"),
            cursor_blurred=style("items-grid--cursor-blurred"),
        )


def _widest(cells: Sequence[Cell]) -> int:
    """The width of the widest of `cells`, measured in C passes when they are ASCII."""
    texts = [cell for cell in cells if cell is not None]
    empty = len(EMPTY_TEXT) if len(texts) < len(cells) else 0
    if "".join(texts).replace("…", "").isascii():
        return max(empty, *map(len, texts), 0)
    return max(empty, *map(_width, texts), 0)


def _is_narrow(text: str) -> bool:
    """Whether every character of `text` takes one cell: ASCII, or ASCII cut with "…"."""
    return text.isascii() or (text[-1] == "…" and text[:-1].isascii())


def _width(cell: Cell) -> int:
    """The cells `cell` takes on screen."""
    if cell is None:
        return len(EMPTY_TEXT)
    return len(cell) if _is_narrow(cell) else cell_len(cell)


def _fit(cell: Cell, width: int, align: Literal["left", "right"]) -> str:
    """`cell` padded (or cut with an ellipsis) to `width` cells, with one space each side."""
    text = EMPTY_TEXT if cell is None else cell
    narrow = _is_narrow(text)
    length = len(text) if narrow else cell_len(text)
    if length > width:
        text = (text[: width - 1] if narrow else set_cell_size(text, width - 1)) + "…"
    elif align == "right":
        text = " " * (width - length) + text
    else:
        text = text + " " * (width - length)
    return f" {text} "
