"""`tui-agent task "PROMPT"`, `tui-agent workflow run FILE` and `tui-agent cache list|clear`:
the task executor from the shell."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from tui_agent.agents.requests import RequestBase, TaskRequest, WorkflowRequest
from tui_agent.cli.common import UsageError, add_output_options, record_request, run, say_json
from tui_agent.cli.request_options import add_request_arguments, for_the_shell, request_from_args
from tui_agent.config import Settings


def _add_run_options(parser: argparse.ArgumentParser, cls: type[RequestBase]) -> None:
    add_request_arguments(parser, cls)
    parser.add_argument(
        "-o",
        "--output-file",
        type=Path,
        metavar="FILE",
        help="write the updated context (with _ai_metadata) to FILE as JSON",
    )
    add_output_options(parser)


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    task = commands.add_parser(
        "task",
        parents=[common],
        help="turn a task and a context into checked, cached Python that updates the context",
    )
    _add_run_options(task, TaskRequest)
    task.set_defaults(handler=cmd_task)

    workflow = commands.add_parser(
        "workflow", parents=[common], help="run a workflow file: task nodes, one after another"
    )
    verbs = workflow.add_subparsers(title="workflow commands", metavar="VERB", required=True)
    workflow_run = verbs.add_parser("run", parents=[common], help="run a workflow JSON file")
    _add_run_options(workflow_run, WorkflowRequest)
    workflow_run.set_defaults(handler=cmd_workflow_run)

    cache = commands.add_parser("cache", parents=[common], help="the task executor's code cache")
    cache_verbs = cache.add_subparsers(title="cache commands", metavar="VERB", required=True)
    listing = cache_verbs.add_parser("list", parents=[common], help="the cached code, newest first")
    listing.add_argument("--json", action="store_true", help="one JSON object per entry")
    listing.set_defaults(handler=cmd_cache_list)
    clear = cache_verbs.add_parser("clear", parents=[common], help="forget all cached code")
    clear.set_defaults(handler=cmd_cache_clear)


def cmd_task(args: argparse.Namespace, settings: Settings) -> int:
    return _record(TaskRequest, args, settings)


def cmd_workflow_run(args: argparse.Namespace, settings: Settings) -> int:
    return _record(WorkflowRequest, args, settings)


def _record(cls: type[RequestBase], args: argparse.Namespace, settings: Settings) -> int:
    """Record the session, then print (headless) and save (-o) the updated context."""
    if args.output_file is not None and not args.output_file.parent.resolve().is_dir():
        raise UsageError(f"cannot write {args.output_file}: its folder does not exist")
    with for_the_shell(cls):
        request = request_from_args(cls, args)
        code, launch = record_request(settings, request, args.output)
    session = launch.task
    assert session is not None, "task and workflow launches carry their session"
    if args.output_file is not None:
        text = json.dumps(session.context, indent=2, ensure_ascii=False, default=str)
        args.output_file.write_text(text + "\n", encoding="utf-8")
    if args.output == "headless":
        masked = session.secrets.masked(session.context)
        say_json(json.dumps(masked, indent=2, ensure_ascii=False, default=str))
    return code


def cmd_cache_list(args: argparse.Namespace, settings: Settings) -> int:
    from rich.table import Table

    from tui_agent.printer import TerminalConsole
    from tui_agent.store.task_cache import TaskCache
    from tui_agent.terminal_text import visible

    async def entries() -> list[Any]:
        cache = TaskCache(settings.db)
        try:
            return await cache.entries()
        finally:
            await cache.close()

    found = run(entries())
    if args.json:
        for entry in found:
            row = {k: v for k, v in vars(entry).items() if k != "schema_json"}
            row["schema"] = json.loads(entry.schema_json)
            say_json(json.dumps(row, ensure_ascii=False))
        return 0
    if not found:
        print("the code cache is empty")
        return 0
    table = Table(box=None, padding=(0, 1), pad_edge=False, header_style="bold")
    for column in ("key", "task", "model", "hits", "lines", "session"):
        table.add_column(column, overflow="fold")
    for entry in found:
        lines = entry.task_code.count("\n") + 1
        cells = (entry.key[:12], entry.task, entry.model, str(entry.hits), str(lines))
        table.add_row(*map(visible, (*cells, entry.session_id)))
    TerminalConsole().print(table)
    return 0


def cmd_cache_clear(_args: argparse.Namespace, settings: Settings) -> int:
    from tui_agent.store.task_cache import TaskCache

    async def clear() -> int:
        cache = TaskCache(settings.db)
        try:
            return await cache.clear()
        finally:
            await cache.close()

    removed = run(clear())
    print(f"removed {removed} cached {'entry' if removed == 1 else 'entries'}")
    return 0
