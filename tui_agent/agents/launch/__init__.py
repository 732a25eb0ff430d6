"""The one launch path: a request and the settings become a session ready to record.

Every front end starts sessions through here, and none may grow its own copy: the CLI
(`cli/common.py`'s `record_request`), the TUI's new-session form, `tui-agent rerun`, workflow
nodes and batches of requests. `prepare` resolves the request's settings-backed fields, makes
every check that can be made before anything is recorded (each failure a RequestError naming
its field) and returns a `Launch`: the SessionStarted carrying the request as started, and the
agent's events after it. Nothing starts until those events are iterated.

One starter per kind (`STARTERS`), imported when that kind is started: a scrape needs
Playwright, a code session does not.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from tui_agent.agents.approval import Approver
from tui_agent.agents.launch.prepared import Launch, Provided
from tui_agent.agents.requests import RequestBase, RequestError
from tui_agent.agents.step_loop import Continuation, Conversation
from tui_agent.events import new_session_id

if TYPE_CHECKING:
    from tui_agent.agents.task.breaker import CircuitBreaker
    from tui_agent.agents.task.cache import CodeCache
    from tui_agent.config import Settings
    from tui_agent.web.browser import Browser

STARTERS: dict[str, str] = {
    "code": "tui_agent.agents.launch.code:start_code",
    "task": "tui_agent.agents.launch.task:start_task",
    "workflow": "tui_agent.agents.launch.task:start_workflow",
    "toolcode": "tui_agent.agents.launch.toolcode:start_toolcode",
    "exec": "tui_agent.agents.launch.exec:start_exec",
    "scrape": "tui_agent.agents.launch.web:start_scrape",
    "recipe": "tui_agent.agents.launch.web:start_recipe",
}
"""The starter of each kind of request that starts a session (a refinement appends to the
session it refines: `agents/refine`)."""


def prepare(
    request: RequestBase,
    settings: Settings,
    *,
    approver: Approver | None = None,
    session_id: str | None = None,
    cache: CodeCache | None = None,
    breaker: CircuitBreaker | None = None,
    conversation: Conversation | None = None,
    continuation: Continuation | None = None,
    browser: Browser | None = None,
) -> Launch:
    """The session `request` starts, checked and ready to record (see the module docstring).

    `approver` asks before each run where approval applies (None: nobody can, and a request
    that needs approval is refused); `session_id` defaults to a new one; `cache` and
    `breaker` are the task executor's code cache and circuit breaker (None: no cache, the
    process's breaker). `conversation`: a chat-like session (code, toolcode) goes on in turns
    (None: one turn); `continuation`: it continues stored events (see launch/resume.py);
    `browser`: a running Chromium the web kinds share (None: one of the session's own).
    """
    starter = _starter(request.kind)
    provided = Provided(
        session_id or new_session_id(),
        approver,
        cache,
        breaker,
        conversation,
        continuation,
        browser,
    )
    launch: Launch = starter(request.resolved(settings), settings, provided)
    return launch


def _starter(kind: str) -> Any:
    target = STARTERS.get(kind)
    if target is None:
        raise RequestError("kind", f"a {kind} request does not start a session of its own")
    module, name = target.split(":")
    return getattr(importlib.import_module(module), name)


__all__ = ["STARTERS", "Launch", "Provided", "prepare"]
