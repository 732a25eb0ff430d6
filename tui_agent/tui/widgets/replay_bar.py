"""The replay position line: play state, `event 12/80 · 2x` and a progress bar."""

from __future__ import annotations

from rich.console import RenderableType
from rich.progress_bar import ProgressBar
from rich.table import Table
from textual.widgets import Static

from tui_agent.tui.replay import format_speed


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
