"""`tui-agent demo-site [--port P]`: serve the demo shop on 127.0.0.1 until Ctrl+C."""

from __future__ import annotations

import argparse
from typing import Any

from tui_agent.cli.common import UsageError
from tui_agent.config import Settings


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    demo = commands.add_parser(
        "demo-site",
        parents=[common],
        help="serve a local demo shop (one URL per list-detail layout) for recipes",
    )
    demo.add_argument(
        "--port", type=int, default=0, help="port on 127.0.0.1 (default: any free port)"
    )
    demo.set_defaults(handler=cmd_demo_site)


def cmd_demo_site(args: argparse.Namespace, _settings: Settings) -> int:
    from tui_agent.demo_site import serve

    try:
        serve(args.port, announce=lambda line: print(line, flush=True))
    except OSError as exc:
        raise UsageError(f"cannot serve on 127.0.0.1:{args.port}: {exc.strerror or exc}") from exc
    return 0
