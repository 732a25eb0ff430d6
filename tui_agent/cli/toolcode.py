"""`tui-agent toolcode "TASK" --mcp FILE`: the model writes programs that import the MCP
servers' tools as Python functions and chain them in the sandbox."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tui_agent.cli.common import (
    UsageError,
    add_api_base_option,
    add_output_options,
    record_approved_session,
)
from tui_agent.config import Settings


def add_mcp_options(parser: argparse.ArgumentParser) -> None:
    """--mcp FILE and --server NAME, for every command that reaches MCP servers."""
    parser.add_argument(
        "--mcp",
        type=Path,
        metavar="FILE",
        help='MCP servers config ({"mcpServers": {...}}; default: TUI_AGENT_MCP_CONFIG)',
    )
    parser.add_argument(
        "--server",
        action="append",
        default=[],
        metavar="NAME",
        help="use only this server of the config (repeatable)",
    )


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    toolcode = commands.add_parser(
        "toolcode",
        parents=[common],
        help="solve a task with programs that call MCP tools as Python functions",
    )
    toolcode.add_argument("task", metavar="TASK", help="what the agent should do, in words")
    add_mcp_options(toolcode)
    toolcode.add_argument(
        "--sandbox",
        choices=("auto", "docker", "bubblewrap", "local"),
        default=None,
        help="backend (default: TUI_AGENT_SANDBOX or auto: docker, else bubblewrap)",
    )
    toolcode.add_argument(
        "--workspace",
        type=Path,
        help="host folder mounted at /workspace, shared by the sessions that name it "
        "(default: a fresh folder for each session)",
    )
    toolcode.add_argument(
        "--timeout", type=float, default=30.0, metavar="S", help="seconds per program (30)"
    )
    toolcode.add_argument(
        "--call-timeout",
        type=float,
        default=20.0,
        metavar="S",
        help="seconds per tool call inside a program (20)",
    )
    toolcode.add_argument(
        "--max-steps", type=int, default=10, metavar="N", help="model turns at most (10)"
    )
    toolcode.add_argument(
        "--budget", type=float, metavar="USD", help="stop before a call past this cost"
    )
    toolcode.add_argument(
        "--read-root",
        action="append",
        default=[],
        metavar="DIR",
        help="workspace folder the workspace tools may read (repeatable; default: all of it)",
    )
    toolcode.add_argument(
        "--write-root",
        action="append",
        default=[],
        metavar="DIR",
        help="workspace folder the workspace tools may write (repeatable; default: all of it)",
    )
    toolcode.add_argument(
        "--tool-protocol",
        choices=("auto", "native", "text"),
        default="auto",
        help="native tool calls, or CALL lines for models without them (auto: ask litellm)",
    )
    toolcode.add_argument(
        "--approve",
        action="store_true",
        help="ask before each program runs (always on with --sandbox local)",
    )
    add_api_base_option(toolcode)
    add_output_options(toolcode)
    toolcode.set_defaults(handler=cmd_toolcode)


def cmd_toolcode(args: argparse.Namespace, settings: Settings) -> int:
    from tui_agent.agents.toolcode import mcp_config_for, toolcode_session

    for name, value in (("--timeout", args.timeout), ("--call-timeout", args.call_timeout)):
        if value <= 0:
            raise UsageError(f"{name} must be a positive number of seconds")
    if args.max_steps < 1:
        raise UsageError("--max-steps must be at least 1")
    if args.api_base:
        settings = settings.model_copy(update={"api_base": args.api_base})
    mcp = mcp_config_for(args.mcp, settings, args.server)
    options: dict[str, Any] = {
        "settings": settings,
        "mcp": mcp,
        "sandbox_name": args.sandbox,
        "workspace": args.workspace,
        "max_steps": args.max_steps,
        "budget": args.budget,
        "timeout": args.timeout,
        "call_timeout": args.call_timeout,
        "read_roots": args.read_root or ["."],
        "write_roots": args.write_root or ["."],
        "tool_protocol": args.tool_protocol,
        "approve": args.approve,
    }
    return record_approved_session(
        settings,
        args.output,
        lambda approver: toolcode_session(args.task, approver=approver, **options),
        approve=args.approve,
        sandbox=args.sandbox,
        what="program",
    )
