"""Approval before an imported session's code runs: what will run and with which settings.

Refining an imported session, or accepting a refined version of one, runs code (or a recipe)
that came from a file. This modal shows it, read-only, with the settings it runs with (checked
as if typed: the network off, the page re-checked) and is dismissed with True only on an
explicit run (`ctrl+y`: typing never gives it); `n` and Escape cancel and nothing runs.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Static, TextArea

from tui_agent.agents.refine import RunPlan
from tui_agent.tui.paths import styles_dir
from tui_agent.tui.screens.confirm import CONFIRM_KEY


class ImportedRunModal(ModalScreen[bool]):
    """The plan of an imported session's run; `ctrl+y` runs it, `n` / Escape do not."""

    CSS_PATH = styles_dir() / "approval.tcss"
    BINDINGS = [
        Binding(
            CONFIRM_KEY,
            "run",
            "Run",
            id="imported-run.yes",
            tooltip="Run it as shown",
            priority=True,
        ),
        Binding("n,escape", "cancel", "Cancel", id="imported-run.no", tooltip="Run nothing"),
    ]

    def __init__(self, plan: RunPlan) -> None:
        super().__init__(classes="approval-modal")
        self.plan = plan

    def compose(self) -> ComposeResult:
        plan = self.plan
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = plan.title
            yield Static(
                Content("This session was imported from a file. It runs only if you say so:"),
                classes="question",
            )
            yield TextArea(
                plan.shown_content(),
                language=plan.language,
                read_only=True,
                show_line_numbers=True,
                id="imported-code",
            )
            yield Static(Content(plan.settings_text()), id="imported-settings")
            with Horizontal(classes="buttons"):
                yield Button("Cancel (n)", id="cancel", compact=True)
                yield Button("Run (^y)", id="run", variant="warning", compact=True)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()

    @on(Button.Pressed, "#run")
    def action_run(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(False)
