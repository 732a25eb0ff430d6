"""Tools as code: MCP servers become typed Python packages that a sandboxed program imports.

`load_mcp_config` reads the servers of a config file; `ToolServers` connects them (stdio or
streamable HTTP, on the official `mcp` SDK); `generate_packages` writes one `<server>_tools`
package per server (one typed function per tool) plus `workspace_tools`, again only when a
server's tool list changed; `ToolRouter` answers the calls a running program sends over the
sandbox kernel's channel, the workspace tools behind `WorkspaceGuard`'s folder guards;
`check_program` refuses programs that reach past the tools before they run (a guard against
model mistakes; the sandbox is the security boundary). `Toolset` puts them together.
"""

from tui_agent.tools.bridge import DEFAULT_CALL_TIMEOUT, ToolRouter
from tui_agent.tools.catalog import WORKSPACE_TOOLS, ServerTools, ToolInfo
from tui_agent.tools.client import ServerStartError, ToolCallFailure, ToolServers
from tui_agent.tools.config import McpConfig, McpConfigError, ServerEntry, load_mcp_config
from tui_agent.tools.generate import Generated, GenerationError, generate_packages
from tui_agent.tools.program_guard import Refusal, check_program, refusal_text
from tui_agent.tools.results import as_error
from tui_agent.tools.toolset import Toolset
from tui_agent.tools.workspace import WorkspaceGuard, WorkspaceRootError
from tui_agent.tools.wrappers import FunctionSpec, function_specs

__all__ = [
    "DEFAULT_CALL_TIMEOUT",
    "WORKSPACE_TOOLS",
    "FunctionSpec",
    "Generated",
    "GenerationError",
    "McpConfig",
    "McpConfigError",
    "Refusal",
    "ServerEntry",
    "ServerStartError",
    "ServerTools",
    "ToolCallFailure",
    "ToolInfo",
    "ToolRouter",
    "ToolServers",
    "Toolset",
    "WorkspaceGuard",
    "WorkspaceRootError",
    "as_error",
    "check_program",
    "function_specs",
    "generate_packages",
    "load_mcp_config",
    "refusal_text",
]
