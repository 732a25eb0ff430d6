"""Every form still shows its errors, alike, after every screen has been opened.

A screen's stylesheet stays in the app once the screen has opened: a rule of one screen that is
not anchored to it (the feedback form's `.field-error { display: none }`) hid the new-session
form's errors for the rest of the run. Here the forms' errors are brought up in a fresh app,
then every screen is opened in turn, then the errors are brought up again: each is on the
screen, and looks as it did the first time.
"""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from typing import Any, Literal

import pytest
from artifact_factory import refinement_of_price, scrape_started, scrape_with_artifacts
from batch_factory import RECIPE_ITEMS, batch_sessions
from PIL import Image
from session_factory import T0, at_fixed_times, started, store_events, wait_until
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, Select

from tui_agent.agents.refine.run_settings import RunPlan
from tui_agent.config import Settings
from tui_agent.events import (
    CodeProposed,
    Event,
    ExecutionFinished,
    ExecutionStarted,
    SessionEnded,
    WrittenFile,
)
from tui_agent.sandbox.folders.workspaces import remember
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.batch.screen import BatchScreen
from tui_agent.tui.screens.approval import ApprovalModal
from tui_agent.tui.screens.confirm import ConfirmModal
from tui_agent.tui.screens.diff import DiffScreen
from tui_agent.tui.screens.feedback import FeedbackModal
from tui_agent.tui.screens.home import HomeScreen
from tui_agent.tui.screens.image import ImageScreen
from tui_agent.tui.screens.imported_run import ImportedRunModal
from tui_agent.tui.screens.new_session import FORM_KINDS, NewSessionModal, kind_of
from tui_agent.tui.screens.pinned import PinnedScreen
from tui_agent.tui.screens.replay import ReplayScreen
from tui_agent.tui.screens.session import SessionScreen
from tui_agent.tui.screens.value import ValueModal

pytestmark = pytest.mark.usefixtures("utc")
REFINED = "5c4a9e0000c9"
PLOTTED = "f11e50000001"
BATCH = "ba7c40000001"
Look = tuple[object, ...]

SCREENS = {
    "HomeScreen",
    "NewSessionModal",
    "ConfirmModal",
    "SessionScreen",
    "PinnedScreen",
    "DiffScreen",
    "ValueModal",
    "FeedbackModal",
    "ImportedRunModal",
    "ApprovalModal",
    "ImageScreen",
    "ReplayScreen",
    "BatchScreen",
}
"""The screens the tour opens."""


@pytest.fixture
def stored(db_path: Path, tmp_path: Path) -> Path:
    """A refined scrape (items, a candidate, a plan), a run that wrote a plot, a batch."""
    payloads = scrape_with_artifacts() + refinement_of_price()
    end = SessionEnded(status="completed")
    sessions = [at_fixed_times(REFINED, scrape_started(), payloads, end)]
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    remember(workspace)
    Image.new("RGB", (64, 32), "white").save(workspace / "plot.png")
    data = (workspace / "plot.png").read_bytes()
    written = WrittenFile(path="plot.png", size=len(data), sha256=hashlib.sha256(data).hexdigest())
    plot_run: list[Event] = [
        CodeProposed(step=1, code="plt.savefig('/workspace/plot.png')"),
        ExecutionStarted(step=1, backend="local"),
        ExecutionFinished(
            step=1, success=True, duration=0.8, files=[written], workspace=str(workspace)
        ),
    ]
    sessions.append(
        at_fixed_times(PLOTTED, started("Plot a line", "exec"), plot_run, end, start=T0 + 60)
    )
    sessions += batch_sessions(BATCH, RECIPE_ITEMS, start=T0 + 120)
    for events in sessions:
        asyncio.run(store_events(db_path, events))
    return db_path


def shown(widget: Widget) -> bool:
    """Drawn on the screen, on top at its first cell."""
    region = widget.region
    if not widget.display or region.height < 1 or region.width < 1:
        return False
    found, _ = widget.screen.get_widget_at(region.x, region.y)
    return found is widget


def look(widget: Widget) -> Look:
    styles = widget.styles
    return (styles.display, styles.visibility, styles.color, styles.background, styles.text_style)


async def until_current(pilot: Pilot[Any], kind: type[Screen[Any]]) -> Any:
    await wait_until(pilot, lambda: type(pilot.app.screen) is kind, timeout=30)
    return pilot.app.screen


async def back_to(pilot: Pilot[Any], kind: type[Screen[Any]], *keys: str) -> None:
    await pilot.press(*keys)
    await until_current(pilot, kind)


async def form_of(pilot: Pilot[Any], kind: str) -> NewSessionModal:
    """The new-session form (opened with `n` if need be) showing the form of `kind`."""
    if not isinstance(pilot.app.screen, NewSessionModal):
        await until_current(pilot, HomeScreen)
        await pilot.press("n")
    modal: NewSessionModal = await until_current(pilot, NewSessionModal)
    modal.query_one("#kind", Select).value = kind
    await wait_until(pilot, lambda: modal.form.kind == kind and modal.form.display)
    return modal


async def said(pilot: Pilot[Any], modal: NewSessionModal, words: str) -> tuple[bool, Look]:
    """ctrl+s, then the error that holds `words` (once scrolled into view): shown? its look."""
    await pilot.press("ctrl+s")
    await wait_until(pilot, lambda: words in modal.problem, timeout=30)
    [error] = modal.query(".field-error")
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()
    return shown(error), look(error)


async def form_errors(pilot: Pilot[Any], tmp_path: Path) -> dict[str, tuple[bool, Look]]:
    """Each form's error brought up, from the home screen: is it on the screen, how it looks."""
    not_json = tmp_path / "context.txt"
    not_json.write_text("total = qty * price\n")
    looks: dict[str, tuple[bool, Look]] = {}
    modal = await form_of(pilot, "task")
    modal.query_one("#task-task", Input).value = "Add the totals"
    modal.query_one("#task-context", Input).value = str(not_json)
    looks["context file not JSON"] = await said(pilot, modal, "is not valid JSON")
    modal = await form_of(pilot, "scrape")
    modal.query_one("#scrape-task", Input).value = "Extract 3 items"
    modal.query_one("#scrape-url", Input).value = "127.0.0.1:9/list"
    looks["unreachable page"] = await said(pilot, modal, "annot reach")
    modal = await form_of(pilot, "batch")
    looks["batch without a recipe"] = await said(pilot, modal, "No recipe file given")
    await back_to(pilot, HomeScreen, "escape")

    session = await open_stored(pilot, REFINED, SessionScreen)
    await pilot.press("tab", "right", "f")
    feedback: FeedbackModal = await until_current(pilot, FeedbackModal)
    await pilot.press("ctrl+s")  # no issue picked
    issue_error = feedback.query_one("#issue-error")
    await pilot.pause()
    looks["feedback without an issue"] = (shown(issue_error), look(issue_error))
    await back_to(pilot, type(session), "escape")
    await back_to(pilot, HomeScreen, "escape")
    return looks


async def open_stored(pilot: Pilot[Any], session_id: str, kind: type[Screen[Any]]) -> Any:
    app = pilot.app
    assert isinstance(app, TuiAgentApp)
    mode: Literal["stored", "replay"] = "replay" if kind is ReplayScreen else "stored"
    app.run_worker(app.show_session(session_id, mode))
    screen = await until_current(pilot, kind)
    if mode == "stored":
        await wait_until(pilot, lambda: screen.state.event_count > 0)
    return screen


async def every_screen(pilot: Pilot[Any]) -> list[str]:
    """Open every screen in turn (each one the way a user does where a test can), back home."""
    opened: list[str] = []
    app = pilot.app

    async def opens(kind: type[Screen[Any]], keys: tuple[str, ...], back: tuple[str, ...]) -> None:
        below = type(app.screen)
        await pilot.press(*keys)
        await until_current(pilot, kind)
        opened.append(kind.__name__)
        await back_to(pilot, below, *back)

    await until_current(pilot, HomeScreen)
    opened.append("HomeScreen")
    for cls in FORM_KINDS:
        await form_of(pilot, kind_of(cls))
    await form_of(pilot, "batch")
    opened.append("NewSessionModal")
    await back_to(pilot, HomeScreen, "escape")
    await opens(ConfirmModal, ("d",), ("escape",))

    await open_stored(pilot, REFINED, SessionScreen)
    opened.append("SessionScreen")
    await opens(PinnedScreen, ("p",), ("escape",))
    await opens(DiffScreen, ("d",), ("escape",))
    await pilot.press("tab")
    await opens(ValueModal, ("enter",), ("escape",))
    await opens(FeedbackModal, ("f",), ("escape",))
    plan = RunPlan(REFINED, "a file", "refine price", "{}", "json", [("network", "off")])
    await push(pilot, ImportedRunModal(plan), ("n",), opened)
    await push(pilot, ApprovalModal(1, "print(1)"), ("escape",), opened)
    await back_to(pilot, HomeScreen, "escape")

    await open_stored(pilot, PLOTTED, SessionScreen)
    await opens(ImageScreen, ("up", "enter"), ("escape",))
    await back_to(pilot, HomeScreen, "escape")
    await open_stored(pilot, REFINED, ReplayScreen)
    opened.append("ReplayScreen")
    await back_to(pilot, HomeScreen, "escape")
    await open_stored(pilot, BATCH, BatchScreen)
    opened.append("BatchScreen")
    await back_to(pilot, HomeScreen, "escape")
    return opened


async def push(
    pilot: Pilot[Any], screen: Screen[Any], keys: tuple[str, ...], opened: list[str]
) -> None:
    """Push `screen` as the app does when a run asks, then leave it with `keys`."""
    below = type(pilot.app.screen)
    answers: list[object] = []
    pilot.app.push_screen(screen, answers.append)
    await until_current(pilot, type(screen))
    opened.append(type(screen).__name__)
    await pilot.press(*keys)
    await wait_until(pilot, lambda: bool(answers))
    await until_current(pilot, below)


async def test_every_form_shows_its_errors_after_every_screen_was_opened(
    stored: Path, tmp_path: Path
) -> None:
    settings = Settings(db=stored, workspace=tmp_path / "ws", sandbox="local", model="gpt-4o-mini")
    app = TuiAgentApp(stored, settings=settings)
    async with app.run_test(size=(80, 24)) as pilot:  # the smallest usual terminal
        first = await form_errors(pilot, tmp_path)
        assert all(on_screen for on_screen, _ in first.values()), first
        opened = await every_screen(pilot)
        assert set(opened) >= SCREENS, SCREENS - set(opened)
        again = await form_errors(pilot, tmp_path)
    hidden = [name for name, (on_screen, _) in again.items() if not on_screen]
    assert not hidden, f"errors no longer shown after {', '.join(opened)}: {hidden}"
    assert again == first
