"""Updates that meet a widget already off the screen end quietly; on a screen they still fail
loudly. (A card's thought was once mounted while its screen was being removed: the app
closed with a MountError.)"""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.widget import MountError, Widget
from textual.widgets import Static

from tui_agent.tui.widgets.detached import quiet_when_detached


class Growing(Widget):
    """Mounts a line per call; `bad_id` mounts two children with one id (a real mistake)."""

    @quiet_when_detached
    async def grow(self, bad_id: bool = False) -> None:
        if bad_id:
            await self.mount(Static(id="twice"), Static(id="twice"))
        else:
            await self.mount(Static("line"))

    async def grow_unguarded(self) -> None:
        await self.mount(Static("line"))


class Holder(App[None]):
    def compose(self) -> ComposeResult:
        yield Growing()


async def test_off_the_screen_nothing_is_mounted_and_nothing_raised() -> None:
    widget = Growing()
    await widget.grow()
    assert not widget.children
    with pytest.raises(MountError):
        await widget.grow_unguarded()


async def test_on_the_screen_it_mounts_and_real_mistakes_still_raise() -> None:
    app = Holder()
    async with app.run_test():
        widget = app.query_one(Growing)
        await widget.grow()
        assert len(widget.children) == 1
        with pytest.raises(MountError, match="same ID"):
            await widget.grow(bad_id=True)
