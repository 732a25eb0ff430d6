"""The export dialog on a real session screen: each kind written to a file and read back, the
question before an existing file is overwritten, errors said in the dialog; the writers."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path
from typing import Any

import pytest
from artifact_factory import (
    ITEMS,
    recipe_document,
    refinement_of_price,
    scrape_started,
    scrape_with_artifacts,
)
from batch_factory import RECIPE_ITEMS, batch_sessions
from session_factory import (
    at_fixed_times,
    codeact_payloads,
    record,
    started,
    store_events,
    wait_until,
)
from textual.app import App
from textual.message import Message
from textual.notifications import Notify
from textual.pilot import Pilot
from textual.widgets import Input, OptionList

from tui_agent.batch.plan import child_id
from tui_agent.events import SessionEnded
from tui_agent.session import SessionState, fold
from tui_agent.store import Store, read_jsonl
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.batch.screen import BatchScreen
from tui_agent.tui.export.choices import batch_exports, session_exports
from tui_agent.tui.export.screen import ExportScreen
from tui_agent.tui.export.writers import csv_columns, items_csv
from tui_agent.tui.screens.confirm import ConfirmModal
from tui_agent.tui.screens.session import SessionScreen
from tui_agent.web.recipe import load_recipe, parse_recipe

SIZE = (100, 30)
SCRAPE_ID = "5c4a9e000002"


@pytest.fixture
def scrape(db_path: Path) -> SessionState:
    """A stored scrape with a strategy, a recipe, items, feedback and a candidate recipe."""
    events = at_fixed_times(
        SCRAPE_ID,
        scrape_started(),
        [*scrape_with_artifacts(), *refinement_of_price()],
        SessionEnded(status="completed"),
    )
    asyncio.run(store_events(db_path, events))
    return fold(events)


async def open_export(pilot: Pilot[Any], directory: Path) -> ExportScreen:
    """The export dialog of the session screen shown, as the session screen opens it."""
    app = pilot.app
    await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen))
    screen = app.screen
    assert isinstance(screen, SessionScreen)
    dialog = ExportScreen(session_exports(screen.store, screen.state), directory=directory)
    await app.push_screen(dialog)
    await wait_until(pilot, lambda: app.screen is dialog and dialog.query(OptionList))
    return dialog


async def export_kind(pilot: Pilot[Any], dialog: ExportScreen, index: int) -> None:
    """Highlight the kind at `index`, press Enter, wait for the dialog to close."""
    await pilot.press(*["down"] * index, "enter")
    await wait_until(pilot, lambda: pilot.app.screen is not dialog)


def toasts(messages: list[Message]) -> list[tuple[str, str]]:
    posted = {id(m): m for m in messages if isinstance(m, Notify)}
    return [(m.notification.title, m.notification.message) for m in posted.values()]


async def test_a_scrape_offers_every_kind_with_file_names(
    db_path: Path, scrape: SessionState, tmp_path: Path
) -> None:
    app = TuiAgentApp(db_path, open_session=SCRAPE_ID)
    async with app.run_test(size=SIZE) as pilot:
        dialog = await open_export(pilot, tmp_path)
        assert [c.key for c in dialog.choices] == ["session", "items-csv", "items-json", "recipe"]
        path = dialog.query_one(Input)
        assert path.value == "scrape-5c4a9e00.jsonl"
        await pilot.press("down")
        assert path.value == "scrape-5c4a9e00-items.csv"
        await pilot.press("down", "down")
        assert path.value == "scrape-5c4a9e00-recipe.json"
        path.value = "mine.json"  # a name typed stays when the kind changes
        await pilot.press("up")
        assert path.value == "mine.json"
        assert dialog.choice is not None and dialog.choice.key == "items-json"


async def test_the_session_is_written_as_its_stored_events(
    db_path: Path, scrape: SessionState, tmp_path: Path
) -> None:
    app = TuiAgentApp(db_path, open_session=SCRAPE_ID)
    messages: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        dialog = await open_export(pilot, tmp_path)
        await export_kind(pilot, dialog, 0)
        assert isinstance(app.screen, SessionScreen)
    written = tmp_path / "scrape-5c4a9e00.jsonl"
    async with await Store.open(db_path) as store:
        stored = await store.events(SCRAPE_ID)
    assert read_jsonl(written) == stored
    assert ("Exported", f"{len(stored)} events → {written}") in toasts(messages)


async def test_items_are_written_as_csv_and_json(
    db_path: Path, scrape: SessionState, tmp_path: Path
) -> None:
    app = TuiAgentApp(db_path, open_session=SCRAPE_ID)
    async with app.run_test(size=SIZE) as pilot:
        await export_kind(pilot, await open_export(pilot, tmp_path), 1)
        await export_kind(pilot, await open_export(pilot, tmp_path), 2)
    with (tmp_path / "scrape-5c4a9e00-items.csv").open(newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["title", "price", "url"]
    assert rows[1:] == [[i["title"], i["price"], i["url"]] for i in ITEMS]
    assert json.loads((tmp_path / "scrape-5c4a9e00-items.json").read_text()) == scrape.items


async def test_the_recipe_in_use_is_written_as_a_recipe_file(
    db_path: Path, scrape: SessionState, tmp_path: Path
) -> None:
    app = TuiAgentApp(db_path, open_session=SCRAPE_ID)
    async with app.run_test(size=SIZE) as pilot:
        await export_kind(pilot, await open_export(pilot, tmp_path), 3)
    recipe = load_recipe(tmp_path / "scrape-5c4a9e00-recipe.json")
    assert recipe.to_json() == parse_recipe(recipe_document()).to_json()
    assert scrape.recipe_in_use() == recipe_document()  # the candidate is not in use yet


async def test_an_existing_file_is_overwritten_only_once_confirmed(
    db_path: Path, scrape: SessionState, tmp_path: Path
) -> None:
    target = tmp_path / "scrape-5c4a9e00-items.json"
    target.write_text("keep me\n")
    app = TuiAgentApp(db_path, open_session=SCRAPE_ID)
    async with app.run_test(size=SIZE) as pilot:
        dialog = await open_export(pilot, tmp_path)
        await pilot.press("down", "down", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("n")
        await wait_until(pilot, lambda: app.screen is dialog)
        assert target.read_text() == "keep me\n"
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("ctrl+y")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen))
    assert json.loads(target.read_text()) == ITEMS


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("missing/folder/items.csv", "No such file or directory"),
        ("file.txt/items.csv", "Not a directory"),
        ("", "Give a file name."),
        (".", "is a folder: give a file name."),
    ],
)
async def test_a_path_that_cannot_be_written_is_said_in_the_dialog(
    db_path: Path, scrape: SessionState, tmp_path: Path, name: str, reason: str
) -> None:
    (tmp_path / "file.txt").write_text("")
    app = TuiAgentApp(db_path, open_session=SCRAPE_ID)
    async with app.run_test(size=SIZE) as pilot:
        dialog = await open_export(pilot, tmp_path)
        await pilot.press("down")
        dialog.query_one(Input).value = name
        dialog.query_one(Input).focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(dialog.error))
        assert reason in dialog.error
        assert app.screen is dialog
        await pilot.press("x")  # editing the name clears the error
        assert dialog.error == ""
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt", "sessions.db"]


async def test_only_what_a_session_has_is_offered(db_path: Path, tmp_path: Path) -> None:
    code = await record(db_path, started(), codeact_payloads()[:3])
    assert [c.key for c in session_exports(None, code)] == []
    async with await Store.open(db_path) as store:
        assert [c.key for c in session_exports(store, code)] == ["session"]
    app = TuiAgentApp(db_path)
    async with app.run_test(size=SIZE) as pilot:
        dialog = ExportScreen([], directory=tmp_path)
        await app.push_screen(dialog)
        assert "Nothing to export yet." in str(dialog.query_one("#export-nothing").render())
        await pilot.press("enter", "escape")
        await wait_until(pilot, lambda: app.screen is not dialog)
    assert list(tmp_path.iterdir()) == [db_path]


async def test_a_batch_exports_its_items(db_path: Path, tmp_path: Path) -> None:
    for events in batch_sessions("ba7c00000001", RECIPE_ITEMS):
        await store_events(db_path, events)
    app = TuiAgentApp(db_path, open_session="ba7c00000001")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, BatchScreen))
        screen = app.screen
        assert isinstance(screen, BatchScreen)
        choices = batch_exports(screen.store, screen.state)
        assert [c.key for c in choices] == ["session", "items-csv", "items-json"]
        dialog = ExportScreen(choices, title="Export the batch", directory=tmp_path)
        await app.push_screen(dialog)
        await export_kind(pilot, dialog, 1)
        assert app.screen is screen
    with (tmp_path / "batch-ba7c0000-items.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert [row["label"] for row in rows] == [label for label, _ in RECIPE_ITEMS]
    assert [row["item"] for row in rows] == ["1", "2", "3", "4", "5", "6"]
    assert rows[2]["state"] == "failed" and rows[2]["session"] == ""
    assert rows[2]["why"] == "url: cannot reach http://127.0.0.1:9/missing"
    assert rows[0]["session"] == child_id("ba7c00000001", 0)
    assert batch_exports(None, fold([])) == []


def test_csv_dots_nested_fields_and_writes_json_for_the_rest() -> None:
    items: list[Any] = [
        {"title": "Desk", "seller": {"name": "Ana"}, "tags": ["a", "b"], "ok": True},
        {"title": 'Say "hi",\nthen go', "price": 2.5, "seller": {}},
    ]
    assert csv_columns(items) == ["title", "seller.name", "tags", "ok", "price", "seller"]
    rows = list(csv.reader(items_csv(items).splitlines(keepends=True)))
    assert rows == [
        ["title", "seller.name", "tags", "ok", "price", "seller"],
        ["Desk", "Ana", '["a", "b"]', "true", "", ""],
        ['Say "hi",\nthen go', "", "", "", "2.5", "{}"],
    ]


def test_output_that_is_not_records_is_one_value_column() -> None:
    rows = list(csv.reader(items_csv(["text", 3, {"k": 1}, None]).splitlines()))
    assert rows == [["value"], ["text"], ["3"], ['{"k": 1}'], [""]]


class DialogHarness(App[None]):
    """The export dialog of the stored scrape alone (no session screen under it to change)."""

    def __init__(self, db_path: Path) -> None:
        super().__init__()
        self.db_path = db_path
        self.store: Store | None = None

    async def on_mount(self) -> None:
        self.store = await Store.open(self.db_path)
        state = await self.store.state(SCRAPE_ID)
        dialog = ExportScreen(session_exports(self.store, state), directory=Path("/home/ana"))
        await self.push_screen(dialog)

    async def on_unmount(self) -> None:
        if self.store is not None:
            await self.store.close()


@pytest.mark.parametrize("size", [(80, 24), (120, 36)])
def test_snapshot_export_dialog(
    snap_compare: Any, db_path: Path, scrape: SessionState, size: tuple[int, int]
) -> None:
    async def highlighted(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, ExportScreen))
        await pilot.press("down")

    assert snap_compare(DialogHarness(db_path), terminal_size=size, run_before=highlighted)
