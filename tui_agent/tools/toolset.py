"""The tools of a session in one place: the configured MCP servers connected, their packages
(and workspace_tools) generated in the workspace, and the router answering a program's calls."""

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
from tui_agent.tools.workspace import INTERNAL, WorkspaceGuard, WorkspaceRootError

PACKAGES_FOLDER = "packages"


def packages_folder(workspace: Path) -> Path:
    """Where a workspace's generated packages live: `<workspace>/.toolcode/packages`."""
    return Path(workspace) / INTERNAL / PACKAGES_FOLDER


@dataclass
class Toolset:
    """Connected servers, generated packages, and the guard of the workspace tools."""

    servers: ToolServers
    guard: WorkspaceGuard
    folder: Path
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
        folder: Path | None = None,
    ) -> Toolset:
        """Check the roots and the packages' folder, which must be inside the workspace for
        the sandbox to see it (WorkspaceRootError); nothing is started yet."""
        guard = WorkspaceGuard(workspace, read_roots, write_roots)
        folder = Path(folder).resolve() if folder else packages_folder(guard.root)
        if not folder.is_relative_to(guard.root):
            raise WorkspaceRootError(
                f"the packages folder {folder} is outside the workspace {guard.root}, where "
                "the sandbox cannot import them"
            )
        return cls(
            servers=ToolServers(config),
            guard=guard,
            folder=folder,
            call_timeout=call_timeout,
        )

    async def connect(self) -> None:
        """Start every server and list its tools (ServerStartError)."""
        await self.servers.start()

    async def generate(self) -> list[Generated]:
        """Write the packages whose tool list changed; all of them, written or not."""
        listings = [*self.servers.listings, WORKSPACE_TOOLS]
        generated = await asyncio.to_thread(generate_packages, listings, self.folder)
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
