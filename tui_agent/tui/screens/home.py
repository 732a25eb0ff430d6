"""The home screen: the stored sessions, filterable; open, replay, continue or delete one.
A fork's title says which session and step it came from; a batch's row its counts, its item
sessions listed under it once expanded (space)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Input, Static

from tui_agent.agents.launch import Launch
from tui_agent.batch.inputs import BatchStart
from tui_agent.batch.state import BatchState
from tui_agent.config import Settings
from tui_agent.formatting import display_path
from tui_agent.session import SessionSummary
from tui_agent.store import Store, StoreError
from tui_agent.terminal_text import visible
from tui_agent.tui.commands import NewSessionCommands, SessionCommands
from tui_agent.tui.footer import Footer
from tui_agent.tui.messages import (
    BatchPrepared,
    ContinueRequested,
    SessionDeleted,
    SessionPrepared,
    SessionRequested,
)
from tui_agent.tui.screens.confirm import ConfirmModal
from tui_agent.tui.screens.continue_flow import continuable
from tui_agent.tui.screens.new_session import NewSessionModal
from tui_agent.tui.session_rows import Row, session_rows
from tui_agent.tui.widgets.sessions_table import SessionsTable

EMPTY_TEXT = """\
No sessions yet in {db}

Replay a recorded session:   tui-agent replay sessions/<file>.jsonl
Import one into this list:   tui-agent sessions import sessions/<file>.jsonl
Start a task or run a file:  press n
Run an agent:                tui-agent --help lists the commands
"""


def matches(summary: SessionSummary, query: str) -> bool:
    """Whether every word of `query` occurs in the session's id, kind, title, status or model."""
    haystack = " ".join(
        (summary.session_id, summary.kind, summary.title, summary.status, summary.model or "")
    ).casefold()
    return all(word in haystack for word in query.casefold().split())


class HomeScreen(Screen[None]):
    """Sessions, newest first. Enter opens, r replays, d deletes (after asking), / filters, ctrl+g
    continues (a key no typing gives: it starts a sandbox)."""

    AUTO_FOCUS = ""
    """Nothing is focused until the sessions are shown: then the table is (see `_show`), so
    Enter opens one; the filter takes focus only when asked for (/)."""
    COMMANDS = {NewSessionCommands, SessionCommands}
    BINDINGS = [
        Binding("n", "new", "New", id="home.new", tooltip="Start a session: a task or a file"),
        Binding("r", "replay", "Replay", id="home.replay", tooltip="Replay the session"),
        Binding("d", "delete", "Delete", id="home.delete", tooltip="Delete the session"),
        Binding(
            "ctrl+g",
            "continue_session",
            "Continue",
            id="home.continue",
            tooltip="Continue the session (code, toolcode): its sandbox state rebuilt, live",
        ),
        Binding("slash", "filter", "Filter", id="home.filter", tooltip="Filter the sessions"),
        Binding(
            "space",
            "expand",
            "Expand",
            id="home.expand",
            tooltip="List the batch's item sessions under it",
        ),
        Binding(
            "space",
            "collapse",
            "Collapse",
            id="home.collapse",
            tooltip="Fold the batch's item sessions away",
        ),
        Binding(
            "escape",
            "clear_filter",
            "Clear filter",
            id="home.clear_filter",
            tooltip="Show all sessions again",
            show=False,
        ),
        Binding(
            "ctrl+r",
            "reload",
            "Reload",
            id="home.reload",
            tooltip="Re-read the sessions",
            show=False,
        ),
    ]

    def __init__(self, store: Store, settings: Settings) -> None:
        super().__init__(classes="home-screen")
        self.store = store
        self.settings = settings
        self.summaries: list[SessionSummary] = []
        self.came_from: str | None = None
        """The session last opened from here: the cursor goes back to it."""
        self.expanded: set[str] = set()
        """The batches whose item sessions are listed under them."""
        self._batches: dict[str, tuple[int, BatchState]] = {}
        """Each batch's state, and the event count it was folded at."""

    def compose(self) -> ComposeResult:
        yield Static("tui-agent · sessions", id="home-title")
        yield Input(placeholder="filter: words in title, kind, status, id…", id="filter")
        yield SessionsTable(id="sessions")
        yield Static(id="empty")
        yield Footer()

    async def on_mount(self) -> None:
        self.query_one("#filter").display = False
        await self.action_reload()

    async def on_screen_resume(self) -> None:
        await self.action_reload()

    @property
    def table(self) -> SessionsTable:
        return self.query_one(SessionsTable)

    @property
    def query_text(self) -> str:
        return self.query_one("#filter", Input).value.strip()

    @property
    def shown_sessions(self) -> list[SessionSummary]:
        """The sessions the filter lets through."""
        query = self.query_text
        return [s for s in self.summaries if matches(s, query)] if query else self.summaries

    async def action_reload(self) -> None:
        """Re-read the sessions from the store."""
        self.summaries = await self.store.list_sessions()
        await self._fold_batches()
        self._show()

    async def _fold_batches(self) -> None:
        """Fold the state of each batch listed (again only when it recorded more events)."""
        folded: dict[str, tuple[int, BatchState]] = {}
        for summary in self.summaries:
            if summary.kind != "batch":
                continue
            known = self._batches.get(summary.session_id)
            if known is None or known[0] != summary.event_count:
                try:
                    state = await self.store.state(summary.session_id)
                except StoreError:  # deleted meanwhile
                    continue
                known = (summary.event_count, state.batch or BatchState())
            folded[summary.session_id] = known
        self._batches = folded

    @property
    def rows(self) -> list[Row]:
        """The rows listed: the filter's, batch items under their batch."""
        query = self.query_text
        batches = {batch_id: state for batch_id, (_, state) in self._batches.items()}
        keep = partial(matches, query=query) if query else None
        return session_rows(self.summaries, batches, self.expanded, keep)

    def _show(self) -> None:
        visible = self.rows
        self.table.show(visible, select=self.came_from)
        self.came_from = None
        empty = self.query_one("#empty", Static)
        self.table.display = bool(visible)
        empty.display = not visible
        if not self.summaries:
            empty.update(Content(EMPTY_TEXT.format(db=display_path(self.store.path))))
        elif not visible:
            empty.update(
                Content(f"No session matches '{self.query_text}'. Escape clears the filter.")
            )
        if visible and not self.query_one("#filter", Input).has_focus:
            self.table.focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("replay", "delete"):
            return self.table.selected_id is not None and bool(self.table.display)
        if action == "continue_session":
            summary = self.selected_summary
            return summary is not None and continuable(summary.kind, summary.status)
        if action == "clear_filter":
            return bool(self.query_one("#filter").display)
        if action in ("expand", "collapse"):
            row = self.table.selected_row if self.table.display and not self.query_text else None
            if row is None:
                return False
            if action == "expand":
                return row.counts is not None and not row.expanded
            return row.expanded or row.under is not None
        return True

    def action_expand(self) -> None:
        """List the highlighted batch's item sessions under it."""
        row = self.table.selected_row
        if row is not None and row.counts is not None:
            self.expanded.add(row.summary.session_id)
            self._show()
            self.refresh_bindings()

    def action_collapse(self) -> None:
        """Fold away the item sessions of the highlighted batch (or of the item's batch)."""
        row = self.table.selected_row
        if row is None:
            return
        batch_id = row.under or row.summary.session_id
        self.expanded.discard(batch_id)
        self.came_from = batch_id
        self._show()
        self.refresh_bindings()

    def action_filter(self) -> None:
        filter_input = self.query_one("#filter", Input)
        filter_input.display = True
        filter_input.focus()
        self.refresh_bindings()

    def action_clear_filter(self) -> None:
        filter_input = self.query_one("#filter", Input)
        filter_input.value = ""
        filter_input.display = False
        self._show()
        self.refresh_bindings()

    @on(Input.Changed, "#filter")
    def _filter_changed(self) -> None:
        self._show()

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self) -> None:
        if self.table.display:
            self.table.focus()

    @on(DataTable.RowSelected, "#sessions")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.post_message(SessionRequested(event.row_key.value, "stored"))

    @on(DataTable.RowHighlighted, "#sessions")
    def _row_highlighted(self) -> None:
        self.refresh_bindings()

    def action_new(self, kind: str | None = None) -> None:
        """Ask what to run (on the form of `kind`, or the last kind used); the form prepares
        the session (staying open with what was typed when it cannot) and the app records it."""

        def prepared(launch: Launch | BatchStart | None) -> None:
            if isinstance(launch, BatchStart):
                self.post_message(BatchPrepared(launch))
            elif launch is not None:
                self.post_message(SessionPrepared(launch))

        self.app.push_screen(NewSessionModal(self.settings, kind=kind), prepared)
        ready = getattr(self.app, "ready_sandbox", None)
        if ready is not None:
            ready()

    @property
    def selected_summary(self) -> SessionSummary | None:
        """The summary of the highlighted session (None: none shown)."""
        selected = self.table.selected_id if self.table.display else None
        return next((s for s in self.summaries if s.session_id == selected), None)

    def action_continue_session(self) -> None:
        """Continue the highlighted session live (the app prepares it; see continue_flow)."""
        summary = self.selected_summary
        if summary is not None and continuable(summary.kind, summary.status):
            self.notify("Continuing: preparing the session…")
            self.post_message(ContinueRequested(summary.session_id))

    def action_replay(self) -> None:
        if (session_id := self.table.selected_id) is not None:
            self.post_message(SessionRequested(session_id, "replay"))

    def action_delete(self) -> None:
        if (session_id := self.table.selected_id) is not None:
            self.confirm_delete(session_id)

    def confirm_delete(self, session_id: str) -> None:
        """Ask in a modal, then delete `session_id`."""
        summary = next(s for s in self.summaries if s.session_id == session_id)
        modal = ConfirmModal(
            "Delete session",
            visible(
                f"Delete '{summary.title}' ({session_id}) and all its events, items and "
                "feedback?\nThis cannot be undone."
            ),
        )

        async def confirmed(yes: bool | None) -> None:
            if yes:
                await self.delete_session(session_id)

        self.app.push_screen(modal, confirmed)

    async def delete_session(self, session_id: str) -> None:
        """Delete the session from the store and the list."""
        try:
            await self.store.delete(session_id)
        except StoreError as error:
            self.notify(str(error), severity="error", markup=False)
            return
        self.notify(f"Deleted session {session_id}.")
        self.post_message(SessionDeleted(session_id))
        await self.action_reload()


class HomeLater(Screen[None]):
    """The app's first screen, blank. A session the app opens as it starts is shown over it
    alone; the sessions list (`make_home`) is made only once this screen comes back on top,
    that session's screen left, so the session shows without building the list first."""

    def __init__(self, make_home: Callable[[], Screen[None]]) -> None:
        super().__init__(id="_default")
        self._make_home = make_home
        self._started = False

    async def on_screen_resume(self) -> None:
        """Show the sessions list when back on top (not as the app starts: it opens its
        first screen itself)."""
        if self._started and self.is_active:
            await self.app.push_screen(self._make_home())
        self._started = True
