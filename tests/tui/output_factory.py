"""A stored code session with long output, for the unfold, paging and search tests: step 1
prints `lines` lines (one of them, early and so folded away, holds a needle) and returns a
long value; step 2 finds the needle again; step 3 answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from session_factory import at_fixed_times, started, store_events, wait_until
from textual.pilot import Pilot

from tui_agent.events import (
    CodeProposed,
    Event,
    ExecutionFinished,
    ExecutionStarted,
    FinalAnswer,
    LogLine,
    SessionEnded,
    Thought,
)
from tui_agent.tui.screens.session import SessionScreen
from tui_agent.tui.widgets.step_card import StepCard

SESSION = "10a6000000a1"
NEEDLE_LINE = 3
"""The output line of step 1 that holds the needle."""


def output_line(index: int) -> str:
    return "a needle in the hay" if index == NEEDLE_LINE else f"line {index} value {index * 7}"


def long_output_payloads(lines: int) -> list[Event]:
    logs = [
        LogLine(stream="stderr" if index % 50 == 0 else "stdout", text=output_line(index))
        for index in range(lines)
    ]
    return [
        Thought(step=1, text="Print many lines."),
        CodeProposed(step=1, code="for i in range(N):\n    print(f'line {i}')"),
        ExecutionStarted(step=1, backend="docker", isolated=True),
        ExecutionFinished(
            step=1, success=True, duration=1.5, result={"rows": list(range(30))}, logs=logs
        ),
        Thought(step=2, text="Now a short one."),
        CodeProposed(step=2, code="print('the needle here')"),
        ExecutionStarted(step=2, backend="docker", isolated=True),
        ExecutionFinished(
            step=2, success=True, duration=0.1, logs=[LogLine(stream="stdout", text="needle")]
        ),
        FinalAnswer(step=3, text="Done: the needle was **found**."),
    ]


async def store_long_output(db: Path, lines: int) -> Path:
    """The session stored in `db` (returned)."""
    events = at_fixed_times(
        SESSION,
        started("Long output"),
        long_output_payloads(lines),
        SessionEnded(status="completed"),
    )
    await store_events(db, events)
    return db


async def opened(pilot: Pilot[Any]) -> SessionScreen:
    """The session's screen, once the session is shown whole: completed, its three steps in."""
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, SessionScreen))
    screen = pilot.app.screen
    assert isinstance(screen, SessionScreen)
    await wait_until(pilot, lambda: screen.state.status == "completed")
    await wait_until(pilot, lambda: len(screen.query(StepCard)) == 3)
    await pilot.pause()
    return screen
