"""The tool code agent: MCP servers as typed Python packages that the model's programs import
and chain, many tool calls in one run instead of one per model turn."""

from tui_agent.agents.step_loop import DEFAULT_MAX_STEPS
from tui_agent.agents.toolcode.loop import DEFAULT_TIMEOUT, run_toolcode
from tui_agent.agents.toolcode.start import ToolProtocol, mcp_config_for, toolcode_session

__all__ = [
    "DEFAULT_MAX_STEPS",
    "DEFAULT_TIMEOUT",
    "ToolProtocol",
    "mcp_config_for",
    "run_toolcode",
    "toolcode_session",
]
