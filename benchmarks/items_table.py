"""Items table speed: first paint, appending batches and paging, for three table widgets.

Compares, on the same 10 columns of display text, Textual's built-in `DataTable`,
`textual-fastdatatable` and our virtual `ItemsGrid`, plus the whole `ItemsTable` (which also
flattens and formats the raw items). Each figure is the median of `--repeat` runs, printed as
milliseconds of this process's CPU time (steady on a busy machine), of wall-clock time, and
as the CPU ratio to a baseline measured in the same run: an app showing a screen of text.

    .venv/bin/python benchmarks/items_table.py [--rows 10000] [--repeat 3] [--only ItemsGrid]

- paint: from mounting the widget (data included) until the first screen has been rendered
  (`pilot.pause()` returns after the screen's compositor has rendered what changed).
- append: the rows arrive in 100 batches; each batch is added and the screen rendered.
- page: 20 x page-down (a real key press), each followed by a render of the screen; the
  baseline presses the key too, so the difference is the table's own cost.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import pyarrow.compute  # noqa: F401  (imported here so its import is not timed as paint)
from rich.text import Text
from textual.app import App
from textual.widget import Widget
from textual.widgets import DataTable, Static
from textual_fastdatatable import DataTable as FastDataTable

from tui_agent.analysis import analyze_output, flatten_item
from tui_agent.tui.paths import styles_dir
from tui_agent.tui.widgets.items_grid import GridColumn, ItemsGrid
from tui_agent.tui.widgets.items_table import ItemsTable, cell_text

SIZE = (100, 30)
BATCHES = 100
PAGES = 20
WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]


def make_items(count: int) -> list[dict[str, Any]]:
    """`count` product-like records with 10 fields (two nested, some empty)."""
    rng = random.Random(7)
    items = []
    for i in range(count):
        items.append(
            {
                "title": " ".join(rng.choices(WORDS, k=rng.randint(2, 30))),
                "price": round(rng.uniform(1, 500), 2),
                "url": f"https://shop.example/items/{i}",
                "date": f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                "in_stock": rng.random() < 0.7,
                "seller": {"name": rng.choice(["ACME", "Globex", "", None]), "rating": 4.5},
                "tags": rng.sample(WORDS, k=rng.randint(0, 4)),
                "sku": f"SKU-{i:06d}" if rng.random() < 0.4 else None,
                "description": " ".join(rng.choices(WORDS, k=rng.randint(0, 60))),
            }
        )
    return items


class Bench(App[None]):
    CSS_PATH = [styles_dir() / "items.tcss"]


class Candidate:
    """How to build one table widget, fill it at once, and append rows to it."""

    def __init__(
        self,
        name: str,
        build: Callable[[list[list[str | None]] | None], Widget],
        append: Callable[[Widget, list[list[str | None]]], None],
    ) -> None:
        self.name = name
        self.build = build
        self.append = append


def candidates(
    items: list[dict[str, Any]], columns: list[str], rows: list[list[str | None]]
) -> list[Candidate]:
    analysis = analyze_output(items)
    row_of = {id(row): index for index, row in enumerate(rows)}

    def builtin(data: list[list[str | None]] | None) -> Widget:
        table: DataTable[str] = DataTable()
        table.add_columns(*columns)
        if data:
            table.add_rows([[c if c is not None else "(empty)" for c in r] for r in data])
        return table

    def builtin_append(table: Widget, data: list[list[str | None]]) -> None:
        assert isinstance(table, DataTable)
        table.add_rows([[c if c is not None else "(empty)" for c in r] for r in data])

    def fast(data: list[list[str | None]] | None) -> Widget:
        return FastDataTable(
            data=data or None,
            column_labels=list(columns),
            null_rep="[dim](empty)[/]",
            render_markup=False,
        )

    def fast_append(table: Widget, data: list[list[str | None]]) -> None:
        assert isinstance(table, FastDataTable)
        table.add_rows(data)

    def grid(data: list[list[str | None]] | None) -> Widget:
        widget = ItemsGrid()
        widget.reset([GridColumn(c, Text(c), Text()) for c in columns], data or ())
        return widget

    def grid_append(widget: Widget, data: list[list[str | None]]) -> None:
        assert isinstance(widget, ItemsGrid)
        widget.append_rows(data)

    class FilledItemsTable(ItemsTable):
        def __init__(self, upto: int) -> None:
            super().__init__()
            self.upto = upto

        def on_mount(self) -> None:
            self.update_items(items[: self.upto], analysis)

    def table(data: list[list[str | None]] | None) -> Widget:
        return FilledItemsTable(len(data) if data else 0)

    def table_append(widget: Widget, data: list[list[str | None]]) -> None:
        assert isinstance(widget, ItemsTable)
        widget.update_items(items[: row_of[id(data[-1])] + 1], analysis)

    return [
        Candidate("textual DataTable", builtin, builtin_append),
        Candidate("textual-fastdatatable", fast, fast_append),
        Candidate("ItemsGrid (virtual)", grid, grid_append),
        Candidate("ItemsTable (items in)", table, table_append),
    ]


def baseline_widget(rows: list[list[str | None]]) -> Widget:
    return Static("\n".join(" ".join(c or "" for c in row)[: SIZE[0]] for row in rows[:30]))


Timing = tuple[float, float]
"""Seconds of wall-clock time and of this process's CPU time."""


def clock() -> Timing:
    return time.perf_counter(), time.process_time()


def since(start: Timing) -> Timing:
    wall, cpu = clock()
    return wall - start[0], cpu - start[1]


async def time_paint(build: Callable[[], Widget]) -> Timing:
    app = Bench()
    async with app.run_test(size=SIZE) as pilot:
        start = clock()
        widget = build()
        await app.mount(widget)
        await pilot.pause()
        return since(start)


async def time_append(candidate: Candidate | None, rows: list[list[str | None]]) -> Timing:
    app = Bench()
    async with app.run_test(size=SIZE) as pilot:
        widget = candidate.build(None) if candidate else Static("")
        await app.mount(widget)
        await pilot.pause()
        size = max(len(rows) // BATCHES, 1)
        start = clock()
        for first in range(0, len(rows), size):
            if candidate:
                candidate.append(widget, rows[first : first + size])
            await pilot.pause()
        return since(start)


async def time_pages(build: Callable[[], Widget]) -> Timing:
    app = Bench()
    async with app.run_test(size=SIZE) as pilot:
        widget = build()
        await app.mount(widget)
        await pilot.pause()
        target = widget.query_one(ItemsGrid) if isinstance(widget, ItemsTable) else widget
        target.focus()
        await pilot.pause()
        start = clock()
        for _ in range(PAGES):
            await pilot.press("pagedown")
            await pilot.pause()
        wall, cpu = since(start)
        return wall / PAGES, cpu / PAGES


def median(timings: list[Timing]) -> Timing:
    """The median wall and CPU times, in milliseconds."""
    return (
        statistics.median(t[0] for t in timings) * 1000,
        statistics.median(t[1] for t in timings) * 1000,
    )


def cell(timing: Timing, base: Timing | None) -> str:
    wall, cpu = timing
    ratio = f" {cpu / base[1]:6.1f}x" if base else " " * 8
    return f"{cpu:9.1f} {wall:9.1f}{ratio}"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--only",
        default="",
        help="comma-separated start of candidate names to run, e.g. 'ItemsGrid,ItemsTable'",
    )
    args = parser.parse_args()
    only = [name for name in args.only.split(",") if name]

    items = make_items(args.rows)
    columns = [f.name for f in analyze_output(items).fields]
    rows = [[cell_text(flatten_item(item).get(c)) for c in columns] for item in items]
    print(
        f"{args.rows:,} rows x {len(columns)} columns, terminal {SIZE[0]}x{SIZE[1]}, "
        f"median of {args.repeat}; ms of CPU time, ms of wall time, CPU ratio to baseline"
    )
    header = f"{'cpu':>9} {'wall':>9} {'ratio':>7}"
    print(f"{'':30} {'paint':^27} {f'append x{BATCHES}':^27} {'page down':^27}")
    print(f"{'':30} {header} {header} {header}")  # fmt: skip

    async def measure(build: Callable[[], Widget], candidate: Candidate | None) -> list[Timing]:
        return [
            median([await time_paint(build) for _ in range(args.repeat)]),
            median([await time_append(candidate, rows) for _ in range(args.repeat)]),
            median([await time_pages(build) for _ in range(args.repeat)]),
        ]

    base = await measure(lambda: baseline_widget(rows), None)
    print(f"{'baseline: a screen of text':30} " + " ".join(cell(t, None) for t in base))
    for candidate in candidates(items, columns, rows):
        if only and not any(candidate.name.startswith(name) for name in only):
            continue
        timings = await measure(lambda c=candidate: c.build(rows), candidate)
        print(
            f"{candidate.name:30} "
            + " ".join(cell(t, b) for t, b in zip(timings, base, strict=True))
        )


if __name__ == "__main__":
    asyncio.run(main())
