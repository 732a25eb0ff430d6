"""Starting an exec session: one program in a sandbox, its page rendered on the host."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_agent.agents.browsing import browser_for
from tui_agent.agents.execute import exec_started, run_sandboxed
from tui_agent.agents.launch.checks import sandbox_for
from tui_agent.agents.launch.prepared import Launch, Provided
from tui_agent.agents.requests import ExecRequest, RequestError
from tui_agent.sandbox.wire import ExecuteRequest
from tui_agent.web.browser import BrowserError
from tui_agent.web.navigation import check_navigable

if TYPE_CHECKING:
    from tui_agent.config import Settings


def start_exec(request: ExecRequest, settings: Settings, provided: Provided) -> Launch:
    """The run of an exec session. The sandbox is chosen now, so a missing backend is refused
    before anything is recorded; the events start it and close it. Without a workspace, the
    session gets a fresh one of its own."""
    url = None
    if request.url:
        try:
            url = check_navigable(request.url, settings.allow_file_urls)
        except BrowserError as exc:
            raise RequestError("url", str(exc)) from None
    run = ExecuteRequest(
        code=request.code,
        args=list(request.args),
        context=request.context,
        url=url,
        timeout=request.timeout,
    )
    sandbox = sandbox_for(request.sandbox, request.workspace, network=request.network)
    started = exec_started(
        run,
        request.title,
        request.model,
        request.agent_type,
        network=request.network,
        stored=request.to_json(),
    )
    events = run_sandboxed(sandbox, run, browser_for(settings, url))
    return Launch(request, started, events, provided.session_id)
