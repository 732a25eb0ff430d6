"""The launch path as the TUI calls it (`prepare_in_tui`: in a thread, its checks may wait
for a page or a server), and retrying a session that failed from its screen: close its model
server's circuit (a server that failed is otherwise skipped for a cool-down), then start the
same request again as a new session."""

from __future__ import annotations

from textual.app import App

from tui_agent.agents.launch import Launch, prepare
from tui_agent.agents.requests import RequestBase, request_from_json
from tui_agent.agents.step_loop import Conversation
from tui_agent.agents.task.breaker import BREAKER, model_server
from tui_agent.config import Settings
from tui_agent.session import SessionState
from tui_agent.store.task_cache import TaskCache
from tui_agent.tui.screens.approval import ModalApprover

RETRY_KEY = "ctrl+t"
RETRY_HINT = "ctrl+t on the session's screen retries at once"
"""What the circuit-open message says in the TUI (the CLI's says a new command tries it)."""
RETRYABLE_STATUSES = ("failed", "stopped", "interrupted", "cancelled")


def retryable(state: SessionState) -> bool:
    """Whether `state`'s session ended without completing and recorded the request it was
    started with, whole (a masked context is not in the store: it cannot be sent again)."""
    return (
        state.status in RETRYABLE_STATUSES
        and state.request is not None
        and not state.request_masked
        and state.kind != "batch"
    )


def close_circuit(state: SessionState, settings: Settings) -> bool:
    """Close the circuit of the model server `state`'s request used; whether it was open."""
    request = state.request or {}
    model = request.get("model") or state.model or settings.model or ""
    api_base = request.get("api_base")
    if api_base is None:  # the request took the settings' server
        api_base = settings.api_base
    return BREAKER.close(model_server(model, api_base or None))


def prepare_in_tui(app: App[object], request: RequestBase, settings: Settings) -> Launch:
    """`request` through the launch path as the TUI starts sessions: approvals in a modal,
    the task cache, a conversation for a conversational kind (raises RequestError when a
    check fails); call from a thread."""
    return prepare(
        request,
        settings,
        approver=ModalApprover(app),
        cache=TaskCache(settings.db),
        conversation=Conversation() if request.conversational else None,
    )


def relaunch(app: App[object], state: SessionState, settings: Settings) -> Launch:
    """The same request prepared again (raises RequestError when a check now fails); call
    from a thread."""
    return prepare_in_tui(app, request_from_json(state.request), settings)
