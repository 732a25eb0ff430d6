"""The approval modal: typing edits the code, it never runs it. The focus starts in the
editor, Enter is a new line there, and only ctrl+r (or the Run button) runs; Escape skips."""

from __future__ import annotations

from pathlib import Path

from session_factory import wait_until
from textual.widgets import TextArea

from tui_agent.agents.approval import Decision, decision_for
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.screens.approval import ApprovalModal
from tui_agent.tui.screens.home import HomeScreen

CODE = "print(1)"


async def test_typing_edits_the_code_and_only_ctrl_r_runs_it(db_path: Path) -> None:
    decisions: list[Decision | None] = []
    app = TuiAgentApp(db_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        app.push_screen(ApprovalModal(1, CODE), decisions.append)
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalModal))
        modal = app.screen
        assert isinstance(modal, ApprovalModal)
        await wait_until(pilot, lambda: modal.focused is not None)
        editor = modal.editor
        assert modal.focused is editor
        await pilot.press("enter", *"yes run it", "enter", "space", "y")
        await pilot.pause()
        assert decisions == [] and app.screen is modal
        assert editor.text == "\nyes run it\n y" + CODE
        editor.load_text("print(2)")
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: bool(decisions))
    assert decisions == [decision_for(CODE, "print(2)")] == [Decision("edit", "print(2)")]


async def test_escape_skips_from_the_editor(db_path: Path) -> None:
    decisions: list[Decision | None] = []
    app = TuiAgentApp(db_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        app.push_screen(ApprovalModal(1, CODE), decisions.append)
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalModal))
        modal = app.screen
        await wait_until(pilot, lambda: isinstance(modal.focused, TextArea))
        await pilot.press("x", "escape")
        await wait_until(pilot, lambda: bool(decisions))
    assert decisions == [Decision("skip")]
