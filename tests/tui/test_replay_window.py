"""A long session replayed: a jump to its end mounts the cards that fill the stream pane, not
a whole window of them, and shows what the whole window showed (scrolled to the newest)."""

from __future__ import annotations

from pathlib import Path

from session_factory import record, started, wait_until
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from tui_agent.events import CodeProposed, Event, ExecutionFinished, Thought
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.screens.replay import ReplayScreen
from tui_agent.tui.widgets.mounting import first_mounted, grown_window
from tui_agent.tui.widgets.stream_pane import WINDOW, StreamPane

SIZE = (100, 30)


def test_a_short_stream_is_mounted_whole_and_a_long_one_from_its_newest() -> None:
    assert first_mounted(WINDOW, 8, WINDOW) == 0
    assert first_mounted(WINDOW + 1, 8, WINDOW) == WINDOW + 1 - 8
    assert first_mounted(100, 200, WINDOW) == 0


class Lines(App[None]):
    """A pane ten rows high holding `count` one-row cards."""

    CSS = "VerticalScroll { height: 10; }"

    def __init__(self, count: int) -> None:
        super().__init__()
        self.count = count

    def compose(self) -> ComposeResult:
        yield VerticalScroll(*(Static(f"card {i}") for i in range(self.count)))


async def test_the_window_doubles_only_while_the_cards_do_not_fill_the_pane() -> None:
    async with Lines(4).run_test(size=(40, 20)) as pilot:
        await pilot.pause()
        pane = pilot.app.query_one(VerticalScroll)
        assert grown_window(pane, 4, first=1, whole=WINDOW) == 8
        assert grown_window(pane, 20, first=1, whole=WINDOW) == WINDOW
        assert grown_window(pane, 4, first=0, whole=WINDOW) == 4  # nothing left out
    async with Lines(12).run_test(size=(40, 20)) as pilot:
        await pilot.pause()
        pane = pilot.app.query_one(VerticalScroll)
        assert grown_window(pane, 12, first=1, whole=WINDOW) == 12  # they fill it


def steps(count: int) -> list[Event]:
    events: list[Event] = []
    for step in range(1, count + 1):
        events += [
            Thought(step=step, text=f"Step {step} adds one."),
            CodeProposed(step=step, code=f"total = {step}\ntotal + 1"),
            ExecutionFinished(step=step, success=True, duration=0.1, result=step + 1),
        ]
    return events


async def test_a_jump_to_the_end_mounts_what_fills_the_pane_then_steps_back(
    db_path: Path,
) -> None:
    state = await record(db_path, started("Sixty steps"), steps(60))
    app = TuiAgentApp(db_path, replay_session=state.session_id)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen))
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        pane = screen.query_one(StreamPane)
        await pilot.press("end")
        await wait_until(pilot, lambda: screen.replay.at_end and pane.card_count > 0)
        await pilot.pause()
        total = len(pane.entries(screen.state))
        assert total > WINDOW
        assert pane.first_index + pane.card_count == total  # the newest is mounted
        assert pane.card_count < WINDOW  # not a whole window of cards
        assert 0 < pane.max_scroll_y == pane.scroll_y  # they fill the pane: at the newest
        assert "earlier entries not shown" in str(pane.query_one(".earlier").render())

        await pilot.press("left", "left")  # two events back: before the last result
        await wait_until(pilot, lambda: screen.replay.position == screen.replay.total - 2)
        assert screen.state.steps[60].execution is None
        assert not pane.query_one(".ended").display
        assert pane.first_index + pane.card_count == total
        assert pane.card_count < WINDOW
