"""A prepared session (`Launch`) and what a front end provides to prepare one."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tui_agent.agents.approval import Approver
from tui_agent.agents.requests import RequestBase
from tui_agent.agents.step_loop import Continuation, Conversation
from tui_agent.events import Event, SessionStarted

if TYPE_CHECKING:
    from tui_agent.agents.task.breaker import CircuitBreaker
    from tui_agent.agents.task.cache import CodeCache
    from tui_agent.agents.task.session import TaskSession
    from tui_agent.web.browser import Browser


@dataclass(frozen=True)
class Provided:
    """What the front end provides: who approves runs (a modal, a terminal prompt; None:
    nobody can), the session's id, the task executor's code cache and circuit breaker (None:
    the process's own); for the chat-like agents, the user's side of the conversation (None:
    one turn) and what the session continues from (None: nothing, it is new); for the web
    kinds, a running browser to use (None: a Chromium of the session's own)."""

    session_id: str
    approver: Approver | None = None
    cache: CodeCache | None = None
    breaker: CircuitBreaker | None = None
    conversation: Conversation | None = None
    continuation: Continuation | None = None
    browser: Browser | None = None
    """A Chromium the web kinds use instead of one of their own (a batch worker's, kept
    running from item to item)."""


@dataclass(frozen=True)
class Launch:
    """A session ready to record: every check passed, nothing recorded or started yet.

    `request` is the request as started (settings-backed fields resolved), `started` its
    first event (carrying that request), `events` the agent's stream after it, to record
    under `session_id`. `approval`: each run waits for the approver. `task`: a task or
    workflow session, whose updated context is read once the events are exhausted.
    `conversation`: the user's side of a session of turns (what the front end says to it).
    """

    request: RequestBase
    started: SessionStarted
    events: AsyncIterator[Event]
    session_id: str
    approval: bool = False
    task: TaskSession | None = None
    conversation: Conversation | None = None
    continues: bool = False
    """The session exists: `started` is its stored first event, and `events` are appended to
    it (a continued session; a fork is a new one)."""
