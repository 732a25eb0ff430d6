"""Continuing a stored session, or forking one at a step, through the one launch path.

The request is the one the session stored (`--model` may replace its model). A continued
session keeps its id and its workspace (the files its code wrote are still there) and appends
to its events; a fork is a new session, linked to its parent (`SessionStarted.parent`), that
records the parent's events up to the step again, in a workspace of its own. Either way the
history comes from the stored events and the sandbox's state is rebuilt by running the
successful code again (or not: `restore="clean"`); see step_loop/resume.py.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tui_agent.agents.approval import Approver
from tui_agent.agents.launch import prepare
from tui_agent.agents.launch.prepared import Launch
from tui_agent.agents.launch.rerun import rerun_request
from tui_agent.agents.requests import REQUEST_CLASSES, RequestError
from tui_agent.agents.step_loop import Continuation, Conversation, fork_events
from tui_agent.agents.step_loop.resume import Restore, RestoreChoices, last_step
from tui_agent.events import (
    OPEN_STATUSES,
    Event,
    ExecutionFinished,
    ForkOrigin,
    SessionStarted,
    new_session_id,
)
from tui_agent.sandbox.folders.workspaces import known_workspace
from tui_agent.session import fold

if TYPE_CHECKING:
    from pathlib import Path

    from tui_agent.config import Settings


def continue_session(
    stored: Sequence[Event],
    settings: Settings,
    *,
    message: str | None,
    choices: RestoreChoices,
    restore: Restore = "state",
    model: str | None = None,
    api_base: str | None = None,
    fork_at: int | None = None,
    imported: bool = False,
    approver: Approver | None = None,
    conversation: Conversation | None = None,
) -> Launch:
    """The session that continues `stored` (a fork of it at step `fork_at`, when given), with
    `message` opening its next turn (None: it waits for one, through `conversation`); `model`
    and `api_base` replace the stored request's when given."""
    first = stored[0] if stored else None
    if not isinstance(first, SessionStarted):
        raise RequestError(None, "it does not begin with its start, so it cannot be continued")
    kind = (first.request or {}).get("kind")
    cls = REQUEST_CLASSES.get(str(kind))
    if cls is None or not cls.conversational:
        raise RequestError(None, f"only code and toolcode sessions continue, not {kind or 'this'}")
    if imported:
        raise RequestError(
            None, "it was imported from a file; `tui-agent rerun` runs it again as a new session"
        )
    request = rerun_request(first, model=model, api_base=api_base)
    if fork_at is None and fold(stored).status in OPEN_STATUSES:
        raise RequestError(
            None, "it has not ended (another process still runs it): fork it, or wait for its end"
        )
    if fork_at is None:
        events = list(stored)
        session_id = first.session_id
        workspace = _own_workspace(stored)
        if workspace is not None and getattr(request, "workspace", None) is None:
            request = request.model_copy(update={"workspace": workspace})
    else:
        steps = last_step(stored)
        if not 1 <= fork_at <= steps:
            raise RequestError(None, f"it has steps 1 to {steps}; there is no step {fork_at}")
        events = fork_events(stored, fork_at)
        session_id = new_session_id()
    continuation = Continuation(
        events, message=message, restore=restore, choices=choices, fork=fork_at is not None
    )
    launch = prepare(
        request,
        settings,
        approver=approver,
        session_id=session_id,
        conversation=conversation,
        continuation=continuation,
    )
    if fork_at is None:
        return dataclasses.replace(launch, started=first, continues=True)
    parent = ForkOrigin(session_id=first.session_id, at_step=fork_at)
    return dataclasses.replace(launch, started=launch.started.model_copy(update={"parent": parent}))


def _own_workspace(events: Sequence[Event]) -> Path | None:
    """The workspace the session's code last ran in, when this machine gave it and it is
    still there."""
    for event in reversed(events):
        if isinstance(event, ExecutionFinished) and event.workspace:
            path = known_workspace(event.workspace)
            return path if path is not None and path.is_dir() else None
    return None
