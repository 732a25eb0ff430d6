"""The stream pane follows the newest card once its cards overflow it, also when a card grew
after the pane last synced (a Markdown thought laid out a frame later): no resize says so, as
the pane's own size did not change; only its content's did."""

from __future__ import annotations

from session_factory import wait_until
from textual.app import App, ComposeResult
from textual.widgets import Static

from tui_agent.tui.widgets.stream_pane import StreamPane


class OnePane(App[None]):
    def compose(self) -> ComposeResult:
        yield StreamPane("nothing yet", id="pane")


async def test_content_that_grows_after_the_sync_is_followed() -> None:
    app = OnePane()
    async with app.run_test(size=(60, 12)) as pilot:
        pane = app.query_one(StreamPane)
        await pilot.pause()
        assert pane.max_scroll_y == 0 and not pane.is_anchored
        card = Static("one line")
        await pane.mount(card)
        await pilot.pause()
        assert not pane.is_anchored  # it fits: it stays on top
        card.update("\n".join(f"line {n}" for n in range(40)))  # grown, with no sync
        await wait_until(pilot, lambda: pane.max_scroll_y > 0 and pane.is_anchored, timeout=5)
        await wait_until(pilot, lambda: pane.scroll_y == pane.max_scroll_y, timeout=5)
