"""A correct value typed as an expression, end to end: a generic exec session recorded by the
real exec agent (half its totals empty), the feedback form offering `qty * price` as an
expression, the feedback recorded as one, one refinement attempt of the scripted model run in
the bubblewrap sandbox, checked per item: fixed, the candidate kept, no attempt spent more."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from session_factory import wait_until
from support.requirements import require_backend
from support.scripted_model import ScriptedModel, action_reply
from support.sessions import record_exec, scripted_settings
from test_app import stored_events
from test_feedback_modal import pick_issue, type_into
from textual.pilot import Pilot
from textual.widgets import Checkbox, Label, Static

from tui_agent.config import Settings
from tui_agent.events import Artifact, FeedbackSubmitted, LLMCall, RefinementProgress
from tui_agent.sandbox.wire import ExecuteRequest
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.screens.diff import DiffScreen
from tui_agent.tui.screens.feedback import FeedbackModal
from tui_agent.tui.screens.session import SessionScreen
from tui_agent.tui.widgets.items_table import ItemsTable

SIZE = (110, 40)
SANDBOX_WAIT = 120.0
"""Seconds to wait for sandbox runs (the machine may be busy; never asserted as a timing)."""

ORDERS = [
    {"name": "Oak desk", "qty": 1, "price": 100.0},
    {"name": "Lamp", "qty": 3, "price": 19.99},
    {"name": "Rug", "qty": 1, "price": 120.0},
    {"name": "Pine shelf", "qty": 4, "price": 12.5},
]
CODE = """\
def main(orders):
    return [
        {{"name": o["name"], "qty": o["qty"], "price": o["price"], "total": {total}}}
        for o in orders
    ]
"""
ORIGINAL = CODE.format(total='o["price"] if o["qty"] == 1 else None')
FIXED = CODE.format(total='o["qty"] * o["price"]')


@pytest.fixture
def settings(tmp_path: Path, server: ScriptedModel) -> Settings:
    require_backend("bubblewrap")
    return scripted_settings(server, tmp_path, "bubblewrap")


async def generic_session(settings: Settings) -> str:
    """Orders whose total is filled only where qty is 1 (coverage 50 %)."""
    state = await record_exec(settings, ExecuteRequest(code=ORIGINAL, args=[ORDERS]), "orders")
    assert state.agent_type == "generic"
    assert [item["total"] for item in state.items] == [100.0, None, 120.0, None]
    return state.session_id


async def open_feedback_on_total(pilot: Pilot[Any], screen: SessionScreen) -> FeedbackModal:
    table = screen.query_one(ItemsTable)
    await pilot.press("tab")
    await wait_until(pilot, lambda: table.has_focus_within)
    while table.focused_field != "total":
        await pilot.press("right")
    await pilot.press("f")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, FeedbackModal))
    modal = pilot.app.screen
    assert isinstance(modal, FeedbackModal)
    return modal


async def test_an_expression_value_is_offered_recorded_and_checked_per_item(
    settings: Settings, server: ScriptedModel
) -> None:
    session_id = await generic_session(settings)
    server.push(
        action_reply("The total is qty times price.", "execute_code", code=FIXED, chunk_size=24)
    )
    app = TuiAgentApp(settings.db, open_session=session_id, settings=settings)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen))
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        modal = await open_feedback_on_total(pilot, screen)
        logic = str(modal.query_one("#current-logic", Static).render())
        assert 'o["price"] if o["qty"] == 1 else None' in logic
        await pick_issue(pilot, "missing")
        await type_into(pilot, "qty * price")
        box = modal.query_one("#value-is-expression", Checkbox)
        await wait_until(pilot, lambda: box.is_on_screen and box.value)
        note = str(modal.query_one("#value-kind", Label).render())
        assert note == "computed per item from qty, price (item 1: 100.0)"
        await pilot.press("ctrl+r")

        await wait_until(pilot, lambda: isinstance(app.screen, DiffScreen), SANDBOX_WAIT)
        diff = app.screen
        assert isinstance(diff, DiffScreen)
        await wait_until(pilot, lambda: bool(diff.query("#diff-summary")))
        summary = str(diff.query_one("#diff-summary", Static).content)
        assert summary.split("\n")[0].split() == ["✓", "total", "50%", "→", "100%", "fixed"]

    events = await stored_events(settings.db, session_id)
    [feedback] = [e for e in events if isinstance(e, FeedbackSubmitted)]
    [given] = feedback.feedback
    assert (given.field, given.issue, given.correct_expression, given.correct_value) == (
        "total",
        "missing",
        "qty * price",
        None,
    )
    [candidate] = [e for e in events if isinstance(e, Artifact) and e.candidate]
    assert candidate.content == FIXED
    [change] = candidate.changes
    assert (change.field, change.before, change.after, change.verdict) == (
        "total",
        0.5,
        1.0,
        "fixed",
    )
    last = [e for e in events if isinstance(e, RefinementProgress)][-1]
    assert (last.attempt, last.fixed, last.remaining) == (1, ["total"], [])
    assert len([e for e in events if isinstance(e, LLMCall)]) == 1
    assert server.remaining == 0


async def test_unticked_the_value_is_the_literal_text(
    settings: Settings, server: ScriptedModel
) -> None:
    session_id = await generic_session(settings)
    app = TuiAgentApp(settings.db, open_session=session_id, settings=settings)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen))
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        modal = await open_feedback_on_total(pilot, screen)
        await pick_issue(pilot, "wrong")
        await type_into(pilot, "qty * price")
        box = modal.query_one("#value-is-expression", Checkbox)
        await wait_until(pilot, lambda: box.value)
        await pilot.press("tab", "space")  # untick: the user's choice sticks as they type
        await wait_until(pilot, lambda: not box.value)
        note = modal.query_one("#value-kind", Label)
        assert str(note.render()) == "checked as the text 'qty * price'"
        await pilot.press("shift+tab", "end", "space")
        await pilot.pause()
        assert not box.value
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: app.screen is screen and bool(screen.state.feedback))
    events = await stored_events(settings.db, session_id)
    [feedback] = [e for e in events if isinstance(e, FeedbackSubmitted)]
    [given] = feedback.feedback
    assert (given.correct_value, given.correct_expression) == ("qty * price", None)
