"""A step that wrote files: listed on its card, images previewed, Enter opens one full screen;
a file overwritten since is said so, not shown."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from session_factory import at_fixed_times, started, store_events, wait_until
from textual.pilot import Pilot
from textual.widgets import Static

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
from tui_agent.tui.screens.image import ImageScreen
from tui_agent.tui.screens.session import SessionScreen
from tui_agent.tui.widgets.files_view import ImagePreview
from tui_agent.tui.widgets.step_card import StepCard

SESSION = "f11e50000001"
CODE = "plt.plot([1, 3, 2, 5])\nplt.savefig('/workspace/plot.png')"

pytestmark = pytest.mark.usefixtures("utc")


def plot(path: Path) -> bytes:
    image = Image.new("RGB", (64, 32), "white")
    for x in range(64):
        image.putpixel((x, 31 - x // 2), (30, 90, 200))
    image.save(path)
    return path.read_bytes()


@pytest.fixture
def plotted(db_path: Path, tmp_path: Path) -> Path:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    remember(workspace)  # the workspace a user named for the session
    data = plot(workspace / "plot.png")
    (workspace / "notes.txt").write_text("x" * 2048)
    files = [
        WrittenFile(path="plot.png", size=len(data), sha256=hashlib.sha256(data).hexdigest()),
        WrittenFile(path="notes.txt", size=2048),
    ]
    payloads: list[Event] = [
        CodeProposed(step=1, code=CODE),
        ExecutionStarted(step=1, backend="docker"),
        ExecutionFinished(
            step=1, success=True, duration=0.8, files=files, workspace=str(workspace)
        ),
    ]
    events = at_fixed_times(
        SESSION, started("Plot a line", "exec"), payloads, SessionEnded(status="completed")
    )
    asyncio.run(store_events(db_path, events))
    return db_path


async def step_card(pilot: Pilot[Any]) -> StepCard:
    await wait_until(pilot, lambda: bool(pilot.app.screen.query(ImagePreview)))
    return pilot.app.screen.query_one(StepCard)


async def test_the_card_lists_the_files_and_enter_opens_the_image(plotted: Path) -> None:
    app = TuiAgentApp(plotted, open_session=SESSION)
    async with app.run_test(size=(120, 36)) as pilot:
        card = await step_card(pilot)
        listed = str(card.query_one(".files-list", Static).content).split("\n")
        assert listed[0] == "🗂 wrote 2 files"
        assert listed[1].startswith("  ▣ plot.png  ") and listed[1].endswith(" B")
        assert listed[2] == "  · notes.txt  2.0 kB"
        [preview] = card.files.previews
        assert not isinstance(preview.image, str) and preview.image.size == (64, 32)
        await pilot.press("up", "enter")  # the cursor on the step, Enter opens its image
        await wait_until(pilot, lambda: isinstance(app.screen, ImageScreen))
        assert app.screen.written.path == "plot.png"
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen))


async def test_an_image_overwritten_since_the_run_is_not_shown(
    plotted: Path, tmp_path: Path
) -> None:
    (tmp_path / "workspace" / "plot.png").write_bytes(b"not the plot any more")
    app = TuiAgentApp(plotted, open_session=SESSION)
    async with app.run_test(size=(120, 36)) as pilot:
        card = await step_card(pilot)
        [preview] = card.files.previews
        assert preview.image == "overwritten since this run"
        assert not card.files.openable


def test_snapshot_a_step_that_saved_a_plot(snap_compare: Any, plotted: Path) -> None:
    app = TuiAgentApp(plotted, open_session=SESSION)

    async def shown(pilot: Pilot[Any]) -> None:
        await step_card(pilot)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 36), run_before=shown)
