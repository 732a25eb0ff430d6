"""What a session screen can export: the session (JSONL, as `tui-agent sessions export`
writes it), its items (CSV, JSON) and its recipe in use; each offered only when it applies."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_agent.analysis.shapes import OutputAnalysis
from tui_agent.batch.state import BatchState
from tui_agent.session import SessionState
from tui_agent.store import Store
from tui_agent.tui.export.writers import items_csv, items_json, recipe_json, write_text


@dataclass(frozen=True)
class ExportChoice:
    """One thing to export: its label, the file name offered, and how to write it (`write`
    returns what it wrote, e.g. "12 items"; it raises `StoreError` when it cannot)."""

    key: str
    label: str
    file_name: str
    write: Callable[[Path], Awaitable[str]]


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _stem(state: SessionState) -> str:
    """`scrape-5c4a9e00`: the kind and the id's start, safe in a file name."""
    kind = re.sub(r"[^A-Za-z0-9_-]", "", state.kind) or "session"
    short = re.sub(r"[^A-Za-z0-9_-]", "", state.session_id)[:8]
    return f"{kind}-{short}" if short else kind


def _text_writer(text: Callable[[], str], done: str) -> Callable[[Path], Awaitable[str]]:
    async def write(path: Path) -> str:
        await asyncio.to_thread(lambda: write_text(path, text()))
        return done

    return write


def session_choice(store: Store, state: SessionState) -> ExportChoice:
    """The session's stored events, one per line (`tui-agent sessions export`'s format)."""

    async def write(path: Path) -> str:
        count = await store.export_jsonl(state.session_id, path)
        return _plural(count, "event")

    return ExportChoice("session", "Session · JSONL events", f"{_stem(state)}.jsonl", write)


def items_choices(
    stem: str, items: list[Any], analysis: OutputAnalysis | None = None
) -> list[ExportChoice]:
    """`items` as CSV (a column per dotted field) and as a JSON array."""
    items = list(items)
    count = _plural(len(items), "item")
    return [
        ExportChoice(
            "items-csv",
            f"Items · CSV ({count})",
            f"{stem}-items.csv",
            _text_writer(lambda: items_csv(items, analysis), count),
        ),
        ExportChoice(
            "items-json",
            f"Items · JSON ({count})",
            f"{stem}-items.json",
            _text_writer(lambda: items_json(items), count),
        ),
    ]


def recipe_choice(stem: str, recipe: dict[str, Any]) -> ExportChoice:
    """The recipe in use, as a recipe file."""
    return ExportChoice(
        "recipe",
        "Recipe · JSON file",
        f"{stem}-recipe.json",
        _text_writer(lambda: recipe_json(recipe), "the recipe"),
    )


def session_exports(store: Store | None, state: SessionState) -> list[ExportChoice]:
    """What a session screen showing `state` can export (the session needs the store)."""
    stem = _stem(state)
    choices = [session_choice(store, state)] if store is not None else []
    if state.items:
        choices += items_choices(stem, state.items, state.analysis)
    recipe = state.recipe_in_use()
    if recipe is not None:
        choices.append(recipe_choice(stem, recipe))
    return choices


def batch_records(batch: BatchState) -> list[dict[str, Any]]:
    """A batch's items as records: number, label, session, where it got to and why."""
    return [
        {
            "item": item.item + 1,
            "label": item.label,
            "session": item.child if item.stored else None,
            "state": item.state,
            "status": item.status,
            "passed": item.passed,
            "seconds": round(item.seconds, 3),
            "attempt": item.attempt,
            "why": item.line,
        }
        for item in sorted(batch.items.values(), key=lambda i: i.item)
    ]


def batch_exports(store: Store | None, state: SessionState) -> list[ExportChoice]:
    """What a batch screen can export: the batch session and its items."""
    choices = [session_choice(store, state)] if store is not None else []
    records = batch_records(state.batch) if state.batch is not None else []
    if records:
        choices += items_choices(_stem(state), records)
    return choices
