"""`tui-agent recipe ...`: print the recipe JSON Schema, or run a recipe as a recorded session."""

from __future__ import annotations

import argparse
import json
from typing import Any

from tui_agent.agents.requests import RecipeRunRequest
from tui_agent.cli.common import add_output_options
from tui_agent.cli.request_options import add_request_arguments, record_command
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
    add_request_arguments(run, RecipeRunRequest)
    add_output_options(run)
    run.set_defaults(handler=record_command(RecipeRunRequest))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def cmd_schema(_args: argparse.Namespace, _settings: Settings) -> int:
    from tui_agent.web.recipe import recipe_json_schema

    print(json.dumps(recipe_json_schema(), indent=2))
    return 0
