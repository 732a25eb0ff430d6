"""The tools of a session in one place: the configured MCP servers connected, their packages
(and workspace_tools) generated in a folder of the host's, and the router answering a
program's calls."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tui_agent.tools.bridge import DEFAULT_CALL_TIMEOUT, ToolRouter
from tui_agent.tools.catalog import WORKSPACE_TOOLS
from tui_agent.tools.client import ToolServers
from tui_agent.tools.config import McpConfig
from tui_agent.tools.discovery import discovery_text
from tui_agent.tools.generate import Generated, generate_packages
from tui_agent.tools.workspace import WorkspaceGuard


@dataclass
class Toolset:
    """Connected servers, generated packages, and the guard of the workspace tools."""

    servers: ToolServers
    guard: WorkspaceGuard
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    packages: tuple[Generated, ...] = ()
    workspace_package: Generated | None = None

    @classmethod
    def prepare(
        cls,
        config: McpConfig,
        workspace: Path,
        *,
        read_roots: Sequence[str] = (".",),
        write_roots: Sequence[str] = (".",),
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
    ) -> Toolset:
        """Check the read and write roots (WorkspaceRootError); nothing is started yet."""
        guard = WorkspaceGuard(workspace, read_roots, write_roots)
        return cls(servers=ToolServers(config), guard=guard, call_timeout=call_timeout)

    async def connect(self) -> None:
        """Start every server and list its tools (ServerStartError)."""
        await self.servers.start()

    async def generate(self, folder: Path) -> list[Generated]:
        """Write the packages in `folder` (a host folder the sandbox only reads), each unless
        it is there already as the host would write it; all of them, written or not."""
        listings = [*self.servers.listings, WORKSPACE_TOOLS]
        generated = await asyncio.to_thread(generate_packages, listings, folder)
        self.packages = tuple(generated[:-1])
        self.workspace_package = generated[-1]
        return generated

    def router(self) -> ToolRouter:
        return ToolRouter(self.servers, self.guard, self.call_timeout)

    def discovery(self) -> str:
        """What discover_code_files answers (after `generate`)."""
        assert self.workspace_package is not None, "generate the packages first"
        return discovery_text(self.packages, self.workspace_package)

    async def close(self) -> None:
        await self.servers.close()
