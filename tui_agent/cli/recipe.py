"""`tui-agent recipe ...`: print the recipe JSON Schema, or run a recipe as a recorded session."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from tui_agent.cli.common import (
    UsageError,
    add_api_base_option,
    add_output_options,
    record_session,
)
from tui_agent.config import Settings


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    recipe = commands.add_parser(
        "recipe", parents=[common], help="run a recipe (bindings + commands) in Chromium"
    )
    recipe.set_defaults(handler=lambda _a, _s: _usage(recipe))
    verbs = recipe.add_subparsers(title="recipe commands", metavar="VERB")
    schema = verbs.add_parser("schema", parents=[common], help="print the recipe JSON Schema")
    schema.set_defaults(handler=cmd_schema)
    run = verbs.add_parser(
        "run", parents=[common], help="run a recipe on a page as a recorded session"
    )
    run.add_argument("recipe", type=Path, metavar="RECIPE.json")
    run.add_argument("--url", required=True, help="the list page to run the recipe on")
    run.add_argument(
        "--max-items",
        type=int,
        metavar="N",
        help="stop after N items (overrides the recipe's config.maxItems)",
    )
    run.add_argument(
        "--wait",
        type=float,
        default=15.0,
        metavar="S",
        help="wait at most S seconds for a page to render after load and page changes (15)",
    )
    add_api_base_option(run)
    add_output_options(run)
    run.set_defaults(handler=cmd_run)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def cmd_schema(_args: argparse.Namespace, _settings: Settings) -> int:
    from tui_agent.web.recipe import recipe_json_schema

    print(json.dumps(recipe_json_schema(), indent=2))
    return 0


def cmd_run(args: argparse.Namespace, settings: Settings) -> int:
    from tui_agent.agents.recipe_run import recipe_session

    if args.max_items is not None and args.max_items < 1:
        raise UsageError("--max-items must be at least 1")
    if args.api_base:
        settings = settings.model_copy(update={"api_base": args.api_base})
    started, agent = recipe_session(
        args.recipe, args.url, max_items=args.max_items, settings=settings, wait=args.wait
    )
    return record_session(settings, started, agent, args.output)
