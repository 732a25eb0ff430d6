"""Artifact and decision cards: a scrape session's strategy and recipe, a refinement's candidate,
folding and unfolding, and the statuses a decision gives them."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from artifact_factory import (
    refinement_of_price,
    scrape_started,
    scrape_with_artifacts,
    unverified_title_change,
)
from session_factory import at_fixed_times, store_events, wait_until
from textual.pilot import Pilot
from textual.widgets import Markdown

from tui_agent.events import SessionEnded, VersionDecided
from tui_agent.session import fold
from tui_agent.session_questions import candidates_awaiting_decision
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.screens.diff import DiffScreen
from tui_agent.tui.screens.session import SessionScreen
from tui_agent.tui.widgets.artifact_card import (
    FOLDED_LINES,
    ArtifactCard,
    artifact_status,
    decisions,
)
from tui_agent.tui.widgets.stream_pane import StreamPane

pytestmark = pytest.mark.usefixtures("utc")
SCRAPE_ID = "5c4a9e0000a7"


def scrape_events(*, refined: bool = False) -> list[Any]:
    payloads = scrape_with_artifacts() + (refinement_of_price() if refined else [])
    return at_fixed_times(
        SCRAPE_ID, scrape_started(), payloads, SessionEnded(status="completed"), gap=0.5
    )


@pytest.fixture
def scrape_db(db_path: Path) -> Path:
    asyncio.run(store_events(db_path, scrape_events()))
    return db_path


@pytest.fixture
def refined_db(db_path: Path) -> Path:
    asyncio.run(store_events(db_path, scrape_events(refined=True)))
    return db_path


async def opened(pilot: Pilot[Any]) -> SessionScreen:
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, SessionScreen))
    screen = pilot.app.screen
    assert isinstance(screen, SessionScreen)
    pane = screen.query_one(StreamPane)
    await wait_until(pilot, lambda: pane.card_count == len(pane.entries(screen.state)))
    return screen


def cards(screen: SessionScreen) -> list[ArtifactCard]:
    return list(screen.query(ArtifactCard))


def test_statuses_follow_the_decisions() -> None:
    state = fold(scrape_events(refined=True))
    strategy, original, candidate = state.artifacts["strategy"] + state.artifacts["recipe"]
    decided = decisions(state)
    assert [artifact_status(a, decided, state.current_versions) for a in (original, candidate)] == [
        "in use",
        "awaiting your decision",
    ]
    assert candidates_awaiting_decision(state) == [candidate]
    state.apply(VersionDecided(name="recipe", version=2, accepted=True, seq=99))
    decided = decisions(state)
    assert [artifact_status(a, decided, state.current_versions) for a in (original, candidate)] == [
        "older",
        "accepted",
    ]
    assert artifact_status(strategy, decided, state.current_versions) == "in use"
    assert candidates_awaiting_decision(state) == []


async def test_cards_fold_long_content_and_o_or_a_click_unfolds(scrape_db: Path) -> None:
    app = TuiAgentApp(scrape_db, open_session=SCRAPE_ID)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await opened(pilot)
        strategy, recipe = cards(screen)
        markdown = strategy.query_one(Markdown)
        assert markdown.source.count("\n") == FOLDED_LINES["markdown"] - 1
        assert "more lines · click or o unfolds" in str(recipe.query_one(".artifact-more").render())
        await pilot.press("o")
        await wait_until(pilot, lambda: strategy.expanded and recipe.expanded)
        assert "NEEDED GENERATORS" in markdown.source
        await pilot.press("o")
        await wait_until(pilot, lambda: not strategy.expanded and not recipe.expanded)
        await pilot.click(recipe)
        await wait_until(pilot, lambda: recipe.expanded and not strategy.expanded)


async def test_a_decision_updates_the_candidate_card(refined_db: Path) -> None:
    app = TuiAgentApp(refined_db, open_session=SCRAPE_ID)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await opened(pilot)
        candidate = cards(screen)[-1]
        assert candidate.has_class("-candidate")
        header = candidate.query_one(".artifact-header")
        assert "awaiting your decision" in str(header.render())
        screen.post_event(VersionDecided(name="recipe", version=2, accepted=False, seq=99))
        await wait_until(pilot, lambda: not candidate.has_class("-candidate"))
        assert "rejected" in str(header.render())


def test_snapshot_scrape_session_with_strategy_and_recipe(
    snap_compare: Any, scrape_db: Path
) -> None:
    app = TuiAgentApp(scrape_db, open_session=SCRAPE_ID)

    async def top(pilot: Pilot[Any]) -> None:
        screen = await opened(pilot)
        screen.query_one(StreamPane).scroll_home(animate=False)

    assert snap_compare(app, terminal_size=(100, 50), run_before=top)


def test_snapshot_refinement_with_a_candidate(snap_compare: Any, refined_db: Path) -> None:
    app = TuiAgentApp(refined_db, open_session=SCRAPE_ID)

    async def bottom(pilot: Pilot[Any]) -> None:
        await opened(pilot)

    assert snap_compare(app, terminal_size=(100, 40), run_before=bottom)


def test_snapshot_diff_of_a_candidate_recipe(snap_compare: Any, refined_db: Path) -> None:
    app = TuiAgentApp(refined_db, open_session=SCRAPE_ID)

    async def reviewing(pilot: Pilot[Any]) -> None:
        await opened(pilot)
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, DiffScreen))

    assert snap_compare(app, terminal_size=(110, 36), run_before=reviewing)


def test_snapshot_diff_of_a_change_nothing_could_verify(snap_compare: Any, db_path: Path) -> None:
    payloads = scrape_with_artifacts() + unverified_title_change()
    events = at_fixed_times(
        SCRAPE_ID, scrape_started(), payloads, SessionEnded(status="completed"), gap=0.5
    )
    asyncio.run(store_events(db_path, events))
    app = TuiAgentApp(db_path, open_session=SCRAPE_ID)

    async def reviewing(pilot: Pilot[Any]) -> None:
        await opened(pilot)
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, DiffScreen))

    assert snap_compare(app, terminal_size=(110, 36), run_before=reviewing)
