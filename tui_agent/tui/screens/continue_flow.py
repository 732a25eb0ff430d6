"""Continuing a stored code or toolcode session, or forking it at a step, from the TUI.

`prepare_continuation` reads the session's events and prepares the session that continues it (in a
thread: the launch path may wait for a Docker engine), with a Conversation for the message
line and `ModalChoices` deciding while its state is restored: flagged runs (network, writes
outside the workspace) are run again only when the user says so, and a run that fails while
restoring asks: go on without it, start clean, or cancel. The app records the prepared Launch
(appended to the session, or a new one for a fork) and shows it live. A session that cannot be
continued is a notification.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from tui_agent.agents.approval import Approver
from tui_agent.agents.launch import Launch
from tui_agent.agents.launch.resume import continue_session
from tui_agent.agents.requests import REQUEST_CLASSES
from tui_agent.agents.step_loop import Conversation
from tui_agent.agents.step_loop.resume import FailureChoice, RestoreRun
from tui_agent.config import Settings
from tui_agent.errors import UserError
from tui_agent.events import OPEN_STATUSES, Event
from tui_agent.formatting import clipped
from tui_agent.store import Store
from tui_agent.terminal_text import visible
from tui_agent.tui.screens.approval import ModalApprover
from tui_agent.tui.screens.confirm import ConfirmModal


def conversational(kind: str) -> bool:
    """Whether sessions of `kind` are conversations (code, toolcode): they continue."""
    cls = REQUEST_CLASSES.get(kind)
    return cls is not None and cls.conversational


def continuable(kind: str, status: str) -> bool:
    """Whether a stored session of `kind` and `status` can be continued (it has ended)."""
    return conversational(kind) and status not in OPEN_STATUSES


class RestoreFailedModal(ModalScreen[FailureChoice]):
    """A run failed while the state was restored: go on without it, start clean, or cancel."""

    BINDINGS = [
        Binding(
            "ctrl+g", "choose('skip')", "Go on without it", id="restore-failed.skip", priority=True
        ),
        Binding(
            "ctrl+s", "choose('clean')", "Start clean", id="restore-failed.clean", priority=True
        ),
        Binding("c,escape", "choose('cancel')", "Cancel", id="restore-failed.cancel"),
    ]

    def __init__(self, run: RestoreRun, error: str) -> None:
        super().__init__(classes="confirm-modal")
        self.run = run
        self.error = error

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as dialog:
            dialog.border_title = f"Restoring the state: step {self.run.step} failed"
            text = visible(clipped(self.error.strip() or "it failed", 600))
            yield Static(
                Content.assemble(
                    f"The code of step {self.run.step} failed when run again:\n",
                    (text, "$text-error"),
                    "\nGo on without it, start with a clean sandbox, or cancel?",
                ),
                classes="question",
            )
            with Horizontal(classes="buttons"):
                yield Button("Go on without it (^g)", id="skip", variant="primary")
                yield Button("Start clean (^s)", id="clean")
                yield Button("Cancel (c)", id="cancel", variant="error")

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()  # Enter starts nothing

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.action_choose(str(event.button.id))

    def action_choose(self, choice: str) -> None:
        if choice in ("skip", "clean", "cancel"):
            self.dismiss(choice)  # type: ignore[arg-type]


def flagged_question(runs: Sequence[RestoreRun]) -> str:
    """Which runs are flagged and why, and the question."""
    lines = [f"step {run.step}: {run.flag}" for run in runs]
    return visible(
        "Restoring the state runs the session's code again. These runs may reach beyond the "
        "sandbox:\n  " + "\n  ".join(lines) + "\nRun them again too? (n leaves them out)"
    )


class ModalChoices:
    """The TUI's RestoreChoices: modals pushed on `app`, awaited by the restoring session."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app

    async def run_flagged(self, runs: Sequence[RestoreRun]) -> bool:
        modal = ConfirmModal("Run flagged code again?", flagged_question(runs), "Run them")
        return bool(await self._ask(modal))

    async def after_failure(self, run: RestoreRun, error: str) -> FailureChoice:
        return await self._ask(RestoreFailedModal(run, error)) or "cancel"

    async def _ask(self, modal: ModalScreen[Any]) -> Any:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        def settle(answer: Any) -> None:
            if not future.done():
                future.set_result(answer)

        self.app.push_screen(modal, settle)
        try:
            return await future
        except asyncio.CancelledError:  # the session was cancelled while the modal was open
            if self.app.screen is modal:
                modal.dismiss(None)
            raise


async def prepare_continuation(
    app: App[Any], store: Store, settings: Settings, session_id: str, fork_at: int | None = None
) -> Launch | None:
    """The session continuing `session_id` (a fork at step `fork_at`, when given), prepared;
    None (and a notification) when it cannot be."""
    try:
        events = await store.events(session_id)
        imported = await store.imported_from(session_id) is not None
        return await asyncio.to_thread(
            _prepare, events, settings, imported, fork_at, ModalChoices(app), ModalApprover(app)
        )
    except UserError as error:
        what = "fork" if fork_at is not None else "continue"
        app.notify(f"Cannot {what} {session_id}: {error}", severity="error", markup=False)
        return None


def _prepare(
    events: list[Event],
    settings: Settings,
    imported: bool,
    fork_at: int | None,
    choices: ModalChoices,
    approver: Approver,
) -> Launch:
    return continue_session(
        events,
        settings,
        message=None,
        choices=choices,
        conversation=Conversation(),
        approver=approver,
        fork_at=fork_at,
        imported=imported,
    )
