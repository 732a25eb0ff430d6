"""The whole output of a run is reachable: Enter unfolds a step's folded output in place,
`v` shows a card's whole text on the output screen (paged, searched, 100,000 lines
included), and the stream pane pages with pageup / pagedown / home / end."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from artifact_factory import refinement_of_price, scrape_started, scrape_with_artifacts
from output_factory import SESSION, opened, store_long_output
from session_factory import at_fixed_times, wait_until
from textual.pilot import Pilot
from textual.widgets import Static

from tui_agent.events import Log, PhaseFinished, PhaseStarted, ToolCall, ToolResult
from tui_agent.session import fold
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.screens.session import SessionScreen
from tui_agent.tui.stream.entry_text import entry_lines
from tui_agent.tui.stream.output_screen import OutputScreen
from tui_agent.tui.stream.search_bar import SearchBar
from tui_agent.tui.stream.text_view import TextView
from tui_agent.tui.stream_groups import CallGroup, StreamGroups
from tui_agent.tui.widgets.step_card import StepCard
from tui_agent.tui.widgets.stream_pane import StreamPane

pytestmark = pytest.mark.usefixtures("utc")
SIZES = pytest.mark.parametrize("size", [(80, 24), (120, 36)], ids=["80x24", "120x36"])


def output_of(screen: SessionScreen, step: int) -> str:
    card = next(c for c in screen.query(StepCard) if c.step.index == step)
    return str(card.query_one(".execution", Static).content)


async def step_one_under_the_cursor(pilot: Pilot[Any], pane: StreamPane) -> None:
    await pilot.press("up", "up", "up")
    assert pane.cursor == 0


async def test_enter_unfolds_a_steps_output_and_folds_it_again(db_path: Path) -> None:
    app = TuiAgentApp(await store_long_output(db_path, 200), open_session=SESSION)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        pane = screen.query_one(StreamPane)
        folded = output_of(screen, 1)
        assert "… 160 earlier output lines · enter unfolds" in folded
        assert "line 0 value 0" not in folded and "line 199 value 1393" in folded
        await step_one_under_the_cursor(pilot, pane)
        await pilot.press("enter")
        unfolded = output_of(screen, 1)
        assert "earlier output lines" not in unfolded
        assert all(f"line {n} value {n * 7}\n" in unfolded for n in (0, 1, 150, 198))
        assert '"rows": [' in unfolded and "  29\n" in unfolded, "the whole result too"
        await pilot.press("enter")
        assert output_of(screen, 1) == folded


async def test_v_shows_the_whole_text_of_the_card_under_the_cursor(db_path: Path) -> None:
    app = TuiAgentApp(await store_long_output(db_path, 200), open_session=SESSION)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        await step_one_under_the_cursor(pilot, screen.query_one(StreamPane))
        await pilot.press("v")
        await wait_until(pilot, lambda: isinstance(app.screen, OutputScreen))
        output = app.screen
        assert isinstance(output, OutputScreen)
        lines = output.lines
        assert lines[0] == "Step 1" and "out│ line 199 value 1393" in lines
        assert "err│ line 0 value 0" in lines and "out│ a needle in the hay" in lines
        title = str(output.query_one("#output-title", Static).content)
        assert title == f"Step 1  {len(lines)} lines"
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen)


async def test_the_stream_pages_with_pageup_pagedown_home_and_end(db_path: Path) -> None:
    app = TuiAgentApp(await store_long_output(db_path, 200), open_session=SESSION)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        pane = screen.query_one(StreamPane)
        await step_one_under_the_cursor(pilot, pane)
        await pilot.press("enter")  # 200 lines unfolded: several pages
        await pilot.press("end")  # back to following the newest card
        await wait_until(pilot, lambda: pane.cursor is None)
        await pilot.press("end")
        await wait_until(pilot, lambda: pane.scroll_y == pane.max_scroll_y > 100)
        bottom, page = pane.scroll_y, pane.scrollable_content_region.height
        await pilot.press("pageup")
        await wait_until(pilot, lambda: pane.scroll_y == bottom - page)
        await pilot.press("pageup")
        await wait_until(pilot, lambda: pane.scroll_y == bottom - 2 * page)
        await pilot.press("pagedown")
        await wait_until(pilot, lambda: pane.scroll_y == bottom - page)
        await pilot.press("home")
        await wait_until(pilot, lambda: pane.scroll_y == 0)
        await pilot.press("end")
        await wait_until(pilot, lambda: pane.scroll_y == pane.max_scroll_y)


async def test_100k_lines_open_page_and_search_without_freezing(db_path: Path) -> None:
    app = TuiAgentApp(await store_long_output(db_path, 100_000), open_session=SESSION)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(pilot)
        pane = screen.query_one(StreamPane)
        await step_one_under_the_cursor(pilot, pane)
        await pilot.press("enter")  # unfolded in place: the last 1,000 lines, the rest counted
        unfolded = output_of(screen, 1)
        assert "… 99000 earlier output lines · v shows them all" in unfolded
        assert unfolded.count("\n") < 1_100
        began = time.perf_counter()
        await pilot.press("v")
        await wait_until(pilot, lambda: isinstance(app.screen, OutputScreen))
        output = app.screen
        assert isinstance(output, OutputScreen)
        view = output.query_one(TextView)
        await wait_until(pilot, lambda: view.size.height > 0)
        opened_in = time.perf_counter() - began
        assert len(output.lines) > 100_000
        assert opened_in < 5, f"100,000 lines took {opened_in:.1f}s to open"
        height = view.size.height
        await pilot.press("pagedown", "pagedown")
        await wait_until(pilot, lambda: view.scroll_y == 2 * height)
        await pilot.press("end")
        await wait_until(pilot, lambda: view.scroll_y == view.max_scroll_y > 99_000)
        await pilot.press("home")
        await wait_until(pilot, lambda: view.scroll_y == 0)
        await pilot.press("slash", *"line 54321 ")
        bar = output.query_one(SearchBar)
        await wait_until(pilot, lambda: bar.count == "1/1")
        line = output.lines.index("out│ line 54321 value 380247")
        assert view.scroll_y <= line < view.scroll_y + height
        await pilot.press("escape", "escape")  # leave the input, then clear the search
        await wait_until(pilot, lambda: not bar.is_open)
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen)


@SIZES
def test_unfolded_output(snap_compare: Any, db_path: Path, size: tuple[int, int]) -> None:
    app = TuiAgentApp(asyncio.run(store_long_output(db_path, 200)), open_session=SESSION)

    async def unfolded(pilot: Pilot[Any]) -> None:
        screen = await opened(pilot)
        await step_one_under_the_cursor(pilot, screen.query_one(StreamPane))
        await pilot.press("enter")
        await wait_until(pilot, lambda: "line 0 value 0" in output_of(screen, 1))
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=unfolded)


@SIZES
def test_output_screen(snap_compare: Any, db_path: Path, size: tuple[int, int]) -> None:
    app = TuiAgentApp(asyncio.run(store_long_output(db_path, 200)), open_session=SESSION)

    async def shown(pilot: Pilot[Any]) -> None:
        screen = await opened(pilot)
        await step_one_under_the_cursor(pilot, screen.query_one(StreamPane))
        await pilot.press("v")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, OutputScreen))
        await pilot.press("slash", *"value 7")
        bar = pilot.app.screen.query_one(SearchBar)
        await wait_until(pilot, lambda: bar.count == "1/18")
        await pilot.press("enter", "enter")
        await wait_until(pilot, lambda: bar.count == "3/18")
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=shown)


def test_every_card_has_its_whole_text() -> None:
    """Groups, lone tool calls, phases, artifacts, refinements: the full text of each card,
    a tool's output whole where its card shows the first lines."""
    long_output = "\n".join(f"row {n}" for n in range(30))
    payloads = [
        *scrape_with_artifacts(),
        *refinement_of_price(),
        PhaseStarted(phase="list"),
        ToolCall(call_id="x1", name="CLICK", arguments={"selector": "a"}, item=1),
        ToolResult(call_id="x1", name="CLICK", output=long_output, duration=0.1),
        Log(message="clicked\nand waited"),
        PhaseFinished(phase="list", duration=1.0),
        ToolCall(call_id="x2", name="fetch", arguments={"url": "u"}),
        ToolResult(call_id="x2", name="fetch", output=long_output, ok=False, duration=0.2),
    ]
    events = at_fixed_times("5c4a9e0000e1", scrape_started(), payloads, None)
    state = fold(events)
    entries = StreamGroups().entries(state)
    texts = [entry_lines(entry) for entry in entries]
    assert all(texts), "every card has text"
    joined = ["\n".join(lines) for lines in texts]
    assert any("strategy v1" in text for text in joined)
    assert any("recipe v1" in text and '"commands"' in text for text in joined)
    item = next(
        t for e, t in zip(entries, joined, strict=True) if isinstance(e, CallGroup) and e.item
    )
    assert "row 29" in item and "  clicked\n  and waited" in item
    lone = joined[-1]
    assert lone.startswith('⚙ fetch(url="u")  ✗ 0.20s') and lone.endswith("  row 29")
