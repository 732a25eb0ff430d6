"""Helpers for the CodeAct tests: the sandbox to use, recording a session, a scripted approver.

Code runs in the docker sandbox when it works here, else under bubblewrap; under CI (CI=true)
a missing docker fails the tests instead of falling back.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

from tui_agent.agents.approval import Decision
from tui_agent.events import Event, SessionStarted
from tui_agent.recorder import SessionRecorder
from tui_agent.session import SessionState
from tui_agent.store import Store


@dataclass
class Recorded:
    """A session recorded through a real SessionRecorder, and the events as stored."""

    state: SessionState
    emitted: list[Event]
    stored: list[Event]

    def of(self, kind: type) -> list:
        return [e for e in self.stored if isinstance(e, kind)]

    @property
    def types(self) -> list[str]:
        return [e.type for e in self.stored]


async def record(db: Path, started: SessionStarted, agent: AsyncIterator[Event]) -> Recorded:
    """Run `agent` as a session into the SQLite file `db`."""
    emitted: list[Event] = []
    async with await Store.open(db) as store:
        recorder = SessionRecorder(store, listeners=[lambda event, _state: emitted.append(event)])
        state = await recorder.run(started, agent)
        stored = await store.events(recorder.session_id)
    return Recorded(state, emitted, stored)


@dataclass
class ScriptedApprover:
    """An Approver that answers from a list, and remembers what it was asked."""

    decisions: list[Decision]
    asked: list[tuple[int, str]] = field(default_factory=list)

    async def approve(self, step: int, code: str) -> Decision:
        self.asked.append((step, code))
        return self.decisions.pop(0)
