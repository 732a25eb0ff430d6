"""At 80x24: toasts stay clear of the field being typed in, titles are cut with an ellipsis on
their one line, and the modals that ask before code runs keep their buttons in sight."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from artifact_factory import refinement_of_price, scrape_started, scrape_with_artifacts
from session_factory import at_fixed_times, started, store_events, wait_until
from textual.geometry import Region
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, Static
from textual.widgets._toast import Toast

from tui_agent.agents.refine.run_settings import RunPlan
from tui_agent.agents.step_loop.resume import RestoreRun
from tui_agent.events import SessionEnded
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.screens.approval import ApprovalModal
from tui_agent.tui.screens.continue_flow import RestoreFailedModal
from tui_agent.tui.screens.diff import DiffScreen
from tui_agent.tui.screens.home import HomeScreen
from tui_agent.tui.screens.imported_run import ImportedRunModal
from tui_agent.tui.screens.session import SessionScreen

pytestmark = pytest.mark.usefixtures("utc")
SMALL = (80, 24)
REFINED = "5c4a9e0000c9"
LONG_TITLED = "10ae00000001"
LONG_TITLE = "Compute the compound interest of every account of the bank over the next 30 years"
LONG_CODE = "\n".join(f"total_{n} = qty[{n}] * price[{n}]" for n in range(40))


@pytest.fixture
def stored(db_path: Path) -> Path:
    payloads = scrape_with_artifacts() + refinement_of_price()
    end = SessionEnded(status="completed")
    asyncio.run(store_events(db_path, at_fixed_times(REFINED, scrape_started(), payloads, end)))
    long_titled = at_fixed_times(LONG_TITLED, started(LONG_TITLE), [], end)
    asyncio.run(store_events(db_path, long_titled))
    return db_path


def in_sight(widget: Widget) -> bool:
    """Drawn whole within the screen, on top at its corners."""
    region = widget.region
    screen = widget.screen
    if region.area == 0 or not screen.region.contains_region(region):
        return False
    corners = [(region.x, region.y), (region.right - 1, region.bottom - 1)]
    return all(screen.get_widget_at(x, y)[0] is widget for x, y in corners)


async def opened(pilot: Pilot[Any], session_id: str) -> SessionScreen:
    app = pilot.app
    assert isinstance(app, TuiAgentApp)
    await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
    app.run_worker(app.show_session(session_id, "stored"))
    await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen))
    screen = app.screen
    assert isinstance(screen, SessionScreen)
    await wait_until(pilot, lambda: screen.state.status == "completed")
    return screen


async def test_a_toast_leaves_the_reject_reason_and_the_title_clear(stored: Path) -> None:
    app = TuiAgentApp(stored)
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        await opened(pilot, REFINED)
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, DiffScreen))
        await pilot.press("x")
        reason = app.screen.query_one("#reason", Input)
        await wait_until(pilot, lambda: reason.has_focus and in_sight(reason))
        await pilot.press(*"wrong price")
        app.notify("The reviewed version is kept as a candidate: d reviews it again. " * 3)
        await wait_until(pilot, lambda: bool(app.screen.query(Toast)))
        toast = app.screen.query_one(Toast)
        await wait_until(pilot, lambda: toast.region.area > 0)
        assert not toast.region.overlaps(reason.region), (toast.region, reason.region)
        assert in_sight(reason) and reason.value == "wrong price"
        assert toast.region.y >= 1, "the first line (a screen's title) stays readable"


async def test_a_long_title_is_cut_with_an_ellipsis_on_its_line(stored: Path) -> None:
    app = TuiAgentApp(stored)
    async with app.run_test(size=SMALL) as pilot:
        screen = await opened(pilot, LONG_TITLED)
        title = screen.query_one("#session-title", Static)
        await pilot.pause()
        line = title.render_line(0).text.strip()
        assert title.region == Region(0, 0, 80, 1)
        assert line.startswith("code · Compute the compound interest") and line.endswith("…")


def plan() -> RunPlan:
    settings = [("sandbox", "docker"), ("network", "off"), ("page", "re-checked")]
    return RunPlan(REFINED, "shop.jsonl", "refine price", LONG_CODE, "python", settings)


@pytest.mark.parametrize(
    "make, buttons",
    [
        (lambda: ApprovalModal(3, LONG_CODE), ["#skip", "#run", ".question"]),
        (lambda: ImportedRunModal(plan()), ["#cancel", "#run", ".question", "#imported-settings"]),
        (
            lambda: RestoreFailedModal(RestoreRun(step=2, code="fetch()"), "ConnectionError"),
            ["#skip", "#clean", "#cancel", ".question"],
        ),
    ],
    ids=["approval", "imported run", "restore failed"],
)
async def test_modals_asking_before_code_runs_fit(
    db_path: Path, make: Any, buttons: list[str]
) -> None:
    app = TuiAgentApp(db_path)
    async with app.run_test(size=SMALL) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        modal: Screen[Any] = make()
        app.push_screen(modal)
        await wait_until(pilot, lambda: app.screen is modal and modal.focused is not None)
        await pilot.pause()
        hidden = [name for name in buttons if not in_sight(modal.query_one(name))]
        assert not hidden, f"out of sight at 80x24: {hidden}"
