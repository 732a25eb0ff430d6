"""What an export writes: items as CSV or JSON, a recipe as its file, each written
atomically (`write_lines`: a failed write never leaves a truncated file). No UI here."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tui_agent.analysis import flatten_item
from tui_agent.analysis.shapes import OutputAnalysis
from tui_agent.store.jsonl import write_lines

VALUE_COLUMN = "value"
"""The one CSV column of items that are not all records."""


def csv_cell(value: Any) -> str:
    """One value as CSV text: text as is, None as empty, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, default=str)


def csv_columns(items: Sequence[Any], analysis: OutputAnalysis | None = None) -> list[str]:
    """The columns of `items` as CSV: the analysed fields first, then every other dotted
    field name in the order first seen; one `value` column unless every item is a record."""
    if not all(isinstance(item, dict) for item in items):
        return [VALUE_COLUMN]
    names: dict[str, None] = dict.fromkeys(f.name for f in analysis.fields) if analysis else {}
    for item in items:
        names.update(dict.fromkeys(flatten_item(item)))
    return list(names)


def items_csv(items: Sequence[Any], analysis: OutputAnalysis | None = None) -> str:
    """`items` as CSV text: a header row, then one row per item (nested fields dotted)."""
    columns = csv_columns(items, analysis)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    records = all(isinstance(item, dict) for item in items)
    for item in items:
        if records:
            flat = flatten_item(item)
            writer.writerow([csv_cell(flat.get(column)) for column in columns])
        else:
            writer.writerow([csv_cell(item)])
    return out.getvalue()


def items_json(items: Sequence[Any]) -> str:
    """`items` as an indented JSON array."""
    return json.dumps(list(items), indent=2, ensure_ascii=False, default=str) + "\n"


def recipe_json(recipe: dict[str, Any]) -> str:
    """A recipe document as a recipe file (what `tui-agent recipe run RECIPE.json` reads)."""
    return json.dumps(recipe, indent=2, ensure_ascii=False) + "\n"


def write_text(path: Path, text: str) -> int:
    """Write `text` to `path` atomically; returns its length in characters. A `StoreError`
    says why the file could not be written."""
    write_lines(path, [text.removesuffix("\n")])
    return len(text)
