"""Search in the stream with `/`: every card's whole text is searched (folded output
included); the current match's card is put under the cursor, unfolded, marked and scrolled
to; Enter / `n` and shift+Enter / `N` step through the matches; the count says `2/4` or
`no matches`; Escape leaves the input, then clears the search. Letters typed in the input
are text, never keys."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from output_factory import NEEDLE_LINE, SESSION, opened, store_long_output
from session_factory import wait_until
from textual.content import Content
from textual.pilot import Pilot
from textual.widgets import Input, Static
from textual.widgets.markdown import MarkdownBlock

from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.screens.home import HomeScreen
from tui_agent.tui.screens.session import SessionScreen
from tui_agent.tui.stream.matches import Block, Hit, Matches, find
from tui_agent.tui.stream.output_screen import OutputScreen
from tui_agent.tui.stream.search_bar import SearchBar
from tui_agent.tui.stream.text_view import CURRENT_STYLE, MATCH_STYLE
from tui_agent.tui.widgets.step_card import StepCard
from tui_agent.tui.widgets.stream_pane import StreamPane

pytestmark = pytest.mark.usefixtures("utc")
SIZES = pytest.mark.parametrize("size", [(80, 24), (120, 36)], ids=["80x24", "120x36"])


def test_find_ignores_case_and_gives_block_line_and_column() -> None:
    blocks = [Block(["ab", "xAb ab"]), Block([]), Block(["AB"])]
    assert find(blocks, "aB") == [Hit(0, 0, 0), Hit(0, 1, 1), Hit(0, 1, 4), Hit(2, 0, 0)]
    assert find(blocks, "") == [] and find(blocks, "zz") == []
    assert len(find([Block(["a" * 50])], "a", limit=7)) == 7


def test_matches_step_and_wrap_and_count() -> None:
    matches = Matches()
    matches.search([Block(["one two one", "one"])], "one", start=Hit(0, 0, 1))
    assert matches.count_text() == "2/3" and matches.current == Hit(0, 0, 8)
    matches.step(1)
    assert matches.count_text() == "3/3"
    matches.step(1)
    assert matches.count_text() == "1/3"
    matches.step(-1)
    assert matches.count_text() == "3/3"
    matches.search([Block(["one"])], "three")
    assert matches.count_text() == "no matches" and matches.step(1) is None


async def searchable(pilot: Pilot[Any]) -> tuple[SessionScreen, StreamPane, SearchBar]:
    screen = await opened(pilot)
    pane = screen.query_one(StreamPane)
    return screen, pane, pane.search_bar


def step_card(screen: SessionScreen, index: int) -> StepCard:
    return next(card for card in screen.query(StepCard) if card.step.index == index)


def marked(widget: Static, style: str) -> list[str]:
    """The text of `widget` marked with `style`."""
    content = widget.content
    assert isinstance(content, Content)
    return [content.plain[s.start : s.end] for s in content.spans if s.style == style]


async def test_search_finds_folded_output_steps_and_clears(db_path: Path) -> None:
    app = TuiAgentApp(await store_long_output(db_path, 200), open_session=SESSION)
    async with app.run_test(size=(120, 36)) as pilot:
        screen, pane, bar = await searchable(pilot)
        execution = step_card(screen, 1).query_one(".execution", Static)
        assert "a needle in the hay" not in str(execution.content), "folded away at first"
        await pilot.press("slash")
        await wait_until(pilot, lambda: bar.is_open and isinstance(app.focused, Input))
        await pilot.press(*"needle")
        # Typed letters are text: `n` (next match), `e` (earlier), `d` (review) did nothing.
        assert bar.text == "needle" and app.screen is screen
        await wait_until(pilot, lambda: bar.count == "1/4")
        assert pane.cursor == 0 and step_card(screen, 1).expanded
        assert marked(execution, CURRENT_STYLE) == ["needle"]
        assert "a needle in the hay" in str(execution.content)

        def in_view(widget: Static, line: int) -> bool:
            top = widget.region.y + line
            return pane.region.y <= top < pane.region.bottom

        await wait_until(pilot, lambda: in_view(execution, NEEDLE_LINE))
        await pilot.press("enter")
        await wait_until(pilot, lambda: bar.count == "2/4")
        code = step_card(screen, 2).query_one(".code", Static)
        assert pane.cursor == 1 and marked(code, CURRENT_STYLE) == ["needle"]
        assert marked(execution, CURRENT_STYLE) == [], "one card marked at a time"
        await pilot.press("enter")
        await wait_until(pilot, lambda: bar.count == "3/4")
        output = step_card(screen, 2).query_one(".execution", Static)
        assert marked(output, CURRENT_STYLE) == ["needle"] and marked(code, MATCH_STYLE)
        await pilot.press("shift+enter")
        await wait_until(pilot, lambda: bar.count == "2/4")

        await pilot.press("escape")  # leaves the input: the search stays, n / N step
        await wait_until(pilot, lambda: app.focused is pane and bar.is_open)
        await pilot.press("n", "n")
        await wait_until(pilot, lambda: bar.count == "4/4")
        assert pane.cursor == 2
        [answer] = [b for b in step_card(screen, 3).query(MarkdownBlock) if not b.children]
        await wait_until(pilot, lambda: marked(answer, CURRENT_STYLE) == ["needle"])
        await pilot.press("n")
        await wait_until(pilot, lambda: bar.count == "1/4")
        await pilot.press("N")
        await wait_until(pilot, lambda: bar.count == "4/4")

        await pilot.press("escape")  # clears the search and its marks
        await wait_until(pilot, lambda: not bar.is_open)
        assert marked(code, MATCH_STYLE) == [] and not pane.matches.query
        assert app.screen is screen
        await pilot.press("escape")  # then Escape goes back as ever
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))


async def test_no_match_says_so_and_moves_nothing(db_path: Path) -> None:
    app = TuiAgentApp(await store_long_output(db_path, 200), open_session=SESSION)
    async with app.run_test(size=(120, 36)) as pilot:
        _screen, pane, bar = await searchable(pilot)
        await pilot.press("slash", *"hay")
        await wait_until(pilot, lambda: bar.count == "1/1")
        assert pane.cursor == 0 and pane.cursor_card is not None
        await pilot.press("!")
        await wait_until(pilot, lambda: bar.count == "no matches")
        await pilot.press("enter", "shift+enter")
        assert bar.count == "no matches" and pane.cursor == 0
        execution = pane.cursor_card.query_one(".execution", Static)
        assert marked(execution, CURRENT_STYLE) == marked(execution, MATCH_STYLE) == []


async def test_a_match_the_card_cannot_show_opens_whole_with_v(db_path: Path) -> None:
    app = TuiAgentApp(await store_long_output(db_path, 5_000), open_session=SESSION)
    async with app.run_test(size=(120, 36)) as pilot:
        screen, pane, bar = await searchable(pilot)
        await pilot.press("slash", *"line 4990 ")  # unfolded, the card shows the last 1,000
        await wait_until(pilot, lambda: bar.count == "1/1")
        execution = step_card(screen, 1).query_one(".execution", Static)
        assert marked(execution, CURRENT_STYLE) == ["line 4990 "]
        row = str(execution.content).split("\n").index("out│ line 4990 value 34930")
        await wait_until(
            pilot, lambda: pane.region.y <= execution.region.y + row < pane.region.bottom
        )
        await pilot.press("escape", "slash")  # the input again, its string selected
        await pilot.press(*"line 1234 ")
        await wait_until(pilot, lambda: bar.count == "1/1 · v shows it")
        await pilot.press("escape", "v")
        await wait_until(pilot, lambda: isinstance(app.screen, OutputScreen))
        output = app.screen
        assert isinstance(output, OutputScreen)
        bar = output.query_one(SearchBar)
        await wait_until(pilot, lambda: bar.count == "1/1")
        view = output.view
        line = output.lines.index("out│ line 1234 value 8638")
        await wait_until(pilot, lambda: view.scroll_y <= line < view.scroll_y + view.size.height)


@SIZES
def test_search_bar_with_a_match(snap_compare: Any, db_path: Path, size: tuple[int, int]) -> None:
    app = TuiAgentApp(asyncio.run(store_long_output(db_path, 200)), open_session=SESSION)

    async def searched(pilot: Pilot[Any]) -> None:
        _screen, _pane, bar = await searchable(pilot)
        await pilot.press("slash", *"needle")
        await wait_until(pilot, lambda: bar.count == "1/4")
        await pilot.press("enter")
        await wait_until(pilot, lambda: bar.count == "2/4")
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=searched)
