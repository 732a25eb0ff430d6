"""Starting a tool code session: the MCP servers' config, the model, the sandbox, the roots and
approval are checked before anything is recorded; the servers start with the events."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tui_agent.agents.launch.checks import (
    BUDGET_ADVICE,
    ModelOptions,
    approval,
    model_for,
    model_maker,
    sandbox_for,
)
from tui_agent.agents.launch.prepared import Launch, Provided
from tui_agent.agents.requests import RequestError, ToolcodeRequest
from tui_agent.agents.step_loop import StepLimits
from tui_agent.agents.toolcode.loop import run_toolcode
from tui_agent.agents.workspace_files import workspace_of
from tui_agent.events import SessionStarted
from tui_agent.formatting import session_title
from tui_agent.llm.provider import tools_supported
from tui_agent.tools import (
    McpConfig,
    McpConfigError,
    Toolset,
    WorkspaceRootError,
    load_mcp_config,
)

if TYPE_CHECKING:
    from tui_agent.config import Settings


def mcp_servers(config: Path | None, servers: Sequence[str] = ()) -> McpConfig:
    """The MCP servers of the config file `config`, only `servers` when named."""
    if config is None:
        raise RequestError("mcp_config", "no MCP servers", unset=True)
    try:
        loaded = load_mcp_config(config)
    except McpConfigError as exc:
        raise RequestError("mcp_config", str(exc)) from None
    try:
        return loaded.select(list(servers))
    except McpConfigError as exc:
        raise RequestError("servers", str(exc)) from None


def start_toolcode(request: ToolcodeRequest, settings: Settings, provided: Provided) -> Launch:
    """The agent of a tool code session; a server that cannot start is the session's error."""
    mcp = mcp_servers(request.mcp_config, request.servers)
    options = ModelOptions.of(request)
    llm = model_for(
        request.model,
        options,
        priced=request.budget is not None,
        budget_advice=BUDGET_ADVICE,
    )
    sandbox = sandbox_for(request.sandbox, request.workspace)
    root = workspace_of(sandbox)
    assert root is not None, "every backend has a workspace"
    approver = approval(request.approve, sandbox, provided.approver, "program")
    try:
        toolset = Toolset.prepare(
            mcp,
            root,
            read_roots=request.read_roots,
            write_roots=request.write_roots,
            call_timeout=request.call_timeout,
        )
    except WorkspaceRootError as exc:
        raise RequestError(None, str(exc)) from None
    if request.tool_protocol == "auto":
        use_tools = tools_supported(llm.model, llm.api_base)
    else:
        use_tools = request.tool_protocol == "native"
    started = SessionStarted(
        kind="toolcode",
        title=session_title(request.task),
        model=llm.model,
        params={
            "task": request.task,
            "mcp_config": str(mcp.path),
            "servers": [entry.name for entry in mcp.servers],
            "sandbox": sandbox.name,
            "max_steps": request.max_steps,
            "budget": request.budget,
            "timeout": request.timeout,
            "call_timeout": request.call_timeout,
            "read_roots": list(request.read_roots),
            "write_roots": list(request.write_roots),
            "tool_protocol": "native" if use_tools else "text",
            "approve": approver is not None,
        },
        request=request.to_json(),
    )
    limits = StepLimits(
        max_steps=request.max_steps,
        budget=request.budget,
        timeout=request.timeout,
        context_tokens=request.context_tokens or llm.context_window,
    )
    events = run_toolcode(
        request.task,
        llm=llm,
        sandbox=sandbox,
        toolset=toolset,
        limits=limits,
        use_tools=use_tools,
        approver=approver,
        conversation=provided.conversation,
        make_model=model_maker(options, priced=request.budget is not None),
        continuation=provided.continuation,
    )
    return Launch(
        request,
        started,
        events,
        provided.session_id,
        approval=approver is not None,
        conversation=provided.conversation,
    )
