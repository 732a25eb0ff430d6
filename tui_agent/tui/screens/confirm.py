"""A yes/no question in a modal; dismissed with True only on an explicit confirm.

A confirm that starts work or deletes takes `ctrl+y` (or Tab to its button, then Enter): no
sentence typed by mistake gives either. Letters only ever cancel.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

CONFIRM_KEY = "ctrl+y"
"""The key that says yes to a dialog that starts work or deletes (typing never gives it)."""


class ConfirmModal(ModalScreen[bool]):
    """Ask before doing something that cannot be undone. `ctrl+y` confirms; `n` / Escape
    cancel; focus starts on Cancel, so Enter cancels too."""

    BINDINGS = [
        Binding(CONFIRM_KEY, "confirm", "Yes", id="confirm.yes", tooltip="Confirm", priority=True),
        Binding("n,escape", "cancel", "No", id="confirm.no", tooltip="Cancel, change nothing"),
    ]

    def __init__(
        self,
        title: str,
        question: str,
        confirm_label: str = "Delete",
        *,
        buttons: tuple[str, str] | None = None,
    ) -> None:
        """`buttons`: the cancel and confirm buttons' labels (default: `Cancel (n)` and
        `confirm_label` with its key)."""
        super().__init__(classes="confirm-modal")
        self._title = title
        self._question = question
        self._buttons = buttons or ("Cancel (n)", f"{confirm_label} (^y)")

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = self._title
            yield Static(Content(self._question), classes="question")
            with Horizontal(classes="buttons"):
                cancel, confirm = self._buttons
                yield Button(cancel, id="cancel")
                yield Button(confirm, id="confirm", variant="error")

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()

    @on(Button.Pressed, "#confirm")
    def action_confirm(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(False)


class CancelRunModal(ConfirmModal):
    """Ask before cancelling a running agent: a second Escape or `ctrl+y` confirms, `n` keeps
    it."""

    BINDINGS = [
        Binding(
            f"escape,{CONFIRM_KEY}",
            "confirm",
            "Cancel it",
            id="cancel-run.yes",
            tooltip="Cancel the run",
            priority=True,
        ),
        Binding("n", "cancel", "Keep running", id="cancel-run.no", tooltip="Let it run on"),
    ]

    def __init__(self, what: str) -> None:
        super().__init__(
            "Cancel the running session?",
            f"{what}\nWhat was recorded so far is kept.\n"
            "Escape again (or ctrl+y) cancels it; n lets it run on.",
            buttons=("Keep running (n)", "Cancel it (esc)"),
        )


class EndConversationModal(CancelRunModal):
    """Ask before leaving a conversation that waits for the user: leaving ends it."""

    def __init__(self, what: str) -> None:
        ConfirmModal.__init__(
            self,
            "End the conversation?",
            f"{what}\nIt waits for your next message; leaving ends it (ctrl+g continues it"
            " later).\nEscape again (or ctrl+y) ends it; n stays.",
            buttons=("Stay (n)", "End it (esc)"),
        )


class QuitModal(ConfirmModal):
    """Ask before quitting while work runs: quitting cancels it (what was recorded is kept).
    A second ctrl+q (the app's quit key, seen by the app first) confirms too."""

    BINDINGS = [
        Binding(
            CONFIRM_KEY,
            "confirm",
            "Quit",
            id="quit.yes",
            tooltip="Quit and cancel the work",
            priority=True,
        ),
        Binding("n,escape", "cancel", "Stay", id="quit.no", tooltip="Let the work run on"),
    ]

    def __init__(self, work: list[str]) -> None:
        shown = "\n".join(f"• {line}" for line in work[:6])
        more = f"\n… and {len(work) - 6} more" if len(work) > 6 else ""
        super().__init__(
            "Quit with work running?",
            f"{shown}{more}\nQuitting cancels it; what was recorded so far is kept.\n"
            "ctrl+q again (or ctrl+y) quits; n or Escape stays.",
            buttons=("Stay (n)", "Quit (^q)"),
        )
