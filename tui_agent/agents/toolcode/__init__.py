"""The tool code agent: MCP servers as typed Python packages that the model's programs import
and chain, many tool calls in one run instead of one per model turn."""

from tui_agent.agents.step_loop import DEFAULT_MAX_STEPS
from tui_agent.agents.toolcode.loop import DEFAULT_TIMEOUT, run_toolcode

__all__ = [
    "DEFAULT_MAX_STEPS",
    "DEFAULT_TIMEOUT",
    "run_toolcode",
]
