"""The refinement loop driven by keys: a transformer session recorded by the real exec agent in
a real SQLite file, feedback on its empty column, submit-and-refine with the scripted model and
the bubblewrap sandbox, the attempts streaming into the pane, the diff, the decision."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from artifact_factory import recipe_document
from session_factory import wait_until
from support.requirements import require_backend, require_chromium
from support.scripted_model import Reply, ScriptedModel, action_reply
from support.sessions import record_exec, record_recipe, scripted_settings
from test_app import posted, stored_events
from test_feedback_modal import pick_issue, type_into
from textual.message import Message
from textual.pilot import Pilot
from textual.widgets import Static

from tui_agent.config import Settings
from tui_agent.demo_site import DemoSite
from tui_agent.events import (
    Artifact,
    ExecutionFinished,
    FeedbackSubmitted,
    ItemsExtracted,
    LLMCall,
    Log,
    OutputAnalyzed,
    RefinementProgress,
    VersionDecided,
)
from tui_agent.sandbox.wire import ExecuteRequest
from tui_agent.store import Store
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.messages import RefinementFinished, VersionDecisionRecorded
from tui_agent.tui.screens.confirm import QuitModal
from tui_agent.tui.screens.diff import DiffScreen
from tui_agent.tui.screens.feedback import FeedbackModal
from tui_agent.tui.screens.session import SessionScreen
from tui_agent.tui.widgets.artifact_card import ArtifactCard
from tui_agent.tui.widgets.entry_cards import EntryCard
from tui_agent.tui.widgets.items_table import ItemsTable
from tui_agent.tui.widgets.stream_pane import StreamPane
from tui_agent.web.recipe import parse_recipe

SIZE = (110, 40)
SANDBOX_WAIT = 120.0
"""Seconds to wait for sandbox runs (the machine may be busy; never asserted as a timing)."""

ORDERS = [
    {"name": "Oak desk", "cents": 24900},
    {"name": "Pine shelf", "cents": 8950},
    {"name": "Lamp", "cents": 3500},
]
TRANSFORM = """\
def main(orders):
    return [{{"name": o["name"], "price": {price}}} for o in orders]
"""
ORIGINAL = TRANSFORM.format(price="None")
BROKEN = TRANSFORM.format(price='o["amount"] / 100')
FIXED = TRANSFORM.format(price='o["cents"] / 100')
PRICES = [249.0, 89.5, 35.0]


def reply(code: str, thought: str) -> Reply:
    return action_reply(thought, "execute_code", code=code, chunk_size=24)


@pytest.fixture
def settings(tmp_path: Path, server: ScriptedModel) -> Settings:
    require_backend("bubblewrap")
    return scripted_settings(server, tmp_path, "bubblewrap")


async def transformer_session(settings: Settings) -> str:
    """A transformer whose `price` comes out empty, recorded by the real exec agent."""
    request = ExecuteRequest(code=ORIGINAL, args=[ORDERS])
    state = await record_exec(settings, request, "orders to prices", agent_type="transformer")
    assert state.status == "completed" and state.items == [
        {"name": o["name"], "price": None} for o in ORDERS
    ]
    return state.session_id


async def give_feedback_and_refine(pilot: Pilot[Any], screen: SessionScreen) -> None:
    """Focus the price column, `f`, issue "missing" with an expression, submit and refine."""
    table = screen.query_one(ItemsTable)
    await pilot.press("tab")
    await wait_until(pilot, lambda: table.has_focus_within)
    await pilot.press("right")
    await wait_until(pilot, lambda: table.focused_field == "price")
    await pilot.press("f")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, FeedbackModal))
    modal = pilot.app.screen
    assert isinstance(modal, FeedbackModal)
    assert "price" in str(modal.query_one("#current-logic").render())
    await pick_issue(pilot, "missing")
    await type_into(pilot, "o['cents'] / 100")
    await pilot.press("ctrl+r")


async def test_feedback_refine_and_accept_by_keyboard(
    settings: Settings, server: ScriptedModel
) -> None:
    session_id = await transformer_session(settings)
    server.push(
        reply(BROKEN, "Compute the price from the amount."),
        reply(FIXED, "The orders carry cents: divide them by 100."),
    )
    messages: list[Message] = []
    app = TuiAgentApp(settings.db, open_session=session_id, settings=settings)
    async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen))
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await give_feedback_and_refine(pilot, screen)

        await wait_until(pilot, lambda: isinstance(app.screen, DiffScreen), SANDBOX_WAIT)
        diff = app.screen
        assert isinstance(diff, DiffScreen)
        # The screen is pushed before the message it posted is handled: wait for both.
        await wait_until(pilot, lambda: bool(posted(messages, RefinementFinished)))
        [finished] = posted(messages, RefinementFinished)
        assert finished.candidate == diff.candidate
        assert (diff.candidate.name, diff.candidate.version) == ("code", 2)
        assert diff.current is not None and diff.current.content == ORIGINAL
        await wait_until(pilot, lambda: bool(diff.query("#diff-summary")))
        summary = str(diff.query_one("#diff-summary", Static).content)
        assert summary.split("\n")[0].split() == ["✓", "price", "0%", "→", "100%", "fixed"]

        def progress() -> list[EntryCard]:
            return [c for c in screen.query(EntryCard) if c.has_class("refinement-card")]

        # two attempts, each started, tested and checked, and the outcome (shown with the
        # frame after the last of them)
        await wait_until(pilot, lambda: len(progress()) == 7)
        # the candidate's card may be mounted with a later frame than the outcome
        await wait_until(pilot, lambda: screen.query(ArtifactCard).last().has_class("-candidate"))
        candidate_card = screen.query(ArtifactCard).last()

        await pilot.press("ctrl+y")
        await wait_until(
            pilot, lambda: bool(posted(messages, VersionDecisionRecorded)), SANDBOX_WAIT
        )
        table = screen.query_one(ItemsTable)
        await wait_until(pilot, lambda: [i["price"] for i in screen.state.items] == PRICES)

        def analysed() -> bool:  # the analysis may come with the next frame
            analysis = screen.state.analysis
            return analysis is not None and analysis.field("price").coverage == 100

        await wait_until(pilot, analysed)
        assert table.focused_field == "price"
        await wait_until(pilot, lambda: not candidate_card.has_class("-candidate"))

    events = await stored_events(settings.db, session_id)
    [feedback] = [e for e in events if isinstance(e, FeedbackSubmitted)]
    [item] = feedback.feedback
    assert (item.field, item.issue, item.correct_expression) == (
        "price",
        "missing",
        "o['cents'] / 100",
    )
    after = [e for e in events if e.seq > feedback.seq]
    original, candidate = [e for e in after if isinstance(e, Artifact)]
    assert (original.version, original.origin, original.candidate) == (1, "original", False)
    assert (candidate.version, candidate.candidate, candidate.content) == (2, True, FIXED)
    progress_events = [e for e in after if isinstance(e, RefinementProgress)]
    assert [e.attempt for e in progress_events] == [1, 1, 1, 2, 2, 2, 2]
    assert progress_events[-1].fixed == ["price"] and progress_events[-1].remaining == []
    runs = [e for e in after if isinstance(e, ExecutionFinished)]
    assert [run.success for run in runs] == [False, True, True]  # attempt 1, 2, the re-run
    [decision] = [e for e in after if isinstance(e, VersionDecided)]
    assert (decision.name, decision.version, decision.accepted) == ("code", 2, True)
    [replaced] = [e for e in after if isinstance(e, ItemsExtracted)]
    assert replaced.replace and replaced.seq > decision.seq
    assert [i["price"] for i in replaced.items] == PRICES
    assert isinstance(events[-1], OutputAnalyzed)
    assert server.remaining == 0


@pytest.mark.chromium
async def test_a_recipe_binding_is_fixed_by_the_users_selector(tmp_path: Path) -> None:
    require_chromium()
    settings = Settings(db=tmp_path / "sessions.db", workspace=tmp_path / "workspace")
    broken = parse_recipe(recipe_document(".field-cost"), "the test recipe")
    with DemoSite() as site:
        url = site.url("panel")
        async with await Store.open(settings.db) as store:
            recorded = await record_recipe(store, broken, url, max_items=3)
        assert [item.get("price") for item in recorded.items] == [None] * 3
        truth = [item["price"] for item in site.ground_truth("panel")[:3]]

        messages: list[Message] = []
        app = TuiAgentApp(settings.db, open_session=recorded.session_id, settings=settings)
        async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen))
            screen = app.screen
            assert isinstance(screen, SessionScreen)
            table = screen.query_one(ItemsTable)
            await pilot.press("tab")
            await wait_until(pilot, lambda: table.has_focus_within)
            while table.focused_field != "price":
                await pilot.press("right")
            await pilot.press("f")
            await wait_until(pilot, lambda: isinstance(app.screen, FeedbackModal))
            logic = str(app.screen.query_one("#current-logic").render())
            assert 'DETAILS_FIELDS["price"] = ".field-cost"' in logic
            await pick_issue(pilot, "missing")
            await type_into(pilot, ".field-price")
            await pilot.click("#refine")
            await wait_until(pilot, lambda: isinstance(app.screen, DiffScreen), SANDBOX_WAIT)
            await pilot.press("ctrl+y")
            await wait_until(
                pilot, lambda: bool(posted(messages, VersionDecisionRecorded)), SANDBOX_WAIT
            )
            await wait_until(pilot, lambda: [i.get("price") for i in screen.state.items] == truth)
            await wait_until(pilot, lambda: table.has_focus_within)  # back from the diff
            await pilot.press("f")  # the modal now shows the accepted binding
            await wait_until(pilot, lambda: isinstance(app.screen, FeedbackModal))
            logic = str(app.screen.query_one("#current-logic").render())
            assert 'DETAILS_FIELDS["price"] = ".field-price"' in logic

    events = await stored_events(settings.db, recorded.session_id)
    artifacts = [e for e in events if isinstance(e, Artifact)]
    assert [(a.name, a.version, a.candidate) for a in artifacts] == [
        ("recipe", 1, False),
        ("recipe", 2, True),
    ]
    assert json.loads(artifacts[1].content)["bindings"]["DETAILS_FIELDS"]["price"] == ".field-price"
    assert not [e for e in events if isinstance(e, LLMCall)]
    [decision] = [e for e in events if isinstance(e, VersionDecided)]
    assert decision.accepted


@pytest.mark.parametrize("leave", ["escape", "quit"])
async def test_leaving_mid_refinement_records_that_it_was_cancelled(
    settings: Settings, server: ScriptedModel, leave: str
) -> None:
    session_id = await transformer_session(settings)
    server.push(replace(reply(FIXED, "Slowly. " * 400), chunk_delay=0.05))  # still streaming
    app = TuiAgentApp(settings.db, open_session=session_id, settings=settings)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen))
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await give_feedback_and_refine(pilot, screen)
        await wait_until(pilot, lambda: bool(screen.state.steps.get(2)), SANDBOX_WAIT)
        if leave == "escape":
            # (from the pane: Escape with the items table focused hits a bug of the table's)
            screen.query_one(StreamPane).focus()
            await pilot.press("escape")
            await wait_until(pilot, lambda: not screen.is_attached)
        else:
            await app.action_quit()  # work runs: it asks first, a second ctrl+q quits
            await wait_until(pilot, lambda: isinstance(app.screen, QuitModal))
            await pilot.press("ctrl+q")
    events = await stored_events(settings.db, session_id)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert isinstance(events[-1], Log) and events[-1].message == "The refinement was cancelled."
    assert not [e for e in events if isinstance(e, Artifact) and e.candidate]
