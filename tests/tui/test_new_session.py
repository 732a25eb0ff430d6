"""Starting sessions from the home screen: the form, its checks, real runs (exec and task in a
sandbox, scrape in Chromium)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from session_factory import wait_until
from support.requirements import require_chromium
from textual.pilot import Pilot
from textual.widgets import Input, Select, Static

from tui_agent.config import Settings
from tui_agent.demo_site import DemoSite
from tui_agent.store import Store
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.screens.home import HomeScreen
from tui_agent.tui.screens.new_session import KINDS, NewSessionModal, kind_of
from tui_agent.tui.screens.session import SessionScreen

NOWHERE = "http://127.0.0.1:1/v1"
PROGRAM = "def main(n):\n    return [{'n': i, 'odd': i % 2 or None} for i in range(n)]\n"


def app_for(tmp_path: Path) -> TuiAgentApp:
    db = tmp_path / "s.db"
    settings = Settings(db=db, workspace=tmp_path / "ws", sandbox="local")
    return TuiAgentApp(db, settings=settings)


async def open_form(pilot: Pilot[Any], kind: str = "exec") -> NewSessionModal:
    """Open the form with `n` and choose `kind` in its first select, by keys."""
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, HomeScreen))
    await pilot.press("n")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, NewSessionModal))
    modal = pilot.app.screen
    assert isinstance(modal, NewSessionModal)
    assert modal.kind == "code"
    downs = [kind_of(cls) for _, cls in KINDS].index(kind)
    if downs:
        kinds = modal.query_one("#kind", Select)
        for _ in range(4):  # back past the code form's first fields to the kind
            if modal.focused is kinds:
                break
            await pilot.press("shift+tab")
        await pilot.press("enter", *["down"] * downs, "enter")
        await wait_until(pilot, lambda: modal.kind == kind)
    first = {
        "code": "#code-task",
        "task": "#task-task",
        "toolcode": "#toolcode-task",
        "exec": "#exec-code",
        "scrape": "#scrape-url",
    }
    await wait_until(pilot, lambda: modal.focused is modal.query_one(first[kind]))
    return modal


async def test_n_runs_a_file_in_the_chosen_sandbox_and_records_it(tmp_path: Path) -> None:
    program = tmp_path / "prog.py"
    program.write_text(PROGRAM)
    app = app_for(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        modal = await open_form(pilot)
        assert modal.query_one("#exec-sandbox", Select).value == "local"
        await pilot.press(*str(program), "tab", "4", "ctrl+s")  # path, then main()'s argument
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen), timeout=30)
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await wait_until(pilot, lambda: screen.state.status != "running", timeout=30)
        assert screen.state.status == "completed"
        assert screen.state.items == [{"n": i, "odd": i % 2 or None} for i in range(4)]
    async with await Store.open(tmp_path / "s.db") as store:
        [summary] = await store.list_sessions()
        events = await store.events(summary.session_id)
    assert summary.kind == "exec" and summary.item_count == 4
    assert [e.type for e in events][2] == "execution_started"
    assert events[2].backend == "local" and not events[2].isolated


async def test_the_form_says_what_is_wrong_and_starts_nothing(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        modal = await open_form(pilot)
        await pilot.press("ctrl+s")
        assert "Which file?" in modal.problem
        await pilot.press(*str(tmp_path / "missing.py"), "ctrl+s")
        assert "No such file" in modal.problem
        assert isinstance(app.screen, NewSessionModal)
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
    async with await Store.open(tmp_path / "s.db") as store:
        assert await store.list_sessions() == []


async def test_a_code_task_without_a_model_says_so_at_the_model_field(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        modal = await open_form(pilot, "code")
        assert modal.query_one("#code-model", Input).value == ""
        await pilot.press("ctrl+s")
        assert "What should the agent do?" in modal.problem
        await pilot.press(*"add 2 and 2", "ctrl+s")
        await wait_until(pilot, lambda: "Model field" in modal.problem)
        assert app.screen is modal  # kept open, with what was typed
        # the field takes the focus once the error is shown (Textual focuses on its next turn)
        await wait_until(pilot, lambda: modal.focused is modal.query_one("#code-model"))
        assert modal.query_one("#code-task", Input).value == "add 2 and 2"
        assert "TUI_AGENT_MODEL or" not in modal.problem.replace("(or set TUI_AGENT_MODEL)", "")
    async with await Store.open(tmp_path / "s.db") as store:
        assert await store.list_sessions() == []


async def test_the_model_field_is_prefilled_and_names_the_key_it_needs(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    db = tmp_path / "s.db"
    settings = Settings(db=db, workspace=tmp_path / "ws", sandbox="local", model="gpt-4o-mini")
    app = TuiAgentApp(db, settings=settings)
    async with app.run_test(size=(100, 30)) as pilot:
        modal = await open_form(pilot, "code")
        assert modal.query_one("#code-model", Input).value == "gpt-4o-mini"
        hint = modal.query_one("#code-model-hint", Static)
        await wait_until(pilot, lambda: "OPENAI_API_KEY" in str(hint.content), timeout=120)
        assert "not set" in str(hint.content)


async def test_an_unreachable_page_keeps_the_form_and_a_bare_host_gets_http(
    tmp_path: Path,
) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        modal = await open_form(pilot, "scrape")
        await pilot.press("ctrl+s")
        assert "Which page?" in modal.problem
        await pilot.press(*"127.0.0.1:9/list", "tab", *"Extract 3 items", "ctrl+s")
        url = modal.query_one("#scrape-url", Input)
        await wait_until(pilot, lambda: "cannot reach" in modal.problem.lower())
        assert url.value == "http://127.0.0.1:9/list"
        assert app.screen is modal
        await wait_until(pilot, lambda: modal.focused is url)
        assert modal.query_one("#scrape-task", Input).value == "Extract 3 items"
        # the cursor waits at the end, nothing selected: the next key edits, never erases
        assert url.selection.is_empty and url.cursor_position == len(url.value)
        await pilot.press("0")
        assert url.value == "http://127.0.0.1:9/list0"


async def test_the_form_opens_on_the_last_kind_started_and_starts_within_80x24(
    tmp_path: Path,
) -> None:
    program = tmp_path / "prog.py"
    program.write_text("def main():\n    return [{'who': context['who']}]\n")
    context = tmp_path / "ctx.json"
    context.write_text('{"who": "Ana"}')
    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        modal = await open_form(pilot, "exec")
        start = modal.query_one("#start")
        assert start.region.bottom <= 24 and start.region.height > 0  # never below the fold
        await pilot.press(*str(program))
        modal.query_one("#exec-context", Input).value = str(context)
        modal.query_one("#exec-agent-type", Select).value = "transformer"
        modal.query_one("#exec-args", Input).value = ""
        await pilot.click("#start")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen), timeout=30)
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await wait_until(pilot, lambda: screen.state.status != "running", timeout=30)
        assert screen.state.items == [{"who": "Ana"}]
        assert screen.state.agent_type == "transformer"
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.screen, NewSessionModal))
        assert app.screen.kind == "exec"


async def test_n_scrapes_a_list_page_with_the_offline_planner(tmp_path: Path) -> None:
    require_chromium()
    app = app_for(tmp_path)
    with DemoSite() as site:
        async with app.run_test(size=(120, 36)) as pilot:
            modal = await open_form(pilot, "scrape")
            assert not modal.form.query("#scrape-sandbox")  # a scrape runs no code of its own
            await pilot.press("ctrl+s")
            assert "Which page?" in modal.problem
            modal.query_one("#scrape-task", Input).value = "Extract 3 items"
            modal.query_one("#scrape-planner", Select).value = "offline"
            modal.query_one("#scrape-url", Input).focus()
            await pilot.press(*site.url("panel"), "ctrl+s")
            await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen), timeout=30)
            screen = app.screen
            assert isinstance(screen, SessionScreen)
            await wait_until(pilot, lambda: screen.state.status != "running", timeout=90)
            assert screen.state.status == "completed", screen.state.errors
            truth = site.ground_truth("panel")[:3]
            assert [item["title"] for item in screen.state.items] == [r["title"] for r in truth]
    async with await Store.open(tmp_path / "s.db") as store:
        [summary] = await store.list_sessions()
    assert (summary.kind, summary.item_count) == ("scrape", 3)


async def test_the_api_base_field_is_prefilled_checked_and_given_http(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    db = tmp_path / "s.db"
    settings = Settings(
        db=db, workspace=tmp_path / "ws", sandbox="local", model="openai/m", api_base=NOWHERE
    )
    app = TuiAgentApp(db, settings=settings)
    async with app.run_test(size=(100, 30)) as pilot:
        modal = await open_form(pilot, "code")
        field = modal.query_one("#code-api-base", Input)
        assert field.value == NOWHERE  # the setting (--api-base, TUI_AGENT_API_BASE, config)
        await wait_until(pilot, lambda: "API base below" in hint_of(modal, "code"), timeout=120)
        field.value = "ftp://127.0.0.1:1"
        await pilot.press(*"add 2 and 2", "ctrl+s")
        await wait_until(pilot, lambda: modal.focused is field)
        assert modal.problem == (
            "API base must be an http:// or https:// URL, e.g. http://localhost:11434"
        )
        assert field.selection.is_empty and field.cursor_position == len(field.value)
        await pilot.press("backspace", "2")
        assert field.value == "ftp://127.0.0.1:2"
        field.value = "127.0.0.1:1/v1"  # a bare host gets http://, as the page URL does
        modal.query_one("#code-task", Input).value = ""
        await pilot.press("ctrl+s")
        assert "What should the agent do?" in modal.problem
        assert field.value == "http://127.0.0.1:1/v1"
        field.value = ""  # emptied: the provider's own server, said by the model's hint
        await wait_until(pilot, lambda: "openai: needs" in hint_of(modal, "code"), timeout=30)
    async with await Store.open(db) as store:
        assert await store.list_sessions() == []


def hint_of(modal: NewSessionModal, kind: str) -> str:
    return str(modal.query_one(f"#{kind}-model-hint", Static).content)
