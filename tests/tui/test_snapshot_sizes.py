"""Snapshots of the home, new-session form, session (a scrape run, its items grouped), review,
approval, imported-run, restore-failed and plan screens at 80x24 and 120x36: what a new user
sees on a small and a usual terminal."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from artifact_factory import refinement_of_price, scrape_started, scrape_with_artifacts
from session_factory import at_fixed_times, fixed_sessions, store_events, wait_until
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Static

from tui_agent.agents.refine.run_settings import RunPlan
from tui_agent.agents.step_loop.resume import RestoreRun
from tui_agent.analysis import analyze_output
from tui_agent.config import Settings
from tui_agent.events import (
    Event,
    ItemsExtracted,
    Log,
    OutputAnalyzed,
    PhaseFinished,
    PhaseStarted,
    SessionEnded,
    ToolCall,
    ToolResult,
)
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.screens.approval import ApprovalModal
from tui_agent.tui.screens.continue_flow import RestoreFailedModal
from tui_agent.tui.screens.diff import DiffScreen
from tui_agent.tui.screens.home import HomeScreen
from tui_agent.tui.screens.imported_run import ImportedRunModal
from tui_agent.tui.screens.new_session import NewSessionModal
from tui_agent.tui.screens.pinned import PinnedScreen
from tui_agent.tui.screens.session import SessionScreen
from tui_agent.tui.widgets.sessions_table import SessionsTable

pytestmark = pytest.mark.usefixtures("utc")
SIZES = pytest.mark.parametrize("size", [(80, 24), (120, 36)], ids=["80x24", "120x36"])
REFINED = "5c4a9e0000c9"
LISTED = "5c4a9e0000d1"


def settings_for(db: Path, tmp_path: Path) -> Settings:
    return Settings(db=db, workspace=tmp_path / "ws", sandbox="local", model="gpt-4o-mini")


@pytest.fixture
def stored(db_path: Path) -> Path:
    for events in fixed_sessions():
        asyncio.run(store_events(db_path, events))
    return db_path


def listing_payloads(count: int = 12) -> list[Event]:
    """A recipe run: the plan phase with its probes, then one group of commands per item."""
    events: list[Event] = [
        PhaseStarted(phase="plan", detail="Extract 12 items"),
        ToolCall(call_id="p1", name="find_lists", arguments={}),
        ToolResult(call_id="p1", name="find_lists", output="1 list of 24 `li.card`", duration=1.2),
        Log(message="The page lists 24 items (`li.card` in `#product-list`)."),
        ToolCall(call_id="p2", name="probe_click", arguments={"selector": "li.card"}),
        ToolResult(call_id="p2", name="probe_click", output="a panel opened", duration=0.4),
        PhaseFinished(phase="plan", duration=2.1, summary="panel details, next-page control"),
        PhaseStarted(phase="list", detail="Extract 12 items"),
    ]
    items = []
    for n in range(1, count + 1):
        item = {"title": f"Oak desk {n}", "price": f"${n * 10}.00"}
        items.append(item)
        for index, name in enumerate(("CLICK", "EXTRACT_DETAILS", "SAVE", "MARK_DONE")):
            call_id = f"i{n}-{index}"
            output = f'saved item {n} "Oak desk {n} ${n * 10}.00"' if name == "SAVE" else "ok"
            events += [
                ToolCall(call_id=call_id, name=name, item=n),
                ToolResult(call_id=call_id, name=name, output=output, duration=0.05),
            ]
        events.append(ItemsExtracted(items=[item], step=n))
    events += [
        PhaseFinished(phase="list", duration=9.5, summary=f"{count} items, 0 failed"),
        OutputAnalyzed(analysis=analyze_output(items)),
    ]
    return events


@pytest.fixture
def listed(db_path: Path) -> Path:
    events = at_fixed_times(
        LISTED,
        scrape_started(),
        listing_payloads(),
        SessionEnded(status="completed", stopped_reason="max_items"),
        gap=0.1,
    )
    asyncio.run(store_events(db_path, events))
    return db_path


@pytest.fixture
def refined(db_path: Path) -> Path:
    payloads = scrape_with_artifacts() + refinement_of_price()
    end = SessionEnded(status="completed")
    asyncio.run(store_events(db_path, at_fixed_times(REFINED, scrape_started(), payloads, end)))
    return db_path


@SIZES
def test_home(snap_compare: Any, stored: Path, size: tuple[int, int]) -> None:
    assert snap_compare(TuiAgentApp(stored), terminal_size=size)


@SIZES
def test_new_session_form_with_an_inline_error(
    snap_compare: Any,
    stored: Path,
    tmp_path: Path,
    size: tuple[int, int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    app = TuiAgentApp(stored, settings=settings_for(stored, tmp_path))

    async def asked(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, HomeScreen))
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, NewSessionModal))
        modal = pilot.app.screen
        hint = modal.query_one("#code-model-hint", Static)
        await wait_until(pilot, lambda: "OPENAI_API_KEY" in str(hint.content), timeout=120)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: "What should the agent do?" in modal.problem)
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=asked)


@SIZES
def test_exec_form(snap_compare: Any, stored: Path, tmp_path: Path, size: tuple[int, int]) -> None:
    app = TuiAgentApp(stored, settings=settings_for(stored, tmp_path))

    async def asked(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, HomeScreen))
        pilot.app.screen.action_new("exec")
        await wait_until(
            pilot,
            lambda: (
                isinstance(pilot.app.screen, NewSessionModal) and bool(pilot.app.screen.focused)
            ),
        )
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=asked)


@SIZES
def test_scrape_session_with_items_grouped(
    snap_compare: Any, listed: Path, size: tuple[int, int]
) -> None:
    app = TuiAgentApp(listed, open_session=LISTED)

    async def opened(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, SessionScreen))
        screen = pilot.app.screen
        await wait_until(pilot, lambda: screen.state.status == "completed")
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=opened)


@SIZES
def test_review(snap_compare: Any, refined: Path, size: tuple[int, int]) -> None:
    app = TuiAgentApp(refined, open_session=REFINED)

    async def reviewing(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, SessionScreen))
        await wait_until(pilot, lambda: pilot.app.screen.state.event_count > 0)
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, DiffScreen))
        await wait_until(pilot, lambda: bool(pilot.app.screen.query("#diff-summary")))
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=reviewing)


LONG_CODE = "\n".join(
    f"total_{n} = sum(row['qty'] * row['price'] for row in rows)  # line {n}" for n in range(30)
)
"""Code longer than any terminal: the modal's question and buttons must stay in sight."""


def pushed(screen: Screen[Any]) -> Callable[[Pilot[Any]], Awaitable[None]]:
    """Push `screen` over the home screen, its sessions listed (as a run asking does), and let
    it settle."""

    async def run_before(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, HomeScreen))
        table = pilot.app.screen.query_one(SessionsTable)
        await wait_until(pilot, lambda: table.row_count == len(fixed_sessions()))
        # The table sizes its columns when idle; its scrollbar shows through at 80x24 (a
        # loaded CI run once took the picture a frame before).
        await wait_until(pilot, lambda: not table._require_update_dimensions)
        await pilot.pause()
        pilot.app.push_screen(screen)
        await wait_until(pilot, lambda: pilot.app.screen is screen and bool(screen.focused))
        await pilot.pause()

    return run_before


@SIZES
def test_approval_of_a_long_step(snap_compare: Any, stored: Path, size: tuple[int, int]) -> None:
    app = TuiAgentApp(stored)
    run_before = pushed(ApprovalModal(3, LONG_CODE))
    assert snap_compare(app, terminal_size=size, run_before=run_before)


@SIZES
def test_imported_run_of_a_long_program(
    snap_compare: Any, stored: Path, size: tuple[int, int]
) -> None:
    plan = RunPlan(
        session_id=REFINED,
        imported_from="shop.jsonl",
        action="accept code v2 (re-run)",
        content=LONG_CODE,
        language="python",
        settings=[("sandbox", "docker"), ("network", "off"), ("page", "re-checked")],
    )
    app = TuiAgentApp(stored)
    assert snap_compare(app, terminal_size=size, run_before=pushed(ImportedRunModal(plan)))


@SIZES
def test_restore_failed(snap_compare: Any, stored: Path, size: tuple[int, int]) -> None:
    error = "Traceback (most recent call last):\n  ...\nConnectionError: host unreachable"
    modal = RestoreFailedModal(RestoreRun(step=2, code="fetch()"), error)
    app = TuiAgentApp(stored)
    assert snap_compare(app, terminal_size=size, run_before=pushed(modal))


@SIZES
def test_plan(snap_compare: Any, refined: Path, size: tuple[int, int]) -> None:
    app = TuiAgentApp(refined, open_session=REFINED)

    async def planned(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, SessionScreen))
        await wait_until(pilot, lambda: pilot.app.screen.state.event_count > 0)
        await pilot.press("p")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, PinnedScreen))
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=planned)


async def test_the_items_table_in_use_gets_the_room_at_80x24(listed: Path) -> None:
    app = TuiAgentApp(listed, open_session=LISTED)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, SessionScreen))
        screen = pilot.app.screen
        await wait_until(pilot, lambda: screen.state.status == "completed")
        table = screen.query_one("#items")
        unfocused = table.region.height
        await pilot.press("tab")
        await wait_until(pilot, lambda: table.has_focus_within)
        await pilot.pause()
        assert unfocused <= 8
        assert table.region.height >= 12, "8 rows, a two-line header and the border"
