"""The host's side of a program's tool calls: each call, sent over the sandbox kernel's
channel as `<server>.<tool>`, is answered by that MCP server, or by the workspace tools behind
their folder guards. A call that cannot complete (the server is gone, or it took longer than
the per-call timeout) is a failure the program gets as ToolCallFailed; a tool's own error is
output starting with "Error:"."""

from __future__ import annotations

import asyncio

from tui_agent.sandbox.wire import ToolAnswer, ToolRequest
from tui_agent.tools.client import ToolCallFailure, ToolServers
from tui_agent.tools.config import WORKSPACE_SERVER
from tui_agent.tools.results import as_error
from tui_agent.tools.workspace import WorkspaceGuard

DEFAULT_CALL_TIMEOUT = 20.0
OUTPUT_LIMIT = 1 << 20
"""Characters of one tool's output passed on to the program (and recorded)."""


def clipped(text: str) -> str:
    """`text`, cut to OUTPUT_LIMIT characters with a note saying how much was left out."""
    if len(text) <= OUTPUT_LIMIT:
        return text
    return f"{text[:OUTPUT_LIMIT]}\n[output cut: {len(text) - OUTPUT_LIMIT:,} more characters]"


class ToolRouter:
    """Answers tool calls for `servers` and the `workspace` tools, each within
    `call_timeout` seconds."""

    def __init__(
        self,
        servers: ToolServers | None,
        workspace: WorkspaceGuard,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
    ) -> None:
        self.servers = servers
        self.workspace = workspace
        self.call_timeout = call_timeout

    async def __call__(self, request: ToolRequest) -> ToolAnswer:
        stem, _, tool = request.tool.partition(".")
        timeout = self.call_timeout
        try:
            if stem == WORKSPACE_SERVER:
                work = asyncio.to_thread(self.workspace.call, tool, request.arguments)
                try:
                    output = await asyncio.wait_for(work, timeout)
                except TimeoutError:
                    raise ToolCallFailure(
                        f"{request.tool} did not answer within {timeout:g} s"
                    ) from None
            elif self.servers is not None and self.servers.has(stem) and tool:
                output = await self.servers.call(stem, tool, request.arguments, timeout)
            else:
                output = as_error(f"no tool {request.tool!r}: call the generated functions")
        except ToolCallFailure as failure:
            return ToolAnswer(failure=str(failure))
        return ToolAnswer(output=clipped(output))
