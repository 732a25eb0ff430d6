"""The mount guard (widgets/mounting.py): nothing mounts into a widget that is off its screen or
on its way off, and real mount mistakes on a screen still raise. The card case is the one a
loaded full run met: a step card put in the pane just as its screen went, composed after the
screen's removal began, so its thought was never mounted — and its first `show` mounted into it
(MountError: Can't mount widget(s) before Markdown(classes='thought') is mounted)."""

from __future__ import annotations

from pathlib import Path

import pytest
from session_factory import codeact_payloads, record, started, wait_until
from textual.app import App, ComposeResult
from textual.widget import MountError, Widget
from textual.widgets import Markdown, Static

from tui_agent.session import Pieces, StepState
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.screens.home import HomeScreen
from tui_agent.tui.screens.session import SessionScreen
from tui_agent.tui.widgets.mounting import mount_into, on_screen, update_markdown
from tui_agent.tui.widgets.step_card import StepCard
from tui_agent.tui.widgets.stream_pane import StreamPane


class Holder(App[None]):
    def compose(self) -> ComposeResult:
        yield Widget(id="holder")
        yield Markdown(id="text")


async def test_off_the_screen_nothing_is_mounted_and_nothing_raised() -> None:
    widget, markdown = Widget(), Markdown()
    assert not await mount_into(widget, [Static("line")])
    await update_markdown(markdown, "# A title")
    assert not widget.children and not markdown.children
    with pytest.raises(MountError):
        await widget.mount(Static("line"))


async def test_on_the_screen_it_mounts_and_real_mistakes_still_raise() -> None:
    app = Holder()
    async with app.run_test():
        widget, markdown = app.query_one("#holder"), app.query_one("#text", Markdown)
        assert on_screen(widget)
        assert await mount_into(widget, [Static("line")])
        await update_markdown(markdown, "# A title")
        assert len(widget.children) == 1 and markdown.children
        with pytest.raises(MountError, match="same ID"):
            await mount_into(widget, [Static(id="twice"), Static(id="twice")])


@pytest.mark.parametrize("leave", ["pop", "exit"])
async def test_a_card_put_in_the_pane_as_its_screen_goes(db_path: Path, leave: str) -> None:
    session = await record(db_path, started(), codeact_payloads())
    app = TuiAgentApp(db_path, open_session=session.session_id)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen))
        screen = app.screen
        pane = screen.query_one(StreamPane)
        step = StepState(index=9, thought_pieces=Pieces("A thought come as the user leaves."))
        # The app mounts the card (registered at once, composed on the card's first turn),
        # then, before that turn, leaves: the card composes into a screen being removed.
        app.call_next(pane.mount, StepCard(step))
        if leave == "pop":
            screen.dismiss()
            await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        else:
            app.call_next(app.exit)
        await pilot.pause()
