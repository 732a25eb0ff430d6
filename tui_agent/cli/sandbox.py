"""`tui-agent sandbox build|check`: the sandbox image and which backends work here."""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table

from tui_agent.config import Settings
from tui_agent.printer import TerminalConsole


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    sandbox = commands.add_parser("sandbox", parents=[common], help="build or check sandboxes")
    verbs = sandbox.add_subparsers(title="sandbox commands", metavar="VERB", required=True)
    build = verbs.add_parser(
        "build", parents=[common], help="build the docker image tui-agent-sandbox (cached)"
    )
    build.add_argument("--force", action="store_true", help="rebuild even when up to date")
    build.add_argument(
        "--method",
        choices=("auto", "dockerfile", "debootstrap"),
        default="auto",
        help="auto: the Dockerfile when a registry answers, else an offline debootstrap rootfs",
    )
    build.set_defaults(handler=cmd_build)
    check = verbs.add_parser("check", parents=[common], help="try each backend and say why not")
    check.set_defaults(handler=cmd_check)


def cmd_build(args: argparse.Namespace, _settings: Settings) -> int:
    from tui_agent.sandbox.image import build_image

    image_id = build_image(force=args.force, method=args.method, progress=print)
    print(f"sandbox image ready: {image_id[:19]}")
    return 0


def cmd_check(_args: argparse.Namespace, _settings: Settings) -> int:
    from tui_agent.sandbox.choose import check_backends

    checks = check_backends()
    table = Table(box=None, padding=(0, 1), pad_edge=False, header_style="bold")
    for column in ("backend", "works", "why"):
        table.add_column(column, overflow="fold")
    for check in checks:
        works = "[green]yes[/]" if check.ok else "[red]no[/]"
        table.add_row(check.name, works, check.reason)
    TerminalConsole().print(table)
    return 0 if any(check.ok and check.name != "local" for check in checks) else 1
