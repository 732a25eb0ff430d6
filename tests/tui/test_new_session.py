"""Starting sessions from the home screen: the form, its checks, real runs (exec and task in a
sandbox, scrape in Chromium)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from session_factory import wait_until
from support.requirements import require_chromium
from textual.message import Message
from textual.notifications import Notify
from textual.pilot import Pilot
from textual.widgets import Input, Select, Static

from tui_agent.config import Settings
from tui_agent.demo_site import DemoSite
from tui_agent.store import Store
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.screens.home import HomeScreen
from tui_agent.tui.screens.new_session import KINDS, NewSessionModal
from tui_agent.tui.screens.session import SessionScreen

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
    downs = [value for _, value in KINDS].index(kind)
    if downs:
        await pilot.press("shift+tab", "enter", *["down"] * downs, "enter")
        await wait_until(pilot, lambda: modal.kind == kind)
    first = {"code": "#task", "task": "#task-prompt", "exec": "#path", "scrape": "#scrape-url"}
    await wait_until(pilot, lambda: modal.focused is modal.query_one(first[kind]))
    return modal


async def test_n_runs_a_file_in_the_chosen_sandbox_and_records_it(tmp_path: Path) -> None:
    program = tmp_path / "prog.py"
    program.write_text(PROGRAM)
    app = app_for(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        modal = await open_form(pilot)
        assert modal.query_one("#sandbox", Select).value == "local"
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
        problem = modal.query_one("#problem", Static)
        assert "Which file?" in str(problem.render())
        await pilot.press(*str(tmp_path / "missing.py"), "ctrl+s")
        assert "Cannot read" in str(problem.render())
        assert isinstance(app.screen, NewSessionModal)
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
    async with await Store.open(tmp_path / "s.db") as store:
        assert await store.list_sessions() == []


async def test_a_code_task_needs_a_model_and_says_so(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    messages: list[Message] = []
    async with app.run_test(size=(100, 30), message_hook=messages.append) as pilot:
        modal = await open_form(pilot, "code")
        await pilot.press("ctrl+s")
        assert "What should the agent do?" in str(modal.query_one("#problem", Static).render())
        await pilot.press(*"add 2 and 2", "ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))

        def said_no_model() -> bool:
            notices = [m.notification.message for m in messages if isinstance(m, Notify)]
            return any("no model" in text for text in notices)

        await wait_until(pilot, said_no_model)
    async with await Store.open(tmp_path / "s.db") as store:
        assert await store.list_sessions() == []


async def test_n_scrapes_a_list_page_with_the_offline_planner(tmp_path: Path) -> None:
    require_chromium()
    app = app_for(tmp_path)
    with DemoSite() as site:
        async with app.run_test(size=(120, 36)) as pilot:
            modal = await open_form(pilot, "scrape")
            assert not modal.query_one("#sandbox-field").display
            await pilot.press("ctrl+s")
            assert "The URL must start" in str(modal.query_one("#problem", Static).render())
            modal.query_one("#scrape-task", Input).value = "Extract 3 items"
            modal.query_one("#planner", Select).value = "offline"
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
