"""The request of a tool code session: a task, the MCP servers whose tools the model's programs
call as Python functions, and the limits."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, ClassVar, Literal

from tui_agent.agents.requests.base import (
    Option,
    RequestBase,
    Seconds,
    ToolProtocol,
    Usd,
    non_blank,
)
from tui_agent.agents.requests.fields import (
    ApiBase,
    ContextTokens,
    MaxSteps,
    MaxTokens,
    Model,
    Sandbox,
    Temperature,
    TopP,
    Workspace,
)

McpConfig = Annotated[
    Path | None,
    Option(
        'MCP servers config ({"mcpServers": {...}}; default: TUI_AGENT_MCP_CONFIG)',
        flag="--mcp",
        metavar="FILE",
        label="MCP servers config (empty: TUI_AGENT_MCP_CONFIG)",
        placeholder="path/to/servers.json",
        setting=True,
    ),
]
Servers = Annotated[
    list[str],
    Option("use only this server of the config (repeatable)", flag="--server", metavar="NAME"),
]
Roots = list[str]


class ToolcodeRequest(RequestBase):
    """`tui-agent toolcode "TASK" --mcp FILE`: the model writes programs that import the MCP
    servers' tools as Python functions and chain them in the sandbox."""

    kind: Literal["toolcode"] = "toolcode"
    approval_unit: ClassVar[str | None] = "program"
    conversational: ClassVar[bool] = True
    summary: ClassVar[str] = "programs that chain MCP tools as Python calls"

    model: Model = None
    api_base: ApiBase = None
    task: Annotated[
        str,
        Option(
            "what the agent should do, in words",
            metavar="TASK",
            label="Task",
            placeholder="Price every kitchen product and save a table",
        ),
        non_blank("the task is empty. What should the programs do?"),
    ]
    mcp_config: McpConfig = None
    servers: Servers = []
    max_steps: MaxSteps = 10
    sandbox: Sandbox = None
    workspace: Workspace = None
    timeout: Annotated[
        Seconds, Option("seconds per program ({default:g})", flag="--timeout", metavar="S")
    ] = 30.0
    call_timeout: Annotated[
        Seconds,
        Option(
            "seconds per tool call inside a program ({default:g})",
            flag="--call-timeout",
            metavar="S",
        ),
    ] = 20.0
    budget: Annotated[
        Usd | None,
        Option("stop before a call past this cost", flag="--budget", metavar="USD"),
    ] = None
    read_roots: Annotated[
        Roots,
        Option(
            "workspace folder the workspace tools may read (repeatable; default: all of it)",
            flag="--read-root",
            metavar="DIR",
        ),
    ] = ["."]
    write_roots: Annotated[
        Roots,
        Option(
            "workspace folder the workspace tools may write (repeatable; default: all of it)",
            flag="--write-root",
            metavar="DIR",
        ),
    ] = ["."]
    tool_protocol: Annotated[
        ToolProtocol,
        Option(
            "native tool calls, or CALL lines for models without them (auto: ask litellm)",
            flag="--tool-protocol",
        ),
    ] = "auto"
    approve: Annotated[
        bool,
        Option("ask before each program runs (always on with --sandbox local)", flag="--approve"),
    ] = False
    context_tokens: ContextTokens = None
    temperature: Temperature = None
    max_tokens: MaxTokens = None
    top_p: TopP = None
