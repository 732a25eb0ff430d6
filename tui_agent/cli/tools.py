"""`tui-agent tools generate|list --mcp FILE`: the Python packages of the MCP servers."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_agent.agents.requests import ToolcodeRequest
from tui_agent.cli.common import run, say, say_json
from tui_agent.cli.request_options import add_request_arguments, for_the_shell
from tui_agent.config import Settings

if TYPE_CHECKING:
    from tui_agent.tools import McpConfig

MCP_FIELDS = ("mcp_config", "servers")
"""The options of a tool code request that say which MCP servers to use."""


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    tools = commands.add_parser(
        "tools", parents=[common], help="the MCP servers' tools as Python packages"
    )
    actions = tools.add_subparsers(title="actions", metavar="ACTION", required=True)
    generate = actions.add_parser(
        "generate",
        parents=[common],
        help="write one <server>_tools package per server (only when its tool list changed)",
    )
    add_request_arguments(generate, ToolcodeRequest, only=MCP_FIELDS)
    generate.add_argument(
        "--out",
        type=Path,
        default=Path("tool_packages"),
        metavar="DIR",
        help="where to write them, to read or import them yourself (default: ./tool_packages; "
        "toolcode sessions write their own)",
    )
    generate.set_defaults(handler=cmd_generate)
    listing = actions.add_parser(
        "list", parents=[common], help="print the servers, their packages and functions"
    )
    add_request_arguments(listing, ToolcodeRequest, only=MCP_FIELDS)
    listing.add_argument("--json", action="store_true", help="as the JSON the model sees")
    listing.set_defaults(handler=cmd_list)


def _servers(args: argparse.Namespace, settings: Settings) -> McpConfig:
    """The servers of --mcp (or the configured file), only those --server names."""
    from tui_agent.agents.launch.toolcode import mcp_servers

    with for_the_shell(ToolcodeRequest):
        return mcp_servers(args.mcp_config or settings.mcp_config, args.servers or [])


def cmd_generate(args: argparse.Namespace, settings: Settings) -> int:
    from tui_agent.tools import WORKSPACE_TOOLS, ToolServers, generate_packages

    mcp = _servers(args, settings)
    out = args.out

    async def go() -> None:
        began = time.perf_counter()
        async with ToolServers(mcp) as servers:
            connected = time.perf_counter() - began
            generated = generate_packages([*servers.listings, WORKSPACE_TOOLS], out)
        say(f"connected to {len(mcp.servers)} server(s) in {connected * 1000:.0f} ms")
        for package in generated:
            state = "written" if package.written else "unchanged"
            count = len(package.functions)
            say(
                f"{package.server.package}: {count} function{'s' if count != 1 else ''}, "
                f"{state} in {package.seconds * 1000:.1f} ms ({package.path})"
            )

    run(go())
    return 0


def cmd_list(args: argparse.Namespace, settings: Settings) -> int:
    from tui_agent.tools import WORKSPACE_TOOLS, ServerTools, ToolServers, function_specs

    mcp = _servers(args, settings)

    async def listings() -> tuple[ServerTools, ...]:
        async with ToolServers(mcp) as servers:
            return servers.listings

    found = [*run(listings()), WORKSPACE_TOOLS]
    if args.json:
        data = [
            {
                "server": server.name,
                "package": server.package,
                "functions": [
                    {"signature": spec.signature(), "description": spec.tool.description}
                    for spec in function_specs(server)
                ],
            }
            for server in found
        ]
        say_json(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    entries = {entry.stem: entry for entry in mcp.servers}
    for server in found:
        entry = entries.get(server.stem)
        where = f"  ({entry.config.describe()})" if entry else "  (the workspace, on the host)"
        say(f"{server.name}{where}  ->  {server.package}")
        for spec in function_specs(server):
            say(f"  {spec.signature()}")
            first = (spec.tool.description or "").strip().splitlines()
            if first:
                say(f"      {first[0]}")
    return 0
