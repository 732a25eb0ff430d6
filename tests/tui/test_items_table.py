"""The items table: headers, cells, full values, feedback requests, growth, 10,000 rows."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from rich.cells import cell_len
from textual.app import App, ComposeResult
from textual.coordinate import Coordinate
from textual.message import Message
from textual.notifications import Notify
from textual.widgets import TextArea

from tui_agent.analysis import analyze_output
from tui_agent.analysis.shapes import OutputAnalysis
from tui_agent.tui.paths import styles_dir
from tui_agent.tui.screens.value import ValueModal
from tui_agent.tui.widgets.items_grid import EMPTY_TEXT, ItemsGrid
from tui_agent.tui.widgets.items_table import CELL_LIMIT, ItemsTable, cell_text, coverage_band

LONG_TITLE = "A very long product title " * 8


def products(count: int = 12) -> list[dict[str, Any]]:
    """Records with full, most-, some- and rarely-populated fields (one nested, one list)."""
    return [
        {
            "title": LONG_TITLE if i == 0 else f"Product {i}",
            "price": 10 + i,
            "seller": {
                "name": f"Seller {i}" if i % 4 else "",
                "rating": 4.5 if i % 3 == 0 else None,
            },
            "tags": ["new", "sale"] if i % 2 else [],
            "url": f"https://shop.example/p/{i}",
        }
        for i in range(count)
    ]


class ItemsHarness(App[None]):
    """An app holding only the items table, filled on mount."""

    CSS_PATH = [styles_dir() / "items.tcss"]

    def __init__(self, items: list[Any], analysis: OutputAnalysis | None) -> None:
        super().__init__()
        self.items = items
        self.analysis = analysis

    def compose(self) -> ComposeResult:
        yield ItemsTable()

    def on_mount(self) -> None:
        self.query_one(ItemsTable).update_items(self.items, self.analysis)
        self.query_one(ItemsGrid).focus()


def harness(items: list[Any], analysis: OutputAnalysis | None = None) -> ItemsHarness:
    return ItemsHarness(items, analyze_output(items) if analysis is None else analysis)


def requested_fields(messages: list[Message]) -> list[str]:
    """The fields of the FeedbackRequested messages posted (each seen once, as it bubbles)."""
    posted = {id(m): m for m in messages if isinstance(m, ItemsTable.FeedbackRequested)}
    return [m.field for m in posted.values()]


def line_text(grid: ItemsGrid, y: int) -> str:
    return grid.render_line(y).text


@pytest.mark.parametrize("value", [None, "", "   \n", [], {}, [None, ""], math.nan])
def test_empty_values_have_no_cell_text(value: Any) -> None:
    assert cell_text(value) is None


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0"),
        (False, "false"),
        (2.5, "2.5"),
        ("café", "café"),
        (["a", 1], '["a", 1]'),
        ({"k": 0, "z": None}, '{"k": 0, "z": null}'),
        ("line one\nline two\ttab\x1b[31m", "line one line two tab [31m"),
    ],
)
def test_cell_text_is_one_line_of_json_or_text(value: Any, text: str) -> None:
    assert cell_text(value) == text


def test_cell_text_cuts_at_the_limit() -> None:
    assert cell_text("x" * CELL_LIMIT) == "x" * CELL_LIMIT
    assert cell_text("x" * (CELL_LIMIT + 1)) == "x" * CELL_LIMIT + "…"


@pytest.mark.parametrize(
    ("coverage", "band"), [(0, "low"), (49, "low"), (50, "mid"), (79, "mid"), (80, "high")]
)
def test_coverage_bands(coverage: int, band: str) -> None:
    assert coverage_band(coverage) == band


async def test_headers_show_name_type_coverage_and_fix_marker() -> None:
    items = products()
    analysis = analyze_output(items)
    app = harness(items, analysis)
    async with app.run_test(size=(100, 30)):
        table = app.query_one(ItemsTable)
        grid = app.query_one(ItemsGrid)
        keys = ["title", "price", "seller.name", "seller.rating", "tags", "url"]
        assert [c.key for c in grid.columns] == [f.name for f in analysis.fields] == keys
        for column in grid.columns:
            field = analysis.field(column.key)
            assert field is not None
            subtitle = column.subtitle.plain
            assert subtitle.startswith(field.type)
            assert f" {field.coverage}% " in subtitle
            assert subtitle.endswith("Fix") == (field.coverage < 50)
            [badge] = [s for s in column.subtitle.spans if "%" in subtitle[s.start : s.end]]
            band = coverage_band(field.coverage)
            assert badge.style == table.get_component_rich_style(
                f"items-table--coverage-{band}", partial=True
            )
        bands = {coverage_band(f.coverage) for f in analysis.fields}
        assert bands == {"low", "mid", "high"}
        assert line_text(grid, 0).split()[:3] == ["#", "title", "price"]
        assert table.border_title == "Items · 12"


async def test_header_badges_follow_the_theme() -> None:
    items = products()
    app = harness(items)
    async with app.run_test(size=(100, 30)) as pilot:
        table = app.query_one(ItemsTable)

        def badge_style() -> Any:
            subtitle = table.grid.columns[0].subtitle
            [badge] = [s for s in subtitle.spans if "%" in subtitle.plain[s.start : s.end]]
            return badge.style

        dark = badge_style()
        app.theme = "textual-light"
        await pilot.pause()
        assert badge_style() != dark
        assert badge_style() == table.get_component_rich_style(
            "items-table--coverage-high", partial=True
        )


async def test_cells_show_dotted_values_dim_empties_and_cut_text() -> None:
    items = products()
    app = harness(items)
    async with app.run_test(size=(100, 30)):
        grid = app.query_one(ItemsGrid)
        keys = [c.key for c in grid.columns]
        first = dict(zip(keys, grid.row(0), strict=True))
        assert first["seller.name"] is None
        assert first["tags"] is None
        assert first["title"] == LONG_TITLE[:CELL_LIMIT] + "…"
        second = dict(zip(keys, grid.row(1), strict=True))
        assert second["seller.name"] == "Seller 1"
        assert second["tags"] == '["new", "sale"]'
        line = grid.render_line(2)
        assert line.text.split()[:3] == ["1", "A", "very"]
        dim = grid.get_component_rich_style("items-grid--empty", partial=True)
        empties = [s.style for s in line if s.text.strip() == EMPTY_TEXT]
        assert empties
        assert all(s and s.italic and s.color == dim.color for s in empties)
        [price] = [s.style for s in line if s.text.strip() == "10"]
        assert price and not price.italic and price.color != dim.color


async def test_enter_shows_the_whole_value_and_escape_closes_it() -> None:
    items = products()
    app = harness(items)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("enter")
        modal = app.screen
        assert isinstance(modal, ValueModal)
        assert (modal.field, modal.item_number, modal.value) == ("title", 1, LONG_TITLE)
        assert modal.query_one(TextArea).text == LONG_TITLE
        await pilot.press("escape")
        assert not isinstance(app.screen, ValueModal)

        await pilot.press("down", "right", "right", "right", "enter")
        modal = app.screen
        assert isinstance(modal, ValueModal)
        assert (modal.field, modal.value) == ("seller.rating", None)
        await pilot.press("escape")
        await pilot.press("right", "enter")
        modal = app.screen
        assert isinstance(modal, ValueModal)
        assert modal.query_one(TextArea).text == '[\n  "new",\n  "sale"\n]'


async def test_f_requests_feedback_for_the_focused_column() -> None:
    items = products()
    messages: list[Message] = []
    app = harness(items)
    async with app.run_test(size=(100, 30), message_hook=messages.append) as pilot:
        table = app.query_one(ItemsTable)
        assert table.focused_field == "title"
        await pilot.press("f", "right", "right", "f")
        assert requested_fields(messages) == ["title", "seller.name"]
        assert table.focused_field == "seller.name"


async def test_f_does_nothing_without_columns() -> None:
    messages: list[Message] = []
    app = ItemsHarness([], None)
    async with app.run_test(size=(80, 24), message_hook=messages.append) as pilot:
        assert app.query_one(ItemsTable).focused_field is None
        await pilot.press("f")
        assert requested_fields(messages) == []


async def test_a_growing_list_only_adds_rows_and_keeps_the_cursor() -> None:
    items = products(30)
    app = harness(items[:10])
    async with app.run_test(size=(100, 30)) as pilot:
        table = app.query_one(ItemsTable)
        grid = app.query_one(ItemsGrid)
        first_rows = [grid.row(i) for i in range(10)]
        await pilot.press("down", "down", "right")
        table.update_items(items[:20], analyze_output(items[:20]))
        table.update_items(items, analyze_output(items))
        assert grid.row_count == 30
        assert all(grid.row(i) is row for i, row in enumerate(first_rows))
        assert grid.cursor_coordinate == Coordinate(2, 1)
        assert dict(zip([c.key for c in grid.columns], grid.row(29), strict=True))["price"] == "39"


async def test_new_columns_or_replaced_items_rebuild_the_table() -> None:
    items = products(10)
    app = harness(items)
    async with app.run_test(size=(100, 30)):
        table = app.query_one(ItemsTable)
        grid = app.query_one(ItemsGrid)
        row = grid.row(0)
        wider = [{**item, "stock": 3} for item in items]
        table.update_items(wider, analyze_output(wider))
        assert grid.columns[-1].key == "stock"
        assert grid.row(0) is not row
        replaced = [{"title": "Only one", "price": 1}]
        table.update_items(replaced, analyze_output(replaced))
        assert grid.row_count == 1
        assert list(grid.row(0)) == ["Only one", "1"]


async def test_records_without_analysis_use_the_names_seen_so_far() -> None:
    app = ItemsHarness([{"a": 1, "b": {"c": "x"}}], None)
    async with app.run_test(size=(80, 24)):
        table = app.query_one(ItemsTable)
        grid = app.query_one(ItemsGrid)
        assert [c.key for c in grid.columns] == ["a", "b.c"]
        assert grid.columns[0].subtitle.plain == ""
        table.update_items([{"a": 1, "b": {"c": "x"}}, {"d": True}], None)
        assert [c.key for c in grid.columns] == ["a", "b.c", "d"]
        assert list(grid.row(1)) == [None, None, "true"]


async def test_output_that_is_not_records_has_one_value_column() -> None:
    items: list[Any] = ["first line\nsecond line", 42, {"k": "v"}, None]
    app = harness(items)
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.query_one(ItemsTable)
        grid = app.query_one(ItemsGrid)
        assert [c.key for c in grid.columns] == ["value"]
        assert [grid.row(i)[0] for i in range(4)] == [
            "first line second line",
            "42",
            '{"k": "v"}',
            None,
        ]
        assert table.focused_field == "value"
        await pilot.press("enter")
        assert isinstance(app.screen, ValueModal)
        assert app.screen.query_one(TextArea).text == "first line\nsecond line"


async def test_clicking_a_cell_moves_the_cursor_and_clicking_again_opens_it() -> None:
    items = products()
    app = harness(items)
    async with app.run_test(size=(100, 30)) as pilot:
        grid = app.query_one(ItemsGrid)
        price_x = grid.render_line(2).text.index("10")
        await pilot.click(ItemsGrid, offset=(price_x, 2 + 3))
        assert grid.cursor_coordinate == Coordinate(3, 1)
        await pilot.click(ItemsGrid, offset=(price_x, 2 + 3))
        assert isinstance(app.screen, ValueModal)
        assert app.screen.value == 13


async def test_ten_thousand_rows_mount_and_the_cursor_moves() -> None:
    items = [
        {"n": i, **{f"field{j}": f"value {i}-{j}" if (i + j) % 3 else None for j in range(9)}}
        for i in range(10_000)
    ]
    app = harness(items)
    async with app.run_test(size=(80, 24)) as pilot:
        grid = app.query_one(ItemsGrid)
        assert grid.row_count == 10_000
        assert len(grid.columns) == 10
        await pilot.press("pagedown", "down")
        page = grid.scrollable_content_region.height - 2
        assert grid.cursor_coordinate == Coordinate(page + 1, 0)
        await pilot.press("end", "right")
        assert grid.cursor_coordinate == Coordinate(9_999, 1)
        await pilot.pause()
        bottom = line_text(grid, grid.scrollable_content_region.height - 1)
        assert bottom.split()[:5] == ["10000", "9999", EMPTY_TEXT, "value", "9999-1"]
        await pilot.press("home")
        assert grid.cursor_coordinate == Coordinate(0, 1)
        assert line_text(grid, 2).split()[:2] == ["1", "0"]


async def test_wide_characters_keep_the_columns_aligned() -> None:
    items = products()
    items[2]["title"] = "漢字 🙂 wide"
    app = harness(items)
    async with app.run_test(size=(100, 30)):
        grid = app.query_one(ItemsGrid)

        def price_offset(row: int) -> int:
            cells = 0
            for segment in grid.render_line(2 + row):
                if segment.text.strip() == str(10 + row):
                    return cells
                cells += cell_len(segment.text)
            raise AssertionError(f"no price in row {row}")

        assert price_offset(2) == price_offset(3) == price_offset(1)


def test_snapshot_table_with_mixed_coverage(snap_compare: Any) -> None:
    items = products(40)
    items[5]["title"] = "Crème brûlée, naïve café"
    assert snap_compare(harness(items), terminal_size=(100, 30), press=["down", "right"])


def test_snapshot_table_at_80x24(snap_compare: Any) -> None:
    assert snap_compare(harness(products(40)), terminal_size=(80, 24), press=["right", "right"])


def test_snapshot_full_value(snap_compare: Any) -> None:
    assert snap_compare(harness(products()), terminal_size=(80, 24), press=["enter"])


async def test_a_click_on_the_fix_marker_asks_for_feedback_on_that_field() -> None:
    items = products()
    messages: list[Message] = []
    app = harness(items)
    async with app.run_test(size=(140, 30), message_hook=messages.append) as pilot:
        grid = app.query_one(ItemsGrid)
        badges = line_text(grid, 1)
        await pilot.click(ItemsGrid, offset=(badges.index("Fix"), 1))  # seller.rating, 33 %
        assert requested_fields(messages) == ["seller.rating"]
        await pilot.click(ItemsGrid, offset=(badges.index("100%"), 1))  # title: nothing to fix
        assert requested_fields(messages) == ["seller.rating"]


def notices(messages: list[Message]) -> list[str]:
    """Each toast posted, as `title: message` (each seen once, as it bubbles)."""
    posted = {id(m): m for m in messages if isinstance(m, Notify)}
    return [f"{m.notification.title}: {m.notification.message}" for m in posted.values()]


async def test_y_copies_the_whole_value_under_the_cursor_and_says_so() -> None:
    items = products()
    app = harness(items)
    messages: list[Message] = []
    async with app.run_test(size=(100, 30), message_hook=messages.append) as pilot:
        await pilot.press("y")
        assert app.clipboard == LONG_TITLE  # whole: the cell shows it cut
        assert notices(messages)[-1] == (
            f"Copied title of item 1 · {len(LONG_TITLE)} characters: {LONG_TITLE[:59]}…"
        )
        await pilot.press("down", "right", "right", "right", "right", "y")
        assert app.clipboard == '[\n  "new",\n  "sale"\n]'  # as the full value shows it
        assert notices(messages)[-1] == 'Copied tags of item 2 · 21 characters: [ "new", "sale" ]'
        await pilot.press("left", "y")  # seller.rating of item 2 is missing
        assert app.clipboard == '[\n  "new",\n  "sale"\n]'
        assert notices(messages)[-1] == ": The seller.rating of item 2 is empty: nothing copied."


async def test_capital_y_copies_the_item_under_the_cursor_as_json() -> None:
    items = products()
    app = harness(items)
    messages: list[Message] = []
    async with app.run_test(size=(100, 30), message_hook=messages.append) as pilot:
        await pilot.press("down", "down", "right", "Y")
        assert json.loads(app.clipboard) == items[2]
        assert notices(messages)[-1].startswith(
            f'Copied item 3 as JSON · {len(app.clipboard)} characters: {{ "title": "Product 2",'
        )


async def test_y_on_output_that_is_not_records_copies_the_whole_item() -> None:
    app = harness(["first line\nsecond line", 42, {"k": "v"}])
    async with app.run_test(size=(80, 20)) as pilot:
        await pilot.press("y")
        assert app.clipboard == "first line\nsecond line"
        await pilot.press("down", "Y")
        assert app.clipboard == "42"
        await pilot.press("down", "y")
        assert json.loads(app.clipboard) == {"k": "v"}


async def test_copy_keys_are_off_without_items() -> None:
    app = harness([])
    async with app.run_test(size=(80, 20)) as pilot:
        table = app.query_one(ItemsTable)
        assert table.check_action("copy_cell", ()) is None
        assert table.check_action("copy_row", ()) is None
        await pilot.press("y", "Y")
        assert app.clipboard == ""
        table.update_items(products(2), None)
        assert table.check_action("copy_cell", ()) is True
        await pilot.press("y")
        assert app.clipboard == LONG_TITLE
