"""The session screen: stream pane, items table and status line over one SessionState.

Live, the app's worker runs a SessionRecorder whose listener hands each event here; the events
of one frame reach the screen as one `EventsReceived`, so the widgets catch up at most once
per FRAME however fast the agent goes. A stored session is shown as `fold(events)`. What a
screen shows is always a fold of display copies (`visible_event`: a control in a session's
text is drawn, never sent to the terminal), so live it folds the events into a state of its
own rather than show the recorder's. Feedback collected on the items table is recorded as one
FeedbackSubmitted event through a SessionRecorder; ctrl+r then refines the session with it and
`d` reviews the candidate (the refine flow, in refine_flow.py). Keys that start model, browser
or sandbox work are ctrl keys: no sentence typed into the wrong place gives them.
Escape on a running session asks before cancelling it; `p` shows the strategy and recipe.

A live code or toolcode session is a conversation: its message line (widgets/message_line.py)
says the user's messages to it (`Conversation.say`), Escape on a run stops that run only (the
session then waits for the next message), and leaving a waiting session ends the conversation
(it then records its end as usual). On a stored one, ctrl+g continues it and ctrl+f forks it at
the step under the cursor (screens/continue_flow.py).

A screen listens to the recorders of its session itself (the live one, and those that append
feedback, refinements and decisions) and closes its feeds as it starts to go: it stops
listening and cancels its workers (a refinement records that it was cancelled), so nothing
updates it once it is leaving; what was already on its way stops at the mount guard
(widgets/mounting.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.timer import Timer
from textual.widget import AwaitRemove
from textual.widgets import Static
from textual.worker import Worker

from tui_agent.agents.requests import RequestError
from tui_agent.agents.step_loop import Conversation
from tui_agent.analysis.shapes import FieldDefinition, FieldFeedback
from tui_agent.events import Artifact, Event, FeedbackSubmitted
from tui_agent.formatting import clipped
from tui_agent.recorder import SessionRecorder
from tui_agent.session import SessionState
from tui_agent.session_questions import candidate_awaiting_decision
from tui_agent.store import Store, StoreError
from tui_agent.terminal_text import visible, visible_event
from tui_agent.tui.current_logic import current_logic
from tui_agent.tui.export.choices import session_exports
from tui_agent.tui.export.screen import ExportScreen
from tui_agent.tui.footer import Footer
from tui_agent.tui.messages import (
    ContinueRequested,
    EventsReceived,
    FeedbackRecorded,
    LiveSessionCancelled,
    SessionMode,
    SessionOpened,
    SessionPrepared,
)
from tui_agent.tui.retry import RETRY_KEY, close_circuit, relaunch, retryable
from tui_agent.tui.screens.confirm import CancelRunModal, EndConversationModal
from tui_agent.tui.screens.continue_flow import continuable
from tui_agent.tui.screens.feedback import FeedbackModal, FeedbackResult
from tui_agent.tui.screens.image import ImageScreen
from tui_agent.tui.screens.pinned import PINNED, PinnedScreen, pinned_artifacts
from tui_agent.tui.screens.refine_flow import REFINE_WORKERS, RefineFlow, latest_feedback
from tui_agent.tui.widgets.context_panel import ContextPanel
from tui_agent.tui.widgets.files_view import ImagePreview, load_image
from tui_agent.tui.widgets.items_table import ItemsTable
from tui_agent.tui.widgets.message_line import MessageInput, MessageLine
from tui_agent.tui.widgets.mounting import on_screen
from tui_agent.tui.widgets.status_line import StatusLine, status_content
from tui_agent.tui.widgets.step_card import StepCard
from tui_agent.tui.widgets.stream_pane import StreamPane


@dataclass
class LiveRun:
    """The recorder recording a live session and the worker driving it; the user's side of
    the conversation when the session is one."""

    recorder: SessionRecorder
    worker: Worker[SessionState]
    conversation: Conversation | None = None

    @property
    def running(self) -> bool:
        return not self.worker.is_finished


FRAME = 1 / 6
"""Shortest time between two renders of a live session: the events of one frame are shown
together (a reader follows no faster, and the agent shares this process)."""
QUIET_STATUSES = ("running", "waiting", "completed")
"""Statuses the title line does not repeat (the status line shows them)."""


def title_line(
    kind: str, title: str, session_id: str, prefix: str = "", status: str = "running"
) -> Content:
    """`kind · title  id` for the top line of a session screen (the title is not markup),
    with `● cancelled` (or how else it ended) when it did not complete."""
    head = " · ".join(part for part in (prefix, kind, clipped(title, 200)) if part) or "session"
    shown_id = visible(session_id)  # the state's text is visible already; its id is a key
    parts: list[str | Content | tuple[str, str]] = [(head, "bold"), "  ", (shown_id, "dim")]
    if status not in QUIET_STATUSES:
        parts += ["  ", status_content(status)]
    return Content.assemble(*parts)


class SessionScreen(RefineFlow):
    """One session: live (fed by its recorder) or stored (folded from its events)."""

    BINDINGS = [
        Binding(
            "tab",
            "app.focus_next",
            "Pane",
            id="session.next-pane",
            tooltip="Move between the stream pane and the items table",
        ),
        Binding(
            "escape",
            "back",
            "Back",
            id="session.back",
            tooltip="Back to the sessions list (on a running agent: asks, then cancels it)",
        ),
        Binding(
            "s",
            "submit_feedback",
            "Submit feedback",
            id="session.submit_feedback",
            tooltip="Record the feedback collected so far as one event",
        ),
        Binding(
            "ctrl+r",
            "refine",
            "Refine",
            id="session.refine",
            tooltip="Let the agent fix the fields of the last feedback (attempts stream here)",
        ),
        Binding(
            "d",
            "review",
            "Review",
            id="session.review",
            tooltip="Show the diff of the version waiting for your decision: accept or reject",
        ),
        Binding(
            "ctrl+c",
            "stop",
            "Stop",
            id="session.interrupt",
            tooltip="Stop the current run (a conversation then waits for your next message)",
        ),
        Binding(
            "ctrl+g",
            "continue_session",
            "Continue",
            id="session.continue",
            tooltip="Continue this session: its sandbox state rebuilt, then a new message",
        ),
        Binding(
            "ctrl+f",
            "fork",
            "Fork here",
            id="session.fork",
            tooltip="A new session holding the turns up to the step under the cursor",
        ),
        Binding(
            RETRY_KEY,
            "retry",
            "Retry",
            id="session.retry",
            tooltip="Start the same request again as a new session (its model server retried at"
            " once)",
        ),
        Binding(
            "w",
            "export",
            "Export",
            id="session.export",
            tooltip="Write the session (JSONL), its items (CSV, JSON) or its recipe to a file",
        ),
        Binding(
            "p",
            "pinned",
            "Plan",
            id="session.pinned",
            tooltip="The strategy and the recipe in use, whole",
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
        super().__init__(classes="session-screen")
        self.store = store
        self.state = state
        self.live = live
        if live is not None:
            self.mode = "live"
        self._clock = clock
        self._pending: list[FieldFeedback] = []
        self._items_key: tuple[int, int, int] | None = None
        self._bindings_key: tuple[object, ...] | None = None
        self._inbox: list[Event] = []
        self._frame_timer: Timer | None = None
        self._next_frame = 0.0
        self.shown_seq = 0
        """The `seq` of the last event the widgets show (a frame may still be on its way)."""
        self._feeds: list[SessionRecorder] = []
        """The recorders this screen listens to, until it closes its feeds."""
        if live is not None:
            self._listen(live.recorder)

    @classmethod
    def live_session(
        cls, store: Store, live: LiveRun, *, clock: Callable[[], float]
    ) -> SessionScreen:
        """A screen fed by `live.recorder` (it listens from now on: before the recorder's first
        event)."""
        return cls(store, SessionState(session_id=live.recorder.session_id), clock=clock, live=live)

    @property
    def session_id(self) -> str:
        return self.state.session_id

    @property
    def pending_feedback(self) -> list[FieldFeedback]:
        """Feedback collected in the modal and not yet recorded."""
        return list(self._pending)

    def compose(self) -> ComposeResult:
        yield Static(id="session-title")
        yield StatusLine(self._clock, id="status")
        with Vertical(id="session-body"):
            yield StreamPane(self.empty_text, id="stream")
            yield ItemsTable(id="items")
            yield ContextPanel(id="context-panel")
        if self.conversation is not None:
            yield MessageLine(id="message-line")
        yield from self.compose_extra()
        yield Footer()

    def compose_extra(self) -> ComposeResult:
        """Widgets a subclass adds under the body."""
        yield from ()

    @property
    def conversation(self) -> Conversation | None:
        """The user's side of this live session's conversation (None: it is not one)."""
        return self.live.conversation if self.live is not None else None

    @property
    def empty_text(self) -> str:
        if self.mode == "live":
            return "Waiting for the agent's first step…"
        return "This session recorded no steps."

    async def on_mount(self) -> None:
        self.query_one("#items").display = False
        self.query_one("#context-panel").display = False
        await self.render_state()
        conversation = self.conversation
        if conversation is not None:
            conversation.listeners.append(self._conversation_changed)
            self.call_after_refresh(self._show_conversation)  # once on screen (on_screen)
            self.query_one(MessageInput).focus()
        else:
            self.query_one(StreamPane).focus()
        self.post_message(SessionOpened(self.session_id, self.mode))

    def _listen(self, recorder: SessionRecorder) -> SessionRecorder:
        """Show what `recorder` records (until this screen closes its feeds)."""
        recorder.listeners.append(self.post_event)
        self._feeds.append(recorder)
        return recorder

    def _close_feeds(self) -> None:
        """Stop everything that updates this screen: stop listening to its recorders, drop
        the frame on its way and cancel the workers it runs (refinements, decisions)."""
        for recorder in self._feeds:
            recorder.listeners.remove(self.post_event)
        self._feeds.clear()
        conversation = self.conversation
        if conversation is not None and self._conversation_changed in conversation.listeners:
            conversation.listeners.remove(self._conversation_changed)
        if self._frame_timer is not None:
            self._frame_timer.stop()
            self._frame_timer = None
        self._inbox.clear()
        self.workers.cancel_node(self)

    def remove(self) -> AwaitRemove:
        """Go (popped or dismissed): the feeds close before any widget is removed."""
        self._close_feeds()
        return super().remove()

    def on_unmount(self) -> None:
        self._close_feeds()

    def post_event(self, event: Event, _state: SessionState | None = None) -> None:
        """A SessionRecorder listener: one recorded event (the recorder's state is not shown).

        The events are held until the next frame is due, then posted as one EventsReceived.
        Once the screen is leaving (the app closes), the first event closes its feeds.
        """
        if self.is_mounted and not on_screen(self):
            self._close_feeds()
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
        """Fold the frame's events into this screen's state and show it."""
        if not on_screen(self):  # a frame posted before the screen started to go
            return
        for event in message.events:
            self.state.apply(event)
        with self.app.batch_update():  # one screen update for the whole frame
            await self.render_state()

    async def render_state(self) -> None:
        """Bring every widget up to date with `self.state` (nothing once the screen is
        leaving, also when it starts to while the cards are brought up to date)."""
        if not on_screen(self):
            return
        state = self.state
        self.shown_seq = state.last_seq
        title = self.query_one("#session-title", Static)
        content = self.title_content()
        if title.content != content:
            title.update(content, layout=False)  # one row, whatever it says
        await self.query_one(StreamPane).sync(state)
        if not on_screen(self):
            return
        self._show_items(state)
        self._show_context(state)
        self.refresh_status()

    def title_content(self) -> Content:
        state = self.state
        return title_line(state.kind, state.title, state.session_id, status=state.status)

    def refresh_status(self) -> None:
        self.query_one(StatusLine).show(
            self.state,
            pending_feedback=len(self._pending),
            live=self.running,
        )
        self._refresh_bindings_on_change()

    def run_finished(self) -> None:
        """The live agent's worker ended: feedback and refinement keys open up."""
        if on_screen(self):  # not while the screen goes or the app closes
            self.refresh_status()
            if self.conversation is not None:
                self._show_conversation()

    def _refresh_bindings_on_change(self) -> None:
        """Refresh the footer only when what the bindings depend on changed (a footer
        rebuilt on every event costs the agent its time)."""
        stream = self.query_one(StreamPane)
        key = (
            len(self._pending),
            self.recordable,
            self.refining,
            candidate_awaiting_decision(self.state),
            bool(latest_feedback(self.state)),
            bool(self._pinned()),
            self.running,
            stream.bindings_key(),
            self.conversation is not None and self.conversation.busy,
        )
        if key != self._bindings_key:
            self._bindings_key = key
            self.refresh_bindings()

    @property
    def running(self) -> bool:
        """Whether this screen's agent is still running."""
        return self.live is not None and self.live.running

    def _pinned(self) -> list[Artifact]:
        state = self.state
        return pinned_artifacts({name: state.artifact(name) for name in PINNED})

    def _show_items(self, state: SessionState) -> None:
        key = (id(state.items), len(state.items), id(state.analysis))
        if key == self._items_key:
            return
        self._items_key = key
        table = self.query_one(ItemsTable)
        table.display = bool(state.items) or state.analysis is not None
        if table.display:
            table.update_items(list(state.items), state.analysis)

    def _show_context(self, state: SessionState) -> None:
        """A task session's context, before and after each task or node."""
        if state.kind != "task":
            return
        panel = self.query_one(ContextPanel)
        panel.display = True
        panel.show(state.test_context.get("context") or {}, state.task_results)

    @property
    def recordable(self) -> bool:
        """Whether events can be appended now (a stored session, or a live one that ended)."""
        return self.store is not None and self.mode != "replay" and not self.running

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "submit_feedback":
            return bool(self._pending)
        if action == "refine":
            wanted = bool(self._pending or latest_feedback(self.state))
            return wanted and self.recordable and not self.refining
        if action == "review":
            awaiting = candidate_awaiting_decision(self.state) is not None
            return awaiting and self.recordable and not self.refining
        if action == "pinned":
            return bool(self._pinned())
        if action == "retry":
            return self.recordable and retryable(self.state)
        if action == "stop":  # shown while something runs (the app's own ctrl+c acts)
            return self.step_running()
        if action == "continue_session":
            return self.continuable
        if action == "fork":
            return self.continuable and self._cursor_step() is not None
        return True

    def action_back(self) -> None:
        """Back to the sessions list; a running agent is cancelled only once confirmed. In a
        conversation, Escape on a run stops the run only; leaving a waiting one (once
        confirmed) ends the conversation."""
        conversation = self.conversation
        if conversation is not None and conversation.busy:
            self.action_interrupt()
            return
        if not self.running:
            self.dismiss()
            return
        state = self.state
        what = f"{state.kind} · {state.title}" if state.title else "The agent is still running."
        waiting = state.status == "waiting"

        def answered(yes: bool | None) -> None:
            if not yes:
                return
            if conversation is not None and waiting:
                conversation.end()  # it waits for you: it ends as usual, no need to cancel
                self.dismiss()
            else:
                self.cancel_run()

        modal = EndConversationModal(what) if waiting else CancelRunModal(what)
        self.app.push_screen(modal, answered)

    def step_running(self) -> bool:
        """Whether ctrl+c has something to stop: a run (not a conversation waiting for a
        message), a refinement or a re-run."""
        conversation = self.conversation
        if conversation is not None and self.running:
            return conversation.busy or self.refining
        return self.running or self.refining

    def stop_step(self) -> str:
        """Stop the conversation's run (it then waits), else the live agent (it ends as
        cancelled), else the refinement or re-run going on (recorded as cancelled)."""
        conversation = self.conversation
        if conversation is not None and conversation.busy and conversation.interrupt():
            return "Stopped the run. The session waits for your next message."
        if self.running and conversation is None:
            self.cancel_run()
            return "Cancelled the run; what it recorded is kept."
        self.workers.cancel_group(self, REFINE_WORKERS)
        return "Stopped the refinement; what it recorded is kept."

    async def action_stop(self) -> None:
        """ctrl+c as the footer shows it: the app's stop (it sees the key first)."""
        await self.app.run_action("app.stop_step")

    def action_interrupt(self) -> None:
        """Stop the conversation's current run; the session then waits for a message."""
        conversation = self.conversation
        if conversation is not None and conversation.interrupt():
            self.notify("Stopped the run. The session waits for your next message.")

    def _conversation_changed(self) -> None:
        """A Conversation listener: what is queued, or whether a run goes on, changed."""
        if self.is_mounted and on_screen(self):
            self.call_later(self._show_conversation)

    def _show_conversation(self) -> None:
        conversation = self.conversation
        if conversation is None or not on_screen(self):
            return
        self.query_one(MessageLine).show(
            list(conversation.queued),
            busy=conversation.busy,
            ended=conversation.ended or not self.running,
        )
        self._refresh_bindings_on_change()

    @on(MessageInput.Sent)
    def _message_sent(self, message: MessageInput.Sent) -> None:
        """Say the message to the session (queued while a run goes on)."""
        message.stop()
        conversation = self.conversation
        if conversation is None or conversation.ended or not self.running:
            self.notify("This session has ended: ctrl+g continues it.", severity="warning")
            return
        conversation.say(message.text)

    def cancel_run(self) -> None:
        """Cancel the running agent; the screen stays to show it ended as cancelled."""
        if self.live is not None and self.live.running:
            self.live.worker.cancel()
            self.post_message(LiveSessionCancelled(self.session_id))
            self.notify("Cancelled. Escape goes back to the sessions list.")

    @property
    def continuable(self) -> bool:
        """Whether `c` / `f` apply: an ended code or toolcode session of the store."""
        state = self.state
        return self.recordable and continuable(state.kind, state.status)

    def _cursor_step(self) -> int | None:
        """The step of the card under the stream pane's cursor (None: not a step's card)."""
        card = self.query_one(StreamPane).cursor_card
        return card.step.index if isinstance(card, StepCard) else None

    def action_continue_session(self) -> None:
        """Continue this session live: its state restored, then it waits for a message."""
        if self.continuable:
            self._continue(None)

    def action_fork(self) -> None:
        """A new session holding this one up to the step under the cursor, live."""
        step = self._cursor_step()
        if self.continuable and step is not None:
            self._continue(step)

    def _continue(self, fork_at: int | None) -> None:
        what = f"Forking at step {fork_at}" if fork_at is not None else "Continuing"
        self.notify(f"{what}: preparing the session…")
        self.post_message(ContinueRequested(self.session_id, fork_at))

    def action_retry(self) -> None:
        """Retry the session: its model server's circuit closed, the same request started
        again as a new session."""
        if not (self.recordable and retryable(self.state)):
            return
        server = " (its model server is tried again at once)"
        reopened = close_circuit(self.state, self.settings)
        self.notify(f"Retrying: preparing the session again{server if reopened else ''}…")
        self._relaunch()

    @work(thread=True, group="retry", exclusive=True)
    def _relaunch(self) -> None:
        try:
            launch = relaunch(self.app, self.state, self.settings)
        except RequestError as error:
            self.app.call_from_thread(
                self.notify, f"Cannot retry: {error}", severity="error", markup=False
            )
            return
        self.app.call_from_thread(self.post_message, SessionPrepared(launch))

    def action_export(self) -> None:
        """The export dialog: the session, its items, its recipe (what it has)."""
        self.app.push_screen(ExportScreen(session_exports(self.store, self.state)))

    def action_pinned(self) -> None:
        """Show the strategy and the recipe in use."""
        artifacts = self._pinned()
        if artifacts:
            self.app.push_screen(PinnedScreen(artifacts))

    @on(ImagePreview.Opened)
    def open_image(self, message: ImagePreview.Opened) -> None:
        """An image a run wrote, full screen."""
        image = load_image(message.workspace, message.written)
        if isinstance(image, str):
            self.notify(f"{message.written.path}: {image}", severity="warning", markup=False)
        else:
            self.app.push_screen(ImageScreen(message.written, image))

    @on(ItemsTable.FeedbackRequested)
    def open_feedback(self, message: ItemsTable.FeedbackRequested) -> None:
        message.stop()
        if self.store is None or self.mode == "replay":
            self.notify(
                "Feedback is recorded on a session: open it from the sessions list (Enter).",
                severity="warning",
            )
            return
        state = self.state
        field = state.analysis.field(message.field) if state.analysis else None
        modal = FeedbackModal(
            field or FieldDefinition(name=message.field),
            total=len(state.items),
            agent_type=state.agent_type,
            current_logic=current_logic(state, message.field),
            items=state.items,
        )
        self.app.push_screen(modal, self._feedback_done)

    async def _feedback_done(self, result: FeedbackResult | None) -> None:
        if result is None:
            return
        self._pending = [f for f in self._pending if f.field != result.feedback.field]
        self._pending.append(result.feedback)
        if result.refine:
            await self.action_refine()
        elif result.submit:
            await self.action_submit_feedback()
        else:
            self.notify(
                f"Feedback on '{result.feedback.field}' kept; pick another column and press f,"
                " or s to submit.",
                markup=False,
            )
            self.refresh_status()

    async def recorder(self) -> SessionRecorder:
        """The recorder that appends this screen's events to the session (listener: this screen)."""
        if self.live is not None:
            return self.live.recorder
        assert self.store is not None
        return self._listen(await SessionRecorder.resume(self.store, self.session_id))

    async def action_submit_feedback(self) -> None:
        """Record the collected feedback as one FeedbackSubmitted event."""
        if self._pending and self.store is not None:
            await self._submit(await self.recorder())

    async def _submit(self, recorder: SessionRecorder) -> bool:
        """Record the pending feedback through `recorder` (True once recorded)."""
        event = FeedbackSubmitted(feedback=list(self._pending))
        try:
            stored = await recorder.emit(event)
        except StoreError as error:  # the collected feedback stays pending: s retries
            self.notify(str(error), severity="error", markup=False)
            return False
        assert isinstance(stored, FeedbackSubmitted)
        self._pending.clear()
        self.refresh_status()
        count = len(stored.feedback)
        self.notify(f"Recorded feedback on {count} field{'s' if count != 1 else ''}.")
        self.post_message(FeedbackRecorded(stored))
        return True
