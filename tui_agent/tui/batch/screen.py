"""The batch screen: a batch's progress (bar, rate, ETA, counts) over its items, each row
opening that item's own session.

Live, the app's worker drives the batch (batch/drive.py) and the recorder's events reach the
screen a frame at a time, as on the session screen; stored, it shows the fold of the batch's
events; replayed (batch/replay.py), the fold up to the replay's position. `f` shows
the failing items only (failed, or an eval answer that failed its check). Escape on a running
batch asks before cancelling it: the items in flight are cancelled, those stored stay.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import AwaitRemove
from textual.widgets import DataTable, Static

from tui_agent.batch.state import BatchState, ItemState
from tui_agent.errors import UserError
from tui_agent.events import OPEN_STATUSES, Event
from tui_agent.session import SessionState
from tui_agent.store import Store
from tui_agent.terminal_text import visible_event
from tui_agent.tui.batch.items import BatchItemsTable, failing
from tui_agent.tui.batch.progress import BatchProgress
from tui_agent.tui.export.choices import batch_exports
from tui_agent.tui.export.screen import ExportScreen
from tui_agent.tui.footer import Footer
from tui_agent.tui.messages import EventsReceived, SessionMode, SessionOpened, SessionRequested
from tui_agent.tui.screens.confirm import CancelRunModal
from tui_agent.tui.screens.session import FRAME, LiveRun, title_line
from tui_agent.tui.widgets.mounting import on_screen

WAITING = ("queued", "started", "retrying")
"""Item states whose session is not stored yet."""


def detail_text(item: ItemState) -> Text:
    """The highlighted item in full: its label and how it ended, and why (or that its session
    is stored once it ends)."""
    text = Text.assemble((f"#{item.item + 1} ", "bold"), item.label)
    if item.state in WAITING:
        text.append("  (its session is stored once it ends)", style="dim")
        return text
    ended = f"{item.state} ({item.status})" if item.status else item.state
    style = "bold red" if failing(item) else "green" if item.state == "finished" else "yellow"
    text.append(f"  {ended}", style=style)
    if item.passed is not None:
        text.append(
            " · passed its check" if item.passed else " · failed its check",
            style="green" if item.passed else "bold red",
        )
    if item.line:
        text.append(f": {item.line}", style="red" if failing(item) else "")
    return text


class BatchScreen(Screen[None]):
    """One batch: live (fed by its recorder), stored (folded from its events) or replayed."""

    BINDINGS = [
        Binding(
            "escape",
            "back",
            "Back",
            id="batch.back",
            tooltip="Back to the sessions list (on a running batch: asks, then cancels it)",
        ),
        Binding(
            "ctrl+c",
            "stop",
            "Stop",
            id="batch.stop",
            tooltip="Cancel the running batch (what its items recorded is kept)",
        ),
        Binding(
            "w",
            "export",
            "Export",
            id="batch.export",
            tooltip="Write the batch session (JSONL) or its items (CSV, JSON) to a file",
        ),
        Binding(
            "f",
            "failures(True)",
            "Failures only",
            id="batch.failures",
            tooltip="Show only the items that failed (or failed their check)",
        ),
        Binding(
            "f",
            "failures(False)",
            "All items",
            id="batch.all",
            tooltip="Show every item again",
        ),
    ]

    mode: SessionMode = "stored"

    def __init__(
        self,
        store: Store | None,
        state: SessionState,
        *,
        clock: Callable[[], float],
        live: LiveRun | None = None,
    ) -> None:
        super().__init__(classes="batch-screen")
        self.store = store
        self.state = state
        self.live = live
        if live is not None:
            self.mode = "live"
            live.recorder.listeners.append(self.post_event)
        self.failures_only = False
        self._clock = clock
        self._inbox: list[Event] = []
        self._frame_timer: Timer | None = None
        self._next_frame = 0.0
        self._ticker: Timer | None = None
        self._detail: Text | None = None

    @classmethod
    def live_batch(cls, store: Store, live: LiveRun, *, clock: Callable[[], float]) -> BatchScreen:
        """A screen fed by `live.recorder` (listening before its first event)."""
        return cls(store, SessionState(session_id=live.recorder.session_id), clock=clock, live=live)

    @property
    def session_id(self) -> str:
        return self.state.session_id

    @property
    def batch_state(self) -> BatchState:
        """The batch's items and totals (none before its first event)."""
        return self.state.batch or BatchState()

    @property
    def running(self) -> bool:
        """Whether this screen's batch is still being driven here."""
        return self.live is not None and self.live.running

    def compose(self) -> ComposeResult:
        yield Static(id="session-title")
        yield BatchProgress(id="batch-progress")
        yield BatchItemsTable(id="batch-items")
        yield Static(id="batch-detail")
        yield from self.compose_extra()
        yield Footer()

    def compose_extra(self) -> ComposeResult:
        """Widgets a subclass adds under the items."""
        yield from ()

    async def on_mount(self) -> None:
        await self.render_state()
        self.query_one(BatchItemsTable).focus()
        self.post_message(SessionOpened(self.session_id, self.mode))

    def post_event(self, event: Event, _state: SessionState | None = None) -> None:
        """A SessionRecorder listener: the events of one frame reach the screen together."""
        if self.is_mounted and not on_screen(self):
            self._close_feed()
            return
        self._inbox.append(event)
        if self._frame_timer is not None:
            return
        wait = self._next_frame - time.monotonic()
        if wait > 0:
            self._frame_timer = self.set_timer(wait, self._post_frame)
        else:
            self._post_frame()

    def _post_frame(self) -> None:
        self._frame_timer = None
        self._next_frame = time.monotonic() + FRAME
        events, self._inbox = self._inbox, []
        self.post_message(EventsReceived([visible_event(event) for event in events]))

    @on(EventsReceived)
    async def apply_events(self, message: EventsReceived) -> None:
        if not on_screen(self):
            return
        for event in message.events:
            self.state.apply(event)
        await self.render_state()

    def _close_feed(self) -> None:
        """Stop listening to the recorder and drop the frame on its way."""
        if self.live is not None and self.post_event in self.live.recorder.listeners:
            self.live.recorder.listeners.remove(self.post_event)
        if self._frame_timer is not None:
            self._frame_timer.stop()
            self._frame_timer = None
        self._inbox.clear()

    def remove(self) -> AwaitRemove:
        self._close_feed()
        return super().remove()

    def on_unmount(self) -> None:
        self._close_feed()

    async def render_state(self) -> None:
        """Bring the title, progress, items and detail line up to date with `self.state`."""
        if not on_screen(self):
            return
        state = self.state
        title = self.query_one("#session-title", Static)
        content = self.title_content()
        if title.content != content:
            title.update(content, layout=False)
        self.query_one(BatchItemsTable).show(
            self.batch_state, failures_only=self.failures_only, checked=self.checked
        )
        self._show_progress()
        self._show_detail()
        ticking = self.running and state.status in OPEN_STATUSES
        if ticking and self._ticker is None:
            self._ticker = self.set_interval(1.0, self._show_progress)
        elif not ticking and self._ticker is not None:
            self._ticker.stop()
            self._ticker = None

    def title_content(self) -> Content:
        state = self.state
        return title_line("batch", state.title, state.session_id, status=state.status)

    @property
    def checked(self) -> bool:
        """An eval batch: its items pass or fail a check."""
        return (self.state.params.get("plan") or {}).get("of") == "eval"

    @property
    def elapsed(self) -> float:
        state = self.state
        if not state.started_at:
            return 0.0
        if self.running and state.status in OPEN_STATUSES:
            return max(0.0, self._clock() - state.started_at)
        return state.duration

    def _show_progress(self) -> None:
        if not on_screen(self):
            return
        self.query_one(BatchProgress).show(
            self.batch_state,
            running=self.state.status in OPEN_STATUSES,
            checked=self.checked,
            elapsed=self.elapsed,
            engine=str(self.state.params.get("engine") or ""),
        )

    def _show_detail(self) -> None:
        """The line under the table: the highlighted item in full (up to three rows)."""
        item = self.highlighted
        if item is not None:
            text = detail_text(item)
        elif not self.state.event_count:
            text = Text(self.empty_text, style="dim")
        elif self.failures_only:
            text = Text("No item failed. f shows every item.", style="dim")
        else:
            text = Text("This batch has no items.", style="dim")
        if text != self._detail:
            self._detail = text
            self.query_one("#batch-detail", Static).update(text)

    @property
    def empty_text(self) -> str:
        if self.mode == "live":
            return "Starting the batch…" if self.running else "The batch did not start."
        return "This batch recorded no events."

    @property
    def highlighted(self) -> ItemState | None:
        index = self.query_one(BatchItemsTable).selected
        return self.batch_state.items.get(index) if index is not None else None

    def run_finished(self) -> None:
        """The worker driving the batch ended."""
        if on_screen(self):
            self._show_progress()
            self._show_detail()
            if self._ticker is not None:
                self._ticker.stop()
                self._ticker = None

    @on(DataTable.RowHighlighted, "#batch-items")
    def _item_highlighted(self) -> None:
        self._show_detail()

    @on(DataTable.RowSelected, "#batch-items")
    async def _item_selected(self, event: DataTable.RowSelected) -> None:
        """Open the item's session (once it is stored)."""
        event.stop()
        key = event.row_key.value
        item = self.batch_state.items.get(int(key)) if key is not None else None
        if item is not None:
            await self.open_item(item)

    async def open_item(self, item: ItemState) -> None:
        """Show item `item`'s session on the session screen, or say why there is none."""
        name = f"Item {item.item + 1}"
        if item.state in WAITING:
            self.notify(f"{name} has not ended: its session is stored once it does.")
            return
        if self.store is None:
            self.notify(f"{name}: open the batch from the sessions list to see its items.")
            return
        try:
            await self.store.resolve(item.child)
        except UserError:
            why = f": {item.line}" if item.line else ""
            self.notify(f"{name} has no session{why}", severity="warning", markup=False)
            return
        self.post_message(SessionRequested(item.child, "stored"))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "stop":  # shown while the batch runs (the app's own ctrl+c acts)
            return self.running
        if action == "failures":
            return parameters != (self.failures_only,)
        return True

    def action_failures(self, only: bool) -> None:
        """Show the failing items only, or every item again."""
        self.failures_only = only
        self.query_one(BatchItemsTable).show(
            self.batch_state, failures_only=only, checked=self.checked
        )
        self._show_detail()
        self.refresh_bindings()

    def action_export(self) -> None:
        """The export dialog: the batch session and its items."""
        self.app.push_screen(
            ExportScreen(batch_exports(self.store, self.state), title="Export the batch")
        )

    async def action_stop(self) -> None:
        """ctrl+c as the footer shows it: the app's stop (it sees the key first)."""
        await self.app.run_action("app.stop_step")

    def step_running(self) -> bool:
        """Whether ctrl+c has a batch to cancel."""
        return self.running

    def stop_step(self) -> str:
        """Cancel the running batch (its items' sessions end as cancelled)."""
        if self.live is not None and self.live.running:
            self.live.worker.cancel()
        return "Cancelled the batch; what its items recorded is kept."

    def action_back(self) -> None:
        """Back to the sessions list; a running batch is cancelled only once confirmed."""
        if not self.running:
            self.dismiss()
            return

        def answered(yes: bool | None) -> None:
            if yes and self.live is not None and self.live.running:
                self.live.worker.cancel()
                self.notify("Cancelled. Escape goes back to the sessions list.")

        self.app.push_screen(CancelRunModal(f"batch · {self.state.title}"), answered)
