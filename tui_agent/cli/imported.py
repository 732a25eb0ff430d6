"""Approving on the terminal what an imported session's code would run, before it runs.

A session imported from a file carries someone else's code and settings. Before refining it or
accepting a refined version (both run its code), the plan is shown (the code or recipe, the
sandbox, the network, the page) and the user answers y/N; `--trust` answers yes; with no
terminal and no `--trust` it is refused in one line and nothing runs.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from rich.console import Console
from rich.syntax import Syntax
from rich.text import Text

from tui_agent.cli.common import UsageError
from tui_agent.config import Settings

if TYPE_CHECKING:  # the refinement package (sandboxes, Chromium) loads only where it is used
    from tui_agent.agents.refine import Allowances, RunPlan


def add_trust_options(parser: argparse.ArgumentParser) -> None:
    """--trust and --network: what an imported session's run may do (file:// pages: the
    common --allow-file-urls)."""
    parser.add_argument(
        "--trust",
        action="store_true",
        help="run an imported session's code without asking (it is still shown)",
    )
    parser.add_argument(
        "--network",
        action="store_true",
        help="let the code reach the network (an imported session's never does otherwise)",
    )


def allowances(args: argparse.Namespace, settings: Settings) -> Allowances:
    """What the options and settings allow beyond an imported session's own settings."""
    from tui_agent.agents.refine import Allowances

    return Allowances(network=args.network, file_urls=settings.allow_file_urls)


def approve(console: Console, plan: RunPlan, trust: bool) -> None:
    """Show `plan` and ask; a UsageError (one line) when it is not approved, or when there is
    no terminal to ask on and no `--trust`."""
    asking = sys.stdin is not None and sys.stdin.isatty()
    if not trust and not asking:
        raise UsageError(
            f"session {plan.session_id} was imported from a file: its code runs only once "
            "approved; run this in a terminal to be asked, or pass --trust"
        )
    console.print(Text(plan.title, style="bold"))
    console.print(Syntax(plan.shown_content(), plan.language, line_numbers=True, theme="ansi_dark"))
    console.print(Text(plan.settings_text()))
    if trust:
        console.print(Text("approved with --trust", style="dim"))
        return
    answer = console.input("Run it? [y/N] ")
    if answer.strip().lower() not in ("y", "yes"):
        raise UsageError(f"not run: the code of session {plan.session_id} was not approved")
