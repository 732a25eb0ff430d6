"""`tui-agent scrape URL --task "..."`: plan a page, write a verified recipe, extract items."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tui_agent.cli.common import UsageError, add_api_base_option, add_output_options, record_session
from tui_agent.config import Settings


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    scrape = commands.add_parser(
        "scrape",
        parents=[common],
        help="explore a list page, write a verified recipe, and extract its items",
    )
    scrape.add_argument(
        "url",
        metavar="URL",
        help="the list page (http:// or https://; file:// with --allow-file-urls)",
    )
    scrape.add_argument(
        "--task", required=True, help='what to extract, in words (e.g. "Extract 20 items")'
    )
    scrape.add_argument(
        "--max-items", type=int, metavar="N", help="stop after N items (default: from the task)"
    )
    scrape.add_argument(
        "--planner",
        choices=("auto", "llm", "offline"),
        default="auto",
        help="auto: the model when one is configured (given the offline findings), else the "
        "offline planner; llm: the model only; offline: no model at all",
    )
    scrape.add_argument(
        "--save-recipe",
        type=Path,
        metavar="FILE",
        help="write the recipe here, for `tui-agent recipe run` (no model needed)",
    )
    scrape.add_argument(
        "--max-tool-calls",
        type=int,
        default=16,
        metavar="N",
        help="probe calls the model planner may make (16)",
    )
    scrape.add_argument(
        "--wait",
        type=float,
        default=15.0,
        metavar="S",
        help="wait at most S seconds for the page to render (its content and requests quiet) "
        "after load, clicks and page changes (15)",
    )
    scrape.add_argument(
        "--parse-details",
        action="store_true",
        help="have the model read named fields from each item's details text, even when "
        "selectors name some (needs a model; without this it does so only when none do)",
    )
    add_api_base_option(scrape)
    add_output_options(scrape)
    scrape.set_defaults(handler=cmd_scrape)


def cmd_scrape(args: argparse.Namespace, settings: Settings) -> int:
    from tui_agent.agents.scrape import scrape_session

    if args.max_items is not None and args.max_items < 1:
        raise UsageError("--max-items must be at least 1")
    if args.max_tool_calls < 1:
        raise UsageError("--max-tool-calls must be at least 1")
    if args.api_base:
        settings = settings.model_copy(update={"api_base": args.api_base})
    started, agent = scrape_session(
        args.url,
        args.task,
        settings=settings,
        max_items=args.max_items,
        planner=args.planner,
        save_recipe=args.save_recipe,
        max_tool_calls=args.max_tool_calls,
        wait=args.wait,
        parse_details=args.parse_details,
    )
    return record_session(settings, started, agent, args.output)
