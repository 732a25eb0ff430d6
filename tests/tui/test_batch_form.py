"""Starting a batch from the new-session form: what is wrong is one line under its field and
starts nothing; a recipe batch over the demo shop runs in the app, its screen live."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from batch_factory import RECIPE
from session_factory import wait_until
from support.requirements import require_chromium
from textual.pilot import Pilot
from textual.widgets import Input, Select

from tui_agent.batch.plan import child_id
from tui_agent.config import Settings
from tui_agent.demo_site import DemoSite
from tui_agent.store import Store
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.batch.screen import BatchScreen
from tui_agent.tui.screens.home import HomeScreen
from tui_agent.tui.screens.new_session import KINDS, NewSessionModal


def app_for(tmp_path: Path, model: str | None = None) -> TuiAgentApp:
    db = tmp_path / "s.db"
    settings = Settings(db=db, workspace=tmp_path / "ws", sandbox="local", model=model)
    return TuiAgentApp(db, settings=settings)


async def open_batch_form(pilot: Pilot[Any], runs: str = "recipe") -> NewSessionModal:
    """`n`, then the last kind (batch) in the form's first select, then what it runs."""
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, HomeScreen))
    await pilot.press("n")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, NewSessionModal))
    modal = pilot.app.screen
    assert isinstance(modal, NewSessionModal)
    kinds = modal.query_one("#kind", Select)
    for _ in range(8):  # back past the code form's fields to the kind
        if modal.focused is kinds:
            break
        await pilot.press("shift+tab")
    assert modal.focused is kinds
    await pilot.press("enter", *["down"] * len(KINDS), "enter")
    await wait_until(pilot, lambda: modal.kind == "batch")
    source = modal.query_one("#batch-source", Input)
    await wait_until(pilot, lambda: modal.focused is source)
    if runs != "recipe":
        modal.query_one("#batch-of", Select).value = runs
        await wait_until(pilot, lambda: source.placeholder != "path/to/recipe.json")
        source.focus()
    return modal


async def test_what_is_wrong_is_said_under_its_field_and_nothing_starts(tmp_path: Path) -> None:
    urls = tmp_path / "urls.txt"
    urls.write_text("http://127.0.0.1:8765/panel\nnot a page\n")
    app = app_for(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        modal = await open_batch_form(pilot)
        await pilot.press("ctrl+s")
        assert modal.problem == "No recipe file given. Which recipe? Type its path."
        await pilot.press(*str(RECIPE), "ctrl+s")
        assert "No URLs file given" in modal.problem
        inputs = modal.query_one("#batch-inputs", Input)
        await wait_until(pilot, lambda: modal.focused is inputs)
        await pilot.press(*str(tmp_path / "missing.txt"), "ctrl+s")
        await wait_until(pilot, lambda: "Cannot read" in modal.problem)
        assert modal.problem == f"Cannot read {tmp_path / 'missing.txt'}: No such file or directory"
        inputs.value = str(urls)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: f"{urls} line 2" in modal.problem)
        assert app.screen is modal
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
    async with await Store.open(tmp_path / "s.db") as store:
        assert await store.list_sessions() == []


async def test_a_bad_row_and_an_eval_without_a_model_are_one_line(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"price": 10}\n{"price": \n')
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"task": "add 2 and 2", "check": "assert result == 4"}\n')
    app = app_for(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        modal = await open_batch_form(pilot, "task")
        assert modal.query_one("#batch-inputs").display
        await pilot.press(*"Add 10% tax to price")
        modal.query_one("#batch-inputs", Input).value = str(rows)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: f"{rows} line 2: not JSON" in modal.problem)
        modal.query_one("#batch-of", Select).value = "eval"
        await wait_until(pilot, lambda: not modal.query_one("#batch-inputs").display)
        modal.query_one("#batch-source", Input).value = str(tasks)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: "needs a model" in modal.problem)
        assert modal.problem == (
            "An eval batch needs a model: type one in the Model field (or set TUI_AGENT_MODEL)"
        )
        await wait_until(pilot, lambda: modal.focused is modal.query_one("#batch-model"))


async def test_a_recipe_batch_started_from_the_form_runs_live(tmp_path: Path) -> None:
    require_chromium()
    recipe = json.loads(RECIPE.read_text())
    recipe["recipe"]["config"] = {"maxItems": 2}  # short sessions, all of them real
    recipe_file = tmp_path / "panel.json"
    recipe_file.write_text(json.dumps(recipe))
    app = app_for(tmp_path)
    with DemoSite() as site:
        urls = tmp_path / "urls.txt"
        urls.write_text(
            f"{site.url('panel')}\nhttp://127.0.0.1:9/closed\n{site.url('panel', page=2)}\n"
        )
        async with app.run_test(size=(100, 30)) as pilot:
            modal = await open_batch_form(pilot)
            await pilot.press(*str(recipe_file), "tab", *str(urls), "tab")
            modal.query_one("#batch-max-in-flight", Input).value = "2"
            await pilot.press("ctrl+s")
            await wait_until(pilot, lambda: isinstance(app.screen, BatchScreen), timeout=30)
            screen = app.screen
            assert isinstance(screen, BatchScreen) and screen.mode == "live"
            await wait_until(pilot, lambda: screen.state.status != "running", timeout=120)
            batch = screen.batch_state
            assert screen.state.status == "partial"
            assert [batch.items[n].state for n in range(3)] == ["finished", "failed", "finished"]
            assert "cannot reach" in batch.items[1].line
            batch_id = screen.session_id
    async with await Store.open(tmp_path / "s.db") as store:
        children = {s.session_id: s for s in await store.list_sessions() if s.batch == batch_id}
    assert set(children) == {child_id(batch_id, 0), child_id(batch_id, 2)}
    assert all(child.item_count == 2 for child in children.values())


async def test_the_model_server_is_chosen_with_the_model(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"task": "add 2 and 2", "check": "assert result == 4"}\n')
    app = app_for(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        modal = await open_batch_form(pilot)
        api_base = modal.query_one("#batch-api-base", Input)
        assert not api_base.display  # a recipe calls no model
        modal.query_one("#batch-of", Select).value = "eval"
        await wait_until(pilot, lambda: api_base.display)
        modal.query_one("#batch-source", Input).value = str(tasks)
        modal.query_one("#batch-model", Input).value = "openai/m1"
        api_base.value = "http://127.0.0.1:0"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: "URL" in modal.problem)
        assert modal.problem == (
            "API base must be an http:// or https:// URL, e.g. http://localhost:11434"
        )
        assert modal.focused is api_base and app.screen is modal
        api_base.value = "127.0.0.1:9/v1"  # a bare host is read as the request forms read it
        hint = modal.query_one("#batch-model-hint")
        # the hint asks litellm, imported in a thread: slow on a loaded machine
        await wait_until(pilot, lambda: "at the API base below" in str(hint.render()), timeout=120)
        modal.form.values()
        assert api_base.value == "http://127.0.0.1:9/v1"
