"""A step that only answers (a small model's `Final answer:` line, no thought) is a card
holding its answer box and nothing else: no blank rows from parts it does not have."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from session_factory import at_fixed_times, started, store_events, wait_until
from textual.containers import Vertical

from tui_agent.events import (
    CodeProposed,
    Event,
    ExecutionFinished,
    ExecutionStarted,
    FinalAnswer,
    SessionEnded,
    Thought,
)
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.widgets.step_card import StepCard

SESSION = "a115e0000001"

pytestmark = pytest.mark.usefixtures("utc")


@pytest.fixture
def answered(db_path: Path) -> Path:
    payloads: list[Event] = [
        Thought(step=1, text="Write it and try it."),
        CodeProposed(step=1, code="def double(x):\n    return x * 2\n\nprint(double(21))"),
        ExecutionStarted(step=1, backend="docker"),
        ExecutionFinished(step=1, success=True, duration=0.1, result=42),
        Thought(step=2, text=""),
        FinalAnswer(step=2, text="double(21) is 42."),
    ]
    events = at_fixed_times(
        SESSION, started("Write double(x)"), payloads, SessionEnded(status="completed")
    )
    asyncio.run(store_events(db_path, events))
    return db_path


@pytest.mark.parametrize("size", [(120, 36), (80, 24)])
async def test_an_answer_only_step_is_its_answer_box(answered: Path, size: tuple[int, int]):
    app = TuiAgentApp(answered, open_session=SESSION)
    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: len(pilot.app.screen.query(".final")) == 1)
        await pilot.pause()
        ran, answer = pilot.app.screen.query(StepCard)
        assert not ran.files.display and not answer.files.display  # they wrote no files
        box = answer.query_one(".final", Vertical)
        assert box.region.y == answer.region.y + 1  # right under the card's top border
        assert answer.region.height == box.region.height + 2
