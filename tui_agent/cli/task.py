"""`tui-agent task "PROMPT"`, `tui-agent workflow run FILE` and `tui-agent cache list|clear`:
the task executor from the shell."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_agent.cli.common import (
    UsageError,
    add_api_base_option,
    add_output_options,
    add_sandbox_option,
    read_json_object,
    record_session,
    run,
    say_json,
)
from tui_agent.config import Settings

if TYPE_CHECKING:
    from tui_agent.agents.task.start import TaskSession


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--context",
        type=Path,
        metavar="ctx.json",
        help="a JSON object: the data the code works on ('-': standard input)",
    )
    parser.add_argument(
        "--validator-model", metavar="M", help="the model that judges the output (default: --model)"
    )
    parser.add_argument(
        "--timeout", type=float, default=30.0, metavar="S", help="seconds per run (30)"
    )
    parser.add_argument(
        "--max-attempts", type=int, default=3, metavar="N", help="attempts per task (3)"
    )
    parser.add_argument(
        "--budget",
        type=float,
        metavar="USD",
        help="stop before a model call that would take the cost past this (needs a priced model)",
    )
    parser.add_argument(
        "--no-cache",
        dest="use_cache",
        action="store_false",
        help="always generate: neither use nor fill the code cache",
    )
    add_sandbox_option(parser)
    parser.add_argument(
        "--workspace",
        type=Path,
        help="host folder mounted at /workspace, shared by the sessions that name it "
        "(default: a fresh folder for each session)",
    )
    parser.add_argument(
        "-o",
        "--output-file",
        type=Path,
        metavar="FILE",
        help="write the updated context (with _ai_metadata) to FILE as JSON",
    )
    add_api_base_option(parser)
    add_output_options(parser)


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    task = commands.add_parser(
        "task",
        parents=[common],
        help="turn a task and a context into checked, cached Python that updates the context",
    )
    task.add_argument("prompt", metavar="PROMPT", help="what the code should do, in words")
    _add_run_options(task)
    task.set_defaults(handler=cmd_task)

    workflow = commands.add_parser(
        "workflow", parents=[common], help="run a workflow file: task nodes, one after another"
    )
    verbs = workflow.add_subparsers(title="workflow commands", metavar="VERB", required=True)
    workflow_run = verbs.add_parser("run", parents=[common], help="run a workflow JSON file")
    workflow_run.add_argument("file", type=Path, metavar="FILE.json")
    _add_run_options(workflow_run)
    workflow_run.set_defaults(handler=cmd_workflow_run)

    cache = commands.add_parser("cache", parents=[common], help="the task executor's code cache")
    cache_verbs = cache.add_subparsers(title="cache commands", metavar="VERB", required=True)
    listing = cache_verbs.add_parser("list", parents=[common], help="the cached code, newest first")
    listing.add_argument("--json", action="store_true", help="one JSON object per entry")
    listing.set_defaults(handler=cmd_cache_list)
    clear = cache_verbs.add_parser("clear", parents=[common], help="forget all cached code")
    clear.set_defaults(handler=cmd_cache_clear)


def _read_context(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    if str(path) == "-":
        try:
            data = json.loads(sys.stdin.read())
        except json.JSONDecodeError as exc:
            raise UsageError(
                f"the context on standard input is not valid JSON: {exc.msg} at line "
                f"{exc.lineno} column {exc.colno}"
            ) from exc
        if not isinstance(data, dict):
            raise UsageError("the context must be a JSON object")
        return data
    return read_json_object(path, "context file")


def _options(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    """What `task_session` and `workflow_session` take from the command line (the limits
    themselves are checked there)."""
    from tui_agent.agents.task.start import TaskLimits
    from tui_agent.recorder import new_session_id
    from tui_agent.store.task_cache import TaskCache

    if args.output_file is not None and not args.output_file.parent.resolve().is_dir():
        raise UsageError(f"cannot write {args.output_file}: its folder does not exist")
    if args.api_base:
        settings = settings.model_copy(update={"api_base": args.api_base})
    return {
        "settings": settings,
        "session_id": new_session_id(),
        "validator_model": args.validator_model,
        "limits": TaskLimits(args.timeout, args.max_attempts, args.budget, args.use_cache),
        "cache": TaskCache(settings.db),
        "sandbox_name": args.sandbox,
        "workspace": args.workspace,
    }


def cmd_task(args: argparse.Namespace, settings: Settings) -> int:
    from tui_agent.agents.task.start import task_session

    context = _read_context(args.context)
    options = _options(args, settings)
    started, session = task_session(args.prompt, context, **options)
    return _record(args, started, session, options)


def cmd_workflow_run(args: argparse.Namespace, settings: Settings) -> int:
    from tui_agent.agents.task.start import workflow_session
    from tui_agent.agents.task.workflow import load_workflow

    workflow = load_workflow(args.file)
    context = _read_context(args.context)
    options = _options(args, settings)
    count = len(workflow.nodes)
    title = f"workflow {args.file.name} ({count} node{'s' if count != 1 else ''})"
    started, session = workflow_session(workflow, context, title=title, **options)
    return _record(args, started, session, options)


def _record(
    args: argparse.Namespace, started: Any, session: TaskSession, options: dict[str, Any]
) -> int:
    """Record the session, then print (headless) and save (-o) the updated context."""
    settings: Settings = options["settings"]
    session_id: str = options["session_id"]
    code = record_session(settings, started, session.events(), args.output, session_id=session_id)
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
