"""The Textual app: opens the store, shows the home screen, routes to session screens and runs
live sessions in workers. Screens and widgets do the rest."""

from __future__ import annotations

import gc
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Sequence
from contextlib import contextmanager, suppress
from functools import cache, partial
from pathlib import Path
from typing import Literal

from textual import on
from textual.app import App
from textual.binding import Binding
from textual.filter import LineFilter
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.widgets import Input, TextArea
from textual.worker import Worker, WorkerCancelled, WorkerFailed, WorkerState

from tui_agent.agents.launch import Launch
from tui_agent.agents.step_loop import Conversation
from tui_agent.agents.task.breaker import BREAKER
from tui_agent.batch.drive import drive_batch
from tui_agent.batch.inputs import BatchStart
from tui_agent.config import Settings, load_settings
from tui_agent.errors import UserError
from tui_agent.events import Event, SessionStarted
from tui_agent.recorder import SessionRecorder
from tui_agent.sandbox.choose import prewarm_fresh_workspace
from tui_agent.session import SessionState, fold
from tui_agent.store import Store
from tui_agent.terminal_text import visible, visible_event
from tui_agent.tui.batch.screen import BatchScreen
from tui_agent.tui.commands import BindingCommands
from tui_agent.tui.messages import (
    BatchPrepared,
    ContinueRequested,
    SessionOpened,
    SessionPrepared,
    SessionRequested,
)
from tui_agent.tui.paths import styles_dir
from tui_agent.tui.retry import RETRY_HINT
from tui_agent.tui.running_work import StepStopper
from tui_agent.tui.screens.confirm import QuitModal
from tui_agent.tui.screens.continue_flow import prepare_continuation
from tui_agent.tui.screens.home import HomeLater, HomeScreen
from tui_agent.tui.screens.refine_flow import REFINE_WORKERS
from tui_agent.tui.screens.session import LiveRun, SessionScreen
from tui_agent.tui.screens.stored import stored_screen
from tui_agent.tui.terminal_filter import ControlFilter
from tui_agent.tui.widgets.step_card import warm_highlighting

STYLESHEETS = ("app.tcss", "home.tcss", "session.tcss", "items.tcss", "batch.tcss")
SESSION_WORKERS = "sessions"
CONTINUE_WORKERS = "continue"
RECORDING_WORKERS = (SESSION_WORKERS, REFINE_WORKERS)
"""Worker groups that append to the store: the app waits for them before closing it."""
WORK_NAMES = {
    SESSION_WORKERS: "live",
    REFINE_WORKERS: "refining",
    CONTINUE_WORKERS: "preparing to continue",
}
"""Worker groups whose work quitting cancels, and how the quit dialog says what one does."""


@cache
def freeze_start_up() -> None:
    """Once per process: what the imports and start-up made lives as long as the process, so
    the cyclic collector's full passes (a long session's events trigger some) need not walk
    it again (`gc.freeze`; objects frozen are still freed once unreferenced)."""
    gc.freeze()


@contextmanager
def loading_without_collection() -> Iterator[None]:
    """Load a stored session with the cyclic collector paused, then freeze what it loaded:
    its events (tens of thousands of objects, no cycles among them) live as long as their
    screen, and each pass over them the loading would trigger found nothing to free. Frozen,
    they are still freed by reference counting once the screen lets go of them."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
    gc.freeze()


class TuiAgentApp(App[None]):
    """tui-agent's terminal UI over the sessions database at `db_path`.

    `open_session` / `replay_session` (an id or unique prefix) open a stored session at once;
    `replay_events` replays events that are not in the store (an exported file). `clock`
    gives the wall time live elapsed figures tick on.

    Screens show sessions as display copies of their events (`visible_event`: controls drawn
    as pictures); notifications are made visible here; `ControlFilter` takes any control
    left out of every rendered line, so none reaches the terminal.
    """

    TITLE = "tui-agent"
    CSS_PATH = [styles_dir() / name for name in STYLESHEETS]
    COMMANDS = App.COMMANDS | {BindingCommands}
    BINDINGS = [
        Binding(
            "ctrl+c",
            "stop_step",
            "Stop",
            show=False,
            priority=True,
            system=True,
            id="app.stop",
            tooltip="Stop the step running on this screen (ctrl+q quits)",
        ),
    ]

    def __init__(
        self,
        db_path: Path,
        *,
        open_session: str | None = None,
        replay_events: list[Event] | None = None,
        replay_session: str | None = None,
        clock: Callable[[], float] = time.time,
        settings: Settings | None = None,
    ) -> None:
        freeze_start_up()
        super().__init__()
        self.db_path = Path(db_path)
        self.settings = settings or load_settings(db=self.db_path)
        self.clock = clock
        self.store: Store | None = None
        self._open_session = open_session
        self._replay_events = replay_events
        self._replay_session = replay_session
        self._last_opened: str | None = None
        self._queued: list[Launch | tuple[SessionStarted, AsyncIterator[Event], str | None]] = []
        self._conversations: dict[Worker[SessionState], LiveRun] = {}
        """The live sessions that are conversations (told to end as the app quits)."""
        self._control_filter = ControlFilter()
        BREAKER.retry_hint = RETRY_HINT  # a model server's circuit-open message names the key

    def get_line_filters(self) -> Sequence[LineFilter]:
        """Textual's filters, then the one that keeps controls off the terminal."""
        return [*super().get_line_filters(), self._control_filter]

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """A toast whose text (errors often quote a session's text) is made visible."""
        super().notify(
            visible(message),
            title=visible(title),
            severity=severity,
            timeout=timeout,
            markup=markup,
        )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "stop_step":  # with nothing to stop, a text field's ctrl+c copies
            return self._step_running() or not isinstance(self.focused, Input | TextArea)
        return True

    def _step_running(self) -> bool:
        screen = self.screen
        return isinstance(screen, StepStopper) and screen.step_running()

    def action_stop_step(self) -> None:
        """ctrl+c: stop the step running on this screen and say how to quit; with nothing
        running, copy the text selected (if any) or say how to quit."""
        screen = self.screen
        if isinstance(screen, StepStopper) and screen.step_running():
            self.notify(f"{screen.stop_step()} ctrl+q quits tui-agent.", markup=False)
        elif (selected := screen.get_selected_text()) is not None:
            self.copy_to_clipboard(selected)
        else:
            self.notify("Nothing runs here to stop. ctrl+q quits tui-agent.", markup=False)

    def running_work(self) -> list[str]:
        """What quitting would cancel, one line each (a conversation waiting for a message
        is not work: quitting ends it as usual)."""
        lines = []
        for worker in self.workers:
            what = WORK_NAMES.get(worker.group)
            if what is None or worker.is_finished:
                continue
            live = self._conversations.get(worker)
            if live is not None and live.conversation is not None and not live.conversation.busy:
                continue
            lines.append(f"{what}: {worker.name}" if worker.name else what)
        return lines

    async def action_quit(self) -> None:
        """ctrl+q: quit, asking first while work runs (a second ctrl+q confirms)."""
        if isinstance(self.screen, QuitModal):
            self.screen.dismiss(True)
            return
        work = self.running_work()
        if not work:
            self.exit()
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.exit()

        self.push_screen(QuitModal(work), answered)

    def get_default_screen(self) -> Screen[None]:
        """The blank first screen: the sessions list comes up whenever it is on top."""
        return HomeLater(self.home_screen)

    def home_screen(self) -> HomeScreen:
        """The sessions list, its cursor on the session shown last."""
        assert self.store is not None
        home = HomeScreen(self.store, self.settings)
        home.came_from = self._last_opened
        return home

    async def on_mount(self) -> None:
        """Open the store, then the first screen: a replay asked for at once is shown alone
        (the sessions list is made once it is left), else the sessions list, with the
        session asked for (if any) over it."""
        self.run_worker(warm_highlighting, thread=True, group="warm-up", exit_on_error=False)
        try:
            self.store = await Store.open(self.db_path)
        except UserError as error:
            self.exit(return_code=1, message=visible(str(error)))
            return
        if self._replay_events is not None:
            shown = [visible_event(event) for event in self._replay_events]
            await self.push_screen(stored_screen(None, shown, "replay", clock=self.clock))
        elif self._replay_session is not None:
            await self.show_session(self._replay_session, "replay")
        if isinstance(self.screen, HomeLater):  # no replay, or it could not be opened
            await self.push_screen(self.home_screen())
            if self._open_session is not None:
                await self.show_session(self._open_session, "stored")
        queued, self._queued = self._queued, []
        for launch in queued:
            if isinstance(launch, Launch):
                self.start_launch(launch)
            else:
                self._launch(*launch)

    async def on_exit_app(self) -> None:
        """Before the app's workers are cancelled, every conversation is told there are no
        more messages: those waiting for the user record their end as usual (not as
        cancelled); the others (a run, a restore under way) are cancelled with the app."""
        waiting = [
            run.worker
            for run in self._conversations.values()
            if run.recorder.state.status == "waiting" and not run.worker.is_finished
        ]
        for run in self._conversations.values():
            if run.conversation is not None:
                run.conversation.end()
        for worker in waiting:
            with suppress(WorkerCancelled, WorkerFailed):
                await worker.wait()

    async def on_unmount(self) -> None:
        """Let cancelled agents and refinements record their end, then close the store."""
        workers = [w for w in self.workers if w.group in RECORDING_WORKERS]
        for worker in workers:
            worker.cancel()
        for worker in workers:
            with suppress(WorkerCancelled, WorkerFailed):
                await worker.wait()
        if self.store is not None:
            await self.store.close()

    def start_session(
        self,
        started: SessionStarted,
        agent: AsyncIterator[Event],
        *,
        session_id: str | None = None,
    ) -> None:
        """Record and show a live session: `agent`'s events after `started`.

        `session_id` defaults to a new random id. Callable before the app runs: the session
        then starts once the store is open.
        """
        if self.store is None:
            self._queued.append((started, agent, session_id))
        else:
            self._launch(started, agent, session_id)

    def start_launch(self, launch: Launch) -> None:
        """Record and show a session prepared by the launch path, under its own id: a new
        one (a fork too), or one continued (its events appended to those stored). Callable
        before the app runs, as `start_session`."""
        if self.store is None:
            self._queued.append(launch)
        elif launch.continues:
            self.run_worker(self._continue(launch), group=CONTINUE_WORKERS, exit_on_error=False)
        else:
            self._launch(launch.started, launch.events, launch.session_id, launch.conversation)

    @on(SessionPrepared)
    def _session_prepared(self, message: SessionPrepared) -> None:
        self.start_launch(message.launch)

    @on(BatchPrepared)
    def _batch_prepared(self, message: BatchPrepared) -> None:
        self.start_batch(message.start)

    def start_batch(self, start: BatchStart) -> None:
        """Drive a batch (the driver the CLI uses) in a session worker, shown live."""
        assert self.store is not None
        recorder = SessionRecorder(self.store)
        live = self._record(recorder, self._drive(recorder, start), None)
        self.push_screen(BatchScreen.live_batch(self.store, live, clock=self.clock))

    async def _drive(self, recorder: SessionRecorder, start: BatchStart) -> SessionState:
        await drive_batch(recorder, start.plan, start.engine, self.settings, start.options)
        return recorder.state

    def _launch(
        self,
        started: SessionStarted,
        agent: AsyncIterator[Event],
        session_id: str | None,
        conversation: Conversation | None = None,
    ) -> None:
        assert self.store is not None
        recorder = SessionRecorder(self.store, session_id)
        live = self._record(recorder, recorder.run(started, agent), conversation)
        self.push_screen(SessionScreen.live_session(self.store, live, clock=self.clock))

    async def _continue(self, launch: Launch) -> None:
        """Append a continued session's events to it, its screen showing the stored history
        then what comes live."""
        assert self.store is not None
        stored = await self.store.display_events(launch.session_id)
        recorder = SessionRecorder(self.store, launch.session_id)
        await recorder.reopen()
        live = self._record(recorder, recorder.go_on(launch.events), launch.conversation)
        state = fold(stored)
        await self.push_screen(SessionScreen(self.store, state, clock=self.clock, live=live))

    def _record(
        self,
        recorder: SessionRecorder,
        recording: Coroutine[None, None, SessionState],
        conversation: Conversation | None,
    ) -> LiveRun:
        """Run `recording` (the recorder at work) in a session worker."""
        worker: Worker[SessionState] = self.run_worker(
            recording,
            name=f"session {recorder.session_id}",
            group=SESSION_WORKERS,
            exit_on_error=False,
        )
        live = LiveRun(recorder, worker, conversation)
        if conversation is not None:
            self._conversations[worker] = live
        return live

    @on(ContinueRequested)
    def _continue_requested(self, message: ContinueRequested) -> None:
        self.run_worker(
            self._prepare_continuation(message.session_id, message.fork_at),
            group=CONTINUE_WORKERS,
            exit_on_error=False,
        )

    async def _prepare_continuation(self, session_id: str, fork_at: int | None) -> None:
        """Prepare the continue (or fork) of a stored session, then show it live in place of
        the stored screen of the same session (a fork's goes on top of its parent's)."""
        assert self.store is not None
        launch = await prepare_continuation(self, self.store, self.settings, session_id, fork_at)
        if launch is None:
            return
        screen = self.screen
        if (
            launch.continues
            and isinstance(screen, SessionScreen)
            and not screen.running
            and screen.session_id == launch.session_id
        ):
            await self.pop_screen()
        self.start_launch(launch)

    async def show_session(self, id_or_prefix: str, mode: Literal["stored", "replay"]) -> None:
        """Push the screen of a stored session: `stored` (its final state) or `replay`."""
        assert self.store is not None
        try:
            session_id = await self.store.resolve(id_or_prefix)
            with loading_without_collection():
                events = await self.store.display_events(session_id)
        except UserError as error:
            self.notify(str(error), severity="error", timeout=8, markup=False)
            return
        await self.push_screen(stored_screen(self.store, events, mode, clock=self.clock))

    def ready_sandbox(self) -> None:
        """While the user fills the new-session form: ready the next session's own workspace
        with a started container (docker; see `prewarm_fresh_workspace`), so it starts warm."""
        if self.settings.workspace is None:
            self.run_worker(
                partial(prewarm_fresh_workspace, self.settings.sandbox),
                thread=True,
                group="prewarm",
                exit_on_error=False,
            )

    @on(SessionOpened)
    def _session_opened(self, message: SessionOpened) -> None:
        """Back on the home screen, its cursor goes to the session shown last."""
        self._last_opened = message.session_id
        for screen in self.screen_stack:
            if isinstance(screen, HomeScreen):
                screen.came_from = message.session_id

    @on(SessionRequested)
    async def _session_requested(self, message: SessionRequested) -> None:
        await self.show_session(message.session_id, message.mode)

    async def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.group != SESSION_WORKERS or not worker.is_finished:
            return
        self._conversations.pop(worker, None)
        if not self.screen_stack:
            return  # the app is closing, and the run was cancelled with it
        for screen in self.screen_stack:
            if (
                isinstance(screen, SessionScreen | BatchScreen)
                and screen.live is not None
                and screen.live.worker is worker
            ):
                screen.run_finished()
        if isinstance(self.screen, HomeScreen):
            await self.screen.action_reload()  # the session's final status
        if event.state == WorkerState.ERROR:
            self.notify(
                f"The session stopped: {worker.error}", severity="error", timeout=10, markup=False
            )
