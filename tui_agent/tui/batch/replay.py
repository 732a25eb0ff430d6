"""A batch replayed: the batch screen fed by a `Replay` controller, with the replay's keys
and its position bar under the items."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.content import Content
from textual.timer import Timer

from tui_agent.store import Store
from tui_agent.tui.batch.screen import BatchScreen
from tui_agent.tui.replay import Replay
from tui_agent.tui.screens.replay import REPLAY_BINDINGS, ReplayBar, ReplayControls
from tui_agent.tui.screens.session import title_line


class BatchReplayScreen(BatchScreen, ReplayControls):
    """Plays a recorded batch through the batch screen's widgets."""

    BINDINGS: ClassVar[list[BindingType]] = [replace(b, priority=True) for b in REPLAY_BINDINGS]
    """The replay's keys before the items table's (it has no use for ← and →)."""
    mode = "replay"

    def __init__(self, store: Store | None, replay: Replay, *, clock: Callable[[], float]) -> None:
        super().__init__(store, replay.state, clock=clock)
        self.replay = replay
        self.playing = False
        self._timer: Timer | None = None

    @property
    def session_id(self) -> str:
        return self.replay.session_id

    @property
    def empty_text(self) -> str:
        return "Press space to play, → to step, end to jump to the end."

    def compose_extra(self) -> ComposeResult:
        yield ReplayBar(id="replay-bar")

    async def on_mount(self) -> None:
        """The position (the batch screen's own on_mount shows the rest)."""
        self._show_position()

    def title_content(self) -> Content:
        title = getattr(self.replay.first, "title", "")
        return title_line("batch", title, self.session_id, prefix="replay")
