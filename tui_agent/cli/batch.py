"""`tui-agent batch recipe|task|workflow|eval|report|compare`: many sessions at once.

Each verb turns its inputs into a batch plan (`batch/plan.py`) and runs it on the engine
`--engine` names; `--resume ID` runs what a batch left. Progress is one line per item on the
terminal, or the batch session's events as JSON lines (`--json`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_agent.agents.requests import (
    CodeRequest,
    RecipeRunRequest,
    RequestBase,
    TaskRequest,
    WorkflowRequest,
)
from tui_agent.cli.common import UsageError, open_store, run, say, say_json
from tui_agent.cli.request_options import add_request_arguments, for_the_shell, request_from_args
from tui_agent.config import Settings
from tui_agent.events import BatchItem, Event, SessionEnded, dump_event

if TYPE_CHECKING:
    from tui_agent.batch.evaluation import EvalReport
    from tui_agent.batch.plan import BatchPlan
    from tui_agent.session import SessionState

EVAL_OPTIONS = (
    "max_steps",
    "budget",
    "sandbox",
    "timeout",
    "api_base",
    "context_tokens",
    "temperature",
    "max_tokens",
    "top_p",
    "reply_format",
)
"""The CodeAct options an eval batch takes (the task comes from each line)."""


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def _run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--engine",
        metavar="ENGINE",
        help="where items run: local[:N] (this process, N at once; default local:4), "
        "dask-local:N (a Dask cluster of N worker processes here), tcp://HOST:8786 (a Dask "
        "scheduler's workers); a resume runs where the batch ran unless given",
    )
    parser.add_argument(
        "--max-in-flight",
        type=_positive,
        metavar="N",
        help="items running at once at most (default: the engine's workers)",
    )
    parser.add_argument(
        "--per-host",
        type=_positive,
        metavar="N",
        help="items loading one site at once at most (recipes; default: no limit)",
    )
    parser.add_argument(
        "--retries",
        type=_count,
        metavar="N",
        help="run an item again up to N times when its session does not complete (default 0)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print the batch session's events as JSON lines"
    )


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    batch = commands.add_parser(
        "batch",
        parents=[common],
        help="run a recipe, task, workflow or eval over many inputs, each item a session",
    )
    batch.add_argument(
        "--resume", metavar="BATCH_ID", help="run the items a stopped batch has not done"
    )
    _run_options(batch)
    batch.set_defaults(handler=lambda a, s: cmd_resume(a, s, batch))
    verbs = batch.add_subparsers(title="batch commands", metavar="VERB")

    recipe = verbs.add_parser("recipe", parents=[common], help="run a recipe on each URL")
    add_request_arguments(recipe, RecipeRunRequest, require=False)
    recipe.add_argument("--urls", type=Path, required=True, metavar="FILE", help="one URL a line")
    _run_options(recipe)
    recipe.set_defaults(handler=cmd_recipe)

    task = verbs.add_parser("task", parents=[common], help="run a task on each row")
    add_request_arguments(task, TaskRequest)
    _rows_option(task)
    _run_options(task)
    task.set_defaults(handler=lambda a, s: _rows(a, s, "task", TaskRequest))

    workflow = verbs.add_parser("workflow", parents=[common], help="run a workflow on each row")
    add_request_arguments(workflow, WorkflowRequest)
    _rows_option(workflow)
    _run_options(workflow)
    workflow.set_defaults(handler=lambda a, s: _rows(a, s, "workflow", WorkflowRequest))

    evaluate = verbs.add_parser(
        "eval", parents=[common], help="the CodeAct agent on each task of a file, each checked"
    )
    evaluate.add_argument(
        "tasks",
        type=Path,
        metavar="TASKS.jsonl",
        help="one task a line: HumanEval's (prompt, test, entry_point) or {task, check}",
    )
    add_request_arguments(evaluate, CodeRequest, only=EVAL_OPTIONS)
    _run_options(evaluate)
    evaluate.set_defaults(handler=cmd_eval)

    report = verbs.add_parser("report", parents=[common], help="an eval batch's report")
    report.add_argument("batch_id", metavar="BATCH_ID")
    report.add_argument("--json", action="store_true", help="one JSON object per task")
    report.set_defaults(handler=cmd_report)

    compare = verbs.add_parser(
        "compare", parents=[common], help="two eval batches of the same tasks side by side"
    )
    compare.add_argument("first", metavar="A")
    compare.add_argument("second", metavar="B")
    compare.set_defaults(handler=cmd_compare)


def _rows_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rows",
        type=Path,
        required=True,
        metavar="FILE",
        help="one context a row: JSON lines of objects, or a .csv file with a header",
    )


def cmd_recipe(args: argparse.Namespace, settings: Settings) -> int:
    from tui_agent.batch.plan import PlanError, input_lines, recipe_plan

    if args.url is None:  # the request is checked with the first URL; each item has its own
        first = next(iter(input_lines(args.urls)), None)
        if first is None:
            raise PlanError(f"{args.urls} holds no URLs")
        args.url = first.text
    with for_the_shell(RecipeRunRequest):
        base = request_from_args(RecipeRunRequest, args)
    return _go(args, settings, recipe_plan(base, args.urls, allow_file=settings.allow_file_urls))


def _rows(args: argparse.Namespace, settings: Settings, of: Any, cls: type[RequestBase]) -> int:
    from tui_agent.batch.plan import row_plan

    with for_the_shell(cls):
        base = request_from_args(cls, args)
    return _go(args, settings, row_plan(of, base, args.rows))


def cmd_eval(args: argparse.Namespace, settings: Settings) -> int:
    from tui_agent.batch.inputs import EACH_LINE
    from tui_agent.batch.plan import eval_plan

    args.task = EACH_LINE
    with for_the_shell(CodeRequest):
        base = request_from_args(CodeRequest, args)
        if not (base.model or settings.model):
            raise UsageError("an eval batch needs a model: pass --model or set TUI_AGENT_MODEL")
    code = _go(args, settings, eval_plan(base, args.tasks))
    return code


def cmd_resume(
    args: argparse.Namespace, settings: Settings, parser: argparse.ArgumentParser
) -> int:
    if not args.resume:
        parser.print_help()
        return 2
    return _go(args, settings, None)


def _go(args: argparse.Namespace, settings: Settings, plan: BatchPlan | None) -> int:
    if plan is not None:  # a bad --engine or model is refused before the store is opened
        from tui_agent.batch.inputs import check_model

        check_model(plan, settings, _engine_and_options(args, {})[0])
    printer = _Progress(json_lines=args.json)
    state, of = run(_drive(settings, plan, args, printer))
    if state is None:
        return 0
    if state.batch is not None and of == "eval" and not args.json:
        _print_eval(run(_report(settings, state.session_id)))
    return 0 if state.status == "completed" else 1


def _engine_and_options(args: argparse.Namespace, recorded: dict[str, Any]) -> tuple[Any, Any]:
    """The engine and options of a run: those given on the command line, else those the
    batch recorded when it started (a resume), else the defaults."""
    from tui_agent.batch.engines import engine_for
    from tui_agent.batch.runner import BatchOptions

    def given(name: str, default: Any) -> Any:
        value = getattr(args, name)
        return value if value is not None else recorded.get(name, default)

    options = BatchOptions(
        given("max_in_flight", None), given("per_host", None), given("retries", 0)
    )
    return engine_for(given("engine", "local")), options


async def _drive(
    settings: Settings, plan: BatchPlan | None, args: argparse.Namespace, printer: _Progress
) -> tuple[SessionState | None, str]:
    """Run the batch (or resume it); its final state (None: nothing left) and what it runs."""
    from tui_agent.batch.drive import drive_batch
    from tui_agent.batch.plan import BatchPlan
    from tui_agent.recorder import SessionRecorder

    resume = getattr(args, "resume", None)
    async with await open_store(settings) as store:
        if resume is not None:
            batch_id = await store.resolve(resume)
            recorder = await SessionRecorder.resume(store, batch_id, [printer])
            if recorder.state.kind != "batch":
                raise UsageError(f"session {batch_id} is not a batch")
            plan = BatchPlan.model_validate(recorder.state.params["plan"])
            engine, options = _engine_and_options(args, recorder.state.params)
        else:
            assert plan is not None
            recorder = SessionRecorder(store, listeners=[printer])
            engine, options = _engine_and_options(args, {})
        total = len(plan.items)

        def began(todo: int) -> None:
            printer.total = total
            printer.batch_id = recorder.session_id
            say(f"batch {recorder.session_id}: {todo} items on {engine.name}", err=True)

        state = await drive_batch(
            recorder, plan, engine, settings, options, resume=resume is not None, began=began
        )
        if state is None:
            say(f"batch {recorder.session_id}: nothing left to run")
        return state, plan.of


class _Progress:
    """One line per item that ends, and the batch's end (or its events as JSON lines)."""

    def __init__(self, *, json_lines: bool) -> None:
        self.json_lines = json_lines
        self.total = 0
        self.batch_id = ""

    def __call__(self, event: Event, state: SessionState) -> None:
        if self.json_lines:
            say_json(dump_event(event))
            return
        batch = state.batch
        if isinstance(event, BatchItem) and event.state != "started" and batch is not None:
            label = batch.items[event.item].label if event.item in batch.items else event.item
            verdict = {True: " passed", False: " failed the check"}.get(event.passed, "")  # type: ignore[arg-type]
            why = f": {event.line}" if event.line and event.passed is not True else ""
            seconds = f" ({event.seconds:.1f} s)" if event.seconds else ""
            say(f"[{batch.done}/{batch.total}] {event.state}{verdict} {label}{seconds}{why}")
        elif isinstance(event, SessionEnded):
            say(f"batch {self.batch_id} {event.status}: {event.summary}")


async def _report(settings: Settings, batch_id: str) -> EvalReport:
    from tui_agent.batch.evaluation import eval_report

    async with await open_store(settings) as store:
        batch_id = await store.resolve(batch_id)
        state = await store.state(batch_id)
        if state.kind != "batch" or (state.params.get("plan") or {}).get("of") != "eval":
            raise UsageError(f"session {batch_id} is not an eval batch")
        children = {s.session_id: s for s in await store.list_sessions() if s.batch == batch_id}
    return eval_report(state, children)


def cmd_report(args: argparse.Namespace, settings: Settings) -> int:
    import json
    from dataclasses import asdict

    report = run(_report(settings, args.batch_id))
    if args.json:
        for row in report.rows:
            say_json(json.dumps(asdict(row), ensure_ascii=False))
        return 0
    _print_eval(report)
    return 0


def _print_eval(report: EvalReport) -> None:
    from rich.table import Table

    from tui_agent.printer import TerminalConsole
    from tui_agent.terminal_text import visible

    table = Table(box=None, padding=(0, 1), pad_edge=False, header_style="bold")
    for column in ("task", "result", "steps", "tokens", "cost", "s", "why"):
        table.add_column(column, overflow="fold")
    for row in report.rows:
        cost = f"${row.cost:.4f}" if row.cost is not None else "-"
        result = "pass" if row.passed else "FAIL"
        cells = (row.label, result, str(row.steps), str(row.tokens), cost, f"{row.seconds:.1f}")
        table.add_row(*map(visible, (*cells, row.line)))
    TerminalConsole().print(table)
    cost = f"${report.cost:.4f}" if report.cost is not None else "cost unknown"
    say(
        f"{report.passed}/{len(report.rows)} passed ({report.pass_rate:.0%}) with "
        f"{report.model or 'the configured model'}: {report.tokens} tokens, {cost}, "
        f"{report.seconds:.1f} s"
    )


def cmd_compare(args: argparse.Namespace, settings: Settings) -> int:
    from dataclasses import replace

    from rich.table import Table

    from tui_agent.formatting import format_cost
    from tui_agent.printer import TerminalConsole
    from tui_agent.terminal_text import visible

    first = run(_report(settings, args.first))
    second = run(_report(settings, args.second))
    theirs = {row.label: row for row in second.rows}
    shared = [row for row in first.rows if row.label in theirs]
    if not shared:
        raise UsageError(f"batches {first.batch} and {second.batch} share no task")
    names = (first.model or first.batch, second.model or second.batch)
    table = Table(box=None, padding=(0, 1), pad_edge=False, header_style="bold")
    table.add_column("task", overflow="fold")
    for name in names:
        table.add_column(visible(name[:24]), overflow="fold")
        for column in ("steps", "tokens", "cost", "s"):
            table.add_column(column, justify="right")
    for row in shared:
        other = theirs[row.label]
        cells = [row.label]
        for side in (row, other):
            cells += ["pass" if side.passed else "FAIL", str(side.steps), str(side.tokens)]
            cells += [format_cost(side.cost), f"{side.seconds:.1f}"]
        table.add_row(*map(visible, cells))
    TerminalConsole().print(table)
    labels = {row.label for row in shared}
    for name, report in zip(names, (first, second), strict=True):
        common = replace(report, rows=[r for r in report.rows if r.label in labels])
        cost = format_cost(common.cost, complete=common.cost_complete)
        say(
            f"{visible(name)}: {common.passed}/{len(shared)} passed, {common.steps} steps,"
            f" {common.tokens} tokens, {cost}"
        )
    only = len(first.rows) - len(shared), len(second.rows) - len(shared)
    if any(only):
        say(f"left out: {only[0]} task(s) only in A, {only[1]} only in B")
    return 0
