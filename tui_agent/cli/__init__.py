"""The `tui-agent` command: one subcommand per agent kind, plus sessions, replay, sandbox."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import argparse
import sys

from tui_agent.cli import (
    batch,
    demo_site,
    recipe,
    refine,
    sandbox,
    sessions,
    start,
    task,
    tools,
)
from tui_agent.cli.common import common_options, say
from tui_agent.config import load_settings
from tui_agent.errors import UserError


def build_parser() -> argparse.ArgumentParser:
    common = common_options()
    parser = argparse.ArgumentParser(
        prog="tui-agent",
        parents=[common],
        description="Run code-writing agents in a terminal; every session is recorded.",
    )
    parser.set_defaults(handler=sessions.cmd_home)
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")
    for module in (
        start,
        task,
        recipe,
        refine,
        batch,
        tools,
        sessions,
        sandbox,
        demo_site,
    ):
        module.register(commands, common)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        settings = load_settings(
            db=getattr(args, "db", None),
            model=getattr(args, "model", None),
            api_base=getattr(args, "api_base", None),
            allow_file_urls=getattr(args, "allow_file_urls", None),
            browser_sandbox=getattr(args, "browser_sandbox", None),
        )
        return args.handler(args, settings)
    except UserError as exc:  # input or environment: one line, exit code 1
        say(f"tui-agent: {exc}", err=True)
        return 1
    except BrokenPipeError:  # e.g. `tui-agent sessions list --json | head -1`
        sys.stdout = None  # nothing more can be written
        return 0
    except KeyboardInterrupt:
        print("tui-agent: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
