"""`tui-agent code "TASK"`: the CodeAct agent solves a task by running code in a sandbox."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tui_agent.cli.common import (
    UsageError,
    add_agent_type_option,
    add_api_base_option,
    add_output_options,
    add_sandbox_option,
    record_approved_session,
)
from tui_agent.config import Settings


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    code = commands.add_parser(
        "code",
        parents=[common],
        help="solve a task with the CodeAct agent: it writes Python, runs it, reads, answers",
    )
    code.add_argument("task", metavar="TASK", help="what the agent should do, in words")
    code.add_argument(
        "--max-steps", type=int, default=10, metavar="N", help="model turns at most (10)"
    )
    code.add_argument(
        "--budget",
        type=float,
        metavar="USD",
        help="stop before a model call that would take the cost past this (needs a priced model)",
    )
    code.add_argument(
        "--approve",
        action="store_true",
        help="ask before each run: run, skip or edit (always on with --sandbox local)",
    )
    add_sandbox_option(code)
    code.add_argument("--network", action="store_true", help="let the code reach the network")
    code.add_argument(
        "--workspace",
        type=Path,
        help="host folder mounted at /workspace, shared by the sessions that name it "
        "(default: a fresh folder for each session)",
    )
    code.add_argument(
        "--timeout", type=float, default=60.0, metavar="S", help="seconds per run (60)"
    )
    add_api_base_option(code)
    add_agent_type_option(code, "generic")
    add_output_options(code)
    code.set_defaults(handler=cmd_code)


def cmd_code(args: argparse.Namespace, settings: Settings) -> int:
    from tui_agent.agents.codeact import codeact_session

    if args.max_steps < 1:
        raise UsageError("--max-steps must be at least 1")
    if args.budget is not None and args.budget <= 0:
        raise UsageError("--budget must be a positive amount of USD")
    if args.timeout <= 0:
        raise UsageError("--timeout must be a positive number of seconds")
    if args.api_base:
        settings = settings.model_copy(update={"api_base": args.api_base})
    options: dict[str, Any] = {
        "settings": settings,
        "max_steps": args.max_steps,
        "budget": args.budget,
        "approve": args.approve,
        "sandbox_name": args.sandbox,
        "network": args.network,
        "workspace": args.workspace,
        "timeout": args.timeout,
        "agent_type": args.agent_type,
    }
    return record_approved_session(
        settings,
        args.output,
        lambda approver: codeact_session(args.task, approver=approver, **options),
        approve=args.approve,
        sandbox=args.sandbox,
        what="run",
    )
