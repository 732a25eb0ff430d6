"""Driving a conversation session as a user would: record it for real, and say the next
message each time a turn ends (or, mid-run, when a chosen event is recorded)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tui_agent.agents.launch import Launch
from tui_agent.agents.step_loop import Conversation
from tui_agent.events import Event, TurnEnded
from tui_agent.recorder import SessionRecorder
from tui_agent.session import SessionState
from tui_agent.store import Store

Trigger = Callable[[Event], bool]


@dataclass
class Recorded:
    """A session recorded through a real SessionRecorder, and the events as stored."""

    state: SessionState
    emitted: list[Event]
    stored: list[Event]

    def of(self, kind: type) -> list:
        return [e for e in self.stored if isinstance(e, kind)]


@dataclass
class User:
    """What the user says: `turns`, one at each turn's end (a tuple: said at once, in order;
    then the end of the
    conversation); `during`: (trigger, action) pairs, each done once, when an event matching
    its trigger is recorded (say a message mid-run, interrupt)."""

    conversation: Conversation
    turns: list[str | tuple[str, ...]]
    during: list[tuple[Trigger, Callable[[Conversation], object]]] = field(default_factory=list)

    def heard(self, event: Event, _state: SessionState) -> None:
        for pair in list(self.during):
            trigger, action = pair
            if trigger(event):
                self.during.remove(pair)
                asyncio.get_running_loop().call_soon(action, self.conversation)
        if isinstance(event, TurnEnded):
            if self.turns:
                said = self.turns.pop(0)
                for text in (said,) if isinstance(said, str) else said:
                    self.conversation.say(text)
            else:
                self.conversation.end()


async def converse(db: Path, launch: Launch, user: User) -> Recorded:
    """Record `launch` (a new session, or a continued one) into `db`, `user` talking to it."""
    emitted: list[Event] = []

    def keep(event: Event, _state: SessionState) -> None:
        emitted.append(event)

    async with await Store.open(db) as store:
        if launch.continues:
            recorder = await SessionRecorder.resume(store, launch.session_id, [keep, user.heard])
            state = await recorder.go_on(launch.events)
        else:
            recorder = SessionRecorder(store, launch.session_id, [keep, user.heard])
            state = await recorder.run(launch.started, launch.events)
        stored = await store.events(recorder.session_id)
    return Recorded(state, emitted, stored)
