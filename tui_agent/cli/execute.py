"""`tui-agent exec FILE.py`: run a program in a sandbox as a recorded session."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tui_agent.cli.common import (
    UsageError,
    add_agent_type_option,
    add_output_options,
    add_sandbox_option,
    read_json_object,
    record_session,
)
from tui_agent.config import Settings
from tui_agent.sandbox.models import ExecuteRequest


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    run = commands.add_parser(
        "exec", parents=[common], help="run a Python file in a sandbox as a recorded session"
    )
    run.add_argument("file", type=Path, metavar="FILE.py")
    run.add_argument(
        "--arg",
        action="append",
        default=[],
        metavar="A",
        dest="args",
        help="an argument for main(); JSON literals (5, true, [1]) are decoded, else text",
    )
    run.add_argument("--context", type=Path, metavar="ctx.json", help="a JSON object: `context`")
    run.add_argument("--url", help="render this page in Chromium and pass `url` and `html` in")
    run.add_argument("--timeout", type=float, default=30.0, metavar="S", help="seconds (30)")
    add_sandbox_option(run)
    run.add_argument("--network", action="store_true", help="let the code reach the network")
    run.add_argument(
        "--workspace",
        type=Path,
        help="host folder mounted at /workspace, shared by the sessions that name it "
        "(default: a fresh folder for each session)",
    )
    add_agent_type_option(run, None)
    add_output_options(run)
    run.set_defaults(handler=cmd_exec)


def read_code(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise UsageError(f"no such file: {path}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from exc


def cmd_exec(args: argparse.Namespace, settings: Settings) -> int:
    from tui_agent.agents.browsing import browser_for
    from tui_agent.agents.execute import decode_arg, exec_session
    from tui_agent.web.navigation import check_navigable

    if args.timeout <= 0:
        raise UsageError("--timeout must be a positive number of seconds")
    request = ExecuteRequest(
        code=read_code(args.file),
        args=[decode_arg(a) for a in args.args],
        context=read_json_object(args.context, "context file") if args.context else None,
        url=check_navigable(args.url, settings.allow_file_urls) if args.url else None,
        timeout=args.timeout,
    )
    started, agent = exec_session(
        request,
        title=f"exec {args.file.name}",
        sandbox_name=args.sandbox or settings.sandbox,
        workspace=args.workspace or settings.workspace,
        network=args.network,
        model=settings.model,
        agent_type=args.agent_type,
        browser=browser_for(settings, args.url),
    )
    return record_session(settings, started, agent, args.output)
