"""Approval before a step's code runs: a modal with the code in an editable text area.

`ModalApprover` is the TUI's `Approver`: the agent (in the app's session worker) awaits a
future that the modal resolves when it is dismissed. The agent never sees Textual.
"""

from __future__ import annotations

import asyncio
from typing import Any

from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Static, TextArea

from tui_agent.agents.approval import Decision, decision_for
from tui_agent.terminal_text import visible
from tui_agent.tui.paths import styles_dir


class ApprovalModal(ModalScreen[Decision]):
    """Run, skip or edit the code of one step. Edits in the text area run as an `edit`.

    Typing lands in the editor, where the focus starts (Enter is a new line): the code runs
    only on ctrl+r or the Run button, and Escape skips it from anywhere.
    """

    CSS_PATH = styles_dir() / "approval.tcss"
    BINDINGS = [
        Binding(
            "ctrl+r",
            "run",
            "Run",
            id="approval.run",
            tooltip="Run the code as it stands in the editor (edited or not)",
            priority=True,
        ),
        Binding(
            "escape",
            "skip",
            "Skip",
            id="approval.skip",
            tooltip="Do not run this code; the model is told",
            priority=True,
        ),
        Binding(
            "ctrl+o",
            "restore",
            "Restore",
            id="approval.restore",
            tooltip="Put the model's code back in the editor",
            priority=True,
        ),
    ]

    def __init__(self, step: int, code: str) -> None:
        super().__init__(classes="approval-modal")
        self.step = step
        self.code = code
        self.shown = visible(code)
        """The code as the editor shows it (controls drawn); run as written unless edited."""

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = f"Run the code of step {self.step}?"
            yield Static(
                "The model wants to run this code. Edit it here if you like, then run it "
                "with ctrl+r, or skip it with esc.",
                classes="question",
            )
            yield TextArea.code_editor(self.shown, language="python", id="approval-code")
            with Horizontal(classes="buttons"):
                yield Button("Skip (esc)", id="skip", compact=True)
                yield Button("Run (ctrl+r)", id="run", variant="success", compact=True)
        yield Footer()

    def on_mount(self) -> None:
        self.editor.focus()

    @property
    def editor(self) -> TextArea:
        return self.query_one("#approval-code", TextArea)

    @on(Button.Pressed, "#run")
    def action_run(self) -> None:
        code = self.code if self.editor.text == self.shown else self.editor.text
        if not code.strip():
            self.notify("The code is empty: skip instead, or restore it.", severity="warning")
            return
        self.dismiss(decision_for(self.code, code))

    @on(Button.Pressed, "#skip")
    def action_skip(self) -> None:
        self.dismiss(Decision("skip"))

    def action_restore(self) -> None:
        self.editor.load_text(self.shown)


class ModalApprover:
    """Asks in an ApprovalModal pushed on `app`; the awaiting agent gets the decision."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app

    async def approve(self, step: int, code: str) -> Decision:
        future: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()

        def settle(decision: Decision | None) -> None:
            if not future.done():
                future.set_result(decision or Decision("skip"))

        modal = ApprovalModal(step, code)
        self.app.push_screen(modal, settle)
        try:
            return await future
        except asyncio.CancelledError:  # the session was cancelled while the modal was open
            if self.app.screen is modal:
                modal.dismiss(None)
            raise
