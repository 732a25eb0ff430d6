"""The replay screen: the session screen fed from recorded events by a `Replay` controller,
with its position bar under the stream. Its keys (`ReplayControls`) replay a batch too."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from rich.console import RenderableType
from rich.progress_bar import ProgressBar
from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Static

from tui_agent.events import SessionStarted, current_kind
from tui_agent.session import SessionState
from tui_agent.store import Store
from tui_agent.tui.messages import ReplayMoved
from tui_agent.tui.replay import Replay, ReplayMove, format_speed
from tui_agent.tui.screens.session import SessionScreen, title_line
from tui_agent.tui.widgets.mounting import on_screen

FRAME = 1 / 30
"""Events due within one frame of each other are applied together while playing."""
MIN_DELAY = 0.001
"""Shortest timer (Textual timers need a positive interval)."""


STEP = Binding.Group("Step", compact=True)
SPEED = Binding.Group("Speed", compact=True)
REPLAY_BINDINGS: list[Binding] = [
    Binding(
        "space",
        "toggle_play",
        "Play/pause",
        id="replay.play",
        tooltip="Play or pause the replay",
        priority=True,
    ),
    Binding(
        "left",
        "step_back",
        "Step back",
        id="replay.back",
        tooltip="One event back",
        key_display="←",
        group=STEP,
    ),
    Binding(
        "right",
        "step_forward",
        "Step forward",
        id="replay.forward",
        tooltip="One event forward",
        key_display="→",
        group=STEP,
    ),
    Binding(
        "minus",
        "slower",
        "Slower",
        id="replay.slower",
        tooltip="Halve the speed",
        priority=True,
        group=SPEED,
    ),
    Binding(
        "plus,equals_sign",
        "faster",
        "Faster",
        id="replay.faster",
        tooltip="Double the speed",
        priority=True,
        group=SPEED,
    ),
    Binding(
        "home",
        "start",
        "Start",
        id="replay.start",
        tooltip="Back to the first event",
        priority=True,
        show=False,
    ),
    Binding(
        "end",
        "end",
        "End",
        id="replay.end",
        tooltip="Jump to the last event",
        priority=True,
        show=False,
    ),
]
"""The keys of a replay, on every screen that replays (`ReplayControls`)."""


class ReplayControls(Screen[None]):
    """What the replay keys (`REPLAY_BINDINGS`) do over `self.replay`, for a screen that shows
    `self.state` with `render_state()` and has a ReplayBar. It comes second in a screen's
    bases (`ReplayScreen(SessionScreen, ReplayControls)`): Textual takes a node's CSS types
    from its first bases only. The screen sets `BINDINGS = REPLAY_BINDINGS`, and `replay`,
    `playing` and `_timer` when made."""

    replay: Replay
    playing: bool
    _timer: Timer | None
    state: SessionState

    if TYPE_CHECKING:

        async def render_state(self) -> None: ...

    async def action_toggle_play(self) -> None:
        if self.playing:
            self._pause()
        else:
            if self.replay.at_end:
                await self._apply(self.replay.home())
            self.playing = True
            self._schedule()
        self._show_position()

    async def action_step_forward(self) -> None:
        self._pause()
        await self._apply(self.replay.forward())

    async def action_step_back(self) -> None:
        self._pause()
        await self._apply(self.replay.back())

    async def action_start(self) -> None:
        self._pause()
        await self._apply(self.replay.home())

    async def action_end(self) -> None:
        self._pause()
        await self._apply(self.replay.end())

    def action_faster(self) -> None:
        self.replay.faster()
        self._show_position()

    def action_slower(self) -> None:
        self.replay.slower()
        self._show_position()

    def _pause(self) -> None:
        self.playing = False
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def _schedule(self) -> None:
        delay = self.replay.delay()
        if delay is not None:
            self._timer = self.set_timer(max(delay, MIN_DELAY), self._tick)

    async def _tick(self) -> None:
        self._timer = None
        if not self.playing:
            return
        move = self.replay.advance(FRAME)
        if self.replay.at_end:
            self._pause()
        await self._apply(move)
        if self.playing:
            self._schedule()

    async def _apply(self, move: ReplayMove) -> None:
        self.state = self.replay.state
        with self.app.batch_update():  # one screen update for the whole move
            if move.changed:
                await self.render_state()
            self._show_position()

    def _show_position(self) -> None:
        if not on_screen(self):  # left while a move was shown
            return
        replay = self.replay
        self.query_one(ReplayBar).show(replay.position, replay.total, replay.speed, self.playing)
        self.post_message(ReplayMoved(replay.position, replay.total, replay.speed, self.playing))


class ReplayScreen(SessionScreen, ReplayControls):
    """Plays a recorded session through the session screen's widgets."""

    BINDINGS: ClassVar[list[BindingType]] = [*REPLAY_BINDINGS]
    mode = "replay"

    def __init__(self, store: Store | None, replay: Replay, *, clock: Callable[[], float]) -> None:
        super().__init__(store, replay.state, clock=clock)
        self.replay = replay
        self.playing = False
        self._timer: Timer | None = None
        first = replay.first
        self._started = first if isinstance(first, SessionStarted) else None

    @property
    def session_id(self) -> str:
        return self.replay.session_id

    @property
    def empty_text(self) -> str:
        return "Press space to play, → to step, end to jump to the end."

    def compose_extra(self) -> ComposeResult:
        yield ReplayBar(id="replay-bar")

    async def on_mount(self) -> None:
        await super().on_mount()
        self._show_position()

    def title_content(self) -> Content:
        started = self._started
        if started is None:
            return title_line("", "", self.session_id, prefix="replay")
        return title_line(
            current_kind(started.kind), started.title, started.session_id, prefix="replay"
        )


def replay_renderable(position: int, total: int, speed: float, playing: bool) -> RenderableType:
    """One line: state, position indicator, then a bar filling the rest of the width."""
    state = "▶ playing" if playing else "‖ paused"
    if not playing and position >= total:
        state = "■ at end"
    indicator = f"event {position}/{total} · {format_speed(speed)}"
    row = Table.grid(padding=(0, 2), expand=True)
    row.add_column(no_wrap=True, min_width=9)
    row.add_column(no_wrap=True)
    row.add_column(ratio=1)
    row.add_row(
        state,
        indicator,
        ProgressBar(total=max(total, 1), completed=position, complete_style="green"),
    )
    return row


class ReplayBar(Static):
    """Shows where a replay stands."""

    def show(self, position: int, total: int, speed: float, playing: bool) -> None:
        self.update(replay_renderable(position, total, speed, playing))
