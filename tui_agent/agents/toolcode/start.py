"""Starting a tool code session: everything checked before anything is recorded."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Literal

from tui_agent.agents.approval import Approver
from tui_agent.agents.codeact import session_title
from tui_agent.agents.step_loop import DEFAULT_MAX_STEPS, StepLimits, session_parts
from tui_agent.agents.toolcode.loop import DEFAULT_TIMEOUT, run_toolcode
from tui_agent.agents.workspace_files import workspace_of
from tui_agent.config import ConfigError, Settings
from tui_agent.events import Event, SessionStarted
from tui_agent.llm.provider import tools_supported
from tui_agent.tools import DEFAULT_CALL_TIMEOUT, McpConfig, Toolset, load_mcp_config

ToolProtocol = Literal["auto", "native", "text"]
""""auto": native tool calls when the model has them, else the text protocol."""


def mcp_config_for(path: Path | None, settings: Settings, servers: Sequence[str] = ()) -> McpConfig:
    """The config at `path`, else at the settings' `mcp_config` (TUI_AGENT_MCP_CONFIG), keeping
    only `servers` when given; ConfigError / McpConfigError say what is wrong."""
    chosen = path or settings.mcp_config
    if chosen is None:
        raise ConfigError("no MCP servers: pass --mcp FILE or set TUI_AGENT_MCP_CONFIG")
    return load_mcp_config(chosen).select(list(servers))


def toolcode_session(
    task: str,
    *,
    settings: Settings,
    mcp: McpConfig,
    sandbox_name: str | None = None,
    workspace: Path | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    budget: float | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    call_timeout: float = DEFAULT_CALL_TIMEOUT,
    read_roots: Sequence[str] = (".",),
    write_roots: Sequence[str] = (".",),
    tool_protocol: ToolProtocol = "auto",
    approve: bool = False,
    approver: Approver | None = None,
) -> tuple[SessionStarted, AsyncIterator[Event]]:
    """The SessionStarted and the agent of a tool code session, ready for a SessionRunner.

    Checked first, each failure one line: the task and limits, the model (set, known, its key
    present, priced for a budget), the sandbox backend, the read and write roots, and approval
    (asked for, or forced by the unisolated local backend, needs an `approver`). The servers
    start when the agent is first iterated; one that cannot is the session's error.
    """
    if not task.strip():
        raise ConfigError("the task is empty: say what the agent should do")
    if max_steps < 1:
        raise ConfigError("max steps must be at least 1")
    if timeout <= 0 or call_timeout <= 0:
        raise ConfigError("timeouts must be positive numbers of seconds")
    if budget is not None and budget <= 0:
        raise ConfigError("the budget must be a positive amount of USD")
    if tool_protocol not in ("auto", "native", "text"):
        raise ConfigError(f"tool protocol {tool_protocol!r}: choose auto, native or text")
    parts = session_parts(
        settings,
        budget=budget,
        sandbox_name=sandbox_name,
        workspace=workspace,
        approve=approve,
        approver=approver,
        runs="program",
    )
    llm, sandbox = parts.llm, parts.sandbox
    root = workspace_of(sandbox)
    assert root is not None, "every backend has a workspace"
    toolset = Toolset.prepare(
        mcp, root, read_roots=read_roots, write_roots=write_roots, call_timeout=call_timeout
    )
    if tool_protocol == "auto":
        use_tools = tools_supported(llm.model, llm.api_base)
    else:
        use_tools = tool_protocol == "native"
    started = SessionStarted(
        kind="toolcode",
        title=session_title(task),
        model=llm.model,
        params={
            "task": task,
            "mcp_config": str(mcp.path),
            "servers": [entry.name for entry in mcp.servers],
            "sandbox": sandbox.name,
            "max_steps": max_steps,
            "budget": budget,
            "timeout": timeout,
            "call_timeout": call_timeout,
            "read_roots": list(read_roots),
            "write_roots": list(write_roots),
            "tool_protocol": "native" if use_tools else "text",
            "approve": parts.approver is not None,
        },
    )
    limits = StepLimits(max_steps=max_steps, budget=budget, timeout=timeout)
    agent = run_toolcode(
        task,
        llm=llm,
        sandbox=sandbox,
        toolset=toolset,
        limits=limits,
        use_tools=use_tools,
        approver=parts.approver,
    )
    return started, agent
