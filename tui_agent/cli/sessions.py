"""Home screen, replay and `tui-agent sessions ...`: browsing what was recorded."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tui_agent.cli.common import UsageError, open_store, run, say, say_json
from tui_agent.config import Settings
from tui_agent.printer import (
    TerminalConsole,
    batch_report,
    render_event,
    session_report,
    sessions_table,
)
from tui_agent.report import build_report, report_json, report_schema
from tui_agent.store import MAX_FILE_MB, SessionExists, StoreError, read_jsonl
from tui_agent.terminal_text import terminal_json, visible_event


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add `replay` and `sessions` to the command parser."""
    replay = commands.add_parser("replay", parents=[common], help="replay a session in the TUI")
    replay.add_argument("target", metavar="ID|FILE.jsonl", help="session id (or prefix) or file")
    replay.set_defaults(handler=cmd_replay)

    sessions = commands.add_parser(
        "sessions", parents=[common], help="list, show, export, import and delete recorded sessions"
    )
    sessions.set_defaults(handler=lambda _a, _s: _usage(sessions))
    verbs = sessions.add_subparsers(title="sessions commands", metavar="VERB")
    listing = verbs.add_parser("list", parents=[common], help="list sessions, newest first")
    listing.add_argument("--json", action="store_true", help="one JSON summary per line")
    listing.set_defaults(handler=cmd_sessions_list)
    show = verbs.add_parser("show", parents=[common], help="print a session's stream and result")
    show.add_argument("session", metavar="ID")
    show.add_argument(
        "--json", action="store_true", help="the full report as JSON (see `sessions schema`)"
    )
    show.add_argument(
        "--items",
        type=int,
        metavar="N",
        help="with --json: the first N items only (default: all)",
    )
    show.set_defaults(handler=cmd_sessions_show)
    schema = verbs.add_parser(
        "schema", parents=[common], help="print the JSON Schema of `sessions show --json`"
    )
    schema.set_defaults(handler=cmd_sessions_schema)
    export = verbs.add_parser("export", parents=[common], help="write a session as JSONL")
    export.add_argument("session", metavar="ID")
    export.add_argument("-o", "--output", type=Path, required=True, metavar="FILE")
    export.set_defaults(handler=cmd_sessions_export)
    feedback = verbs.add_parser(
        "feedback", parents=[common], help="write a session's field feedback as JSON"
    )
    feedback.add_argument("session", metavar="ID")
    feedback.add_argument(
        "-o", "--output", required=True, metavar="FILE", help="the JSON file ('-': stdout)"
    )
    feedback.set_defaults(handler=cmd_sessions_feedback)
    imp = verbs.add_parser("import", parents=[common], help="read sessions from JSONL files")
    imp.add_argument("files", nargs="+", type=Path, metavar="FILE")
    imp.add_argument(
        "--skip-existing",
        action="store_true",
        help="skip a file whose session is already in the database",
    )
    imp.add_argument(
        "--max-mb",
        type=float,
        default=MAX_FILE_MB,
        metavar="N",
        help=f"refuse files larger than N MB ({MAX_FILE_MB})",
    )
    imp.set_defaults(handler=cmd_sessions_import)
    delete = verbs.add_parser("delete", parents=[common], help="delete a session")
    delete.add_argument("session", metavar="ID")
    delete.set_defaults(handler=cmd_sessions_delete)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def cmd_home(_args: argparse.Namespace, settings: Settings) -> int:
    from tui_agent.tui.app import TuiAgentApp

    run(_check_db(settings))
    TuiAgentApp(settings.db, settings=settings).run()
    return 0


async def _check_db(settings: Settings) -> int:
    """Open (and so create or migrate) the database before the TUI starts, failing clearly."""
    store = await open_store(settings)
    await store.close()
    return 0


def cmd_replay(args: argparse.Namespace, settings: Settings) -> int:
    from tui_agent.tui.app import TuiAgentApp

    target = Path(args.target)
    if target.suffix == ".jsonl" or target.is_file():
        if not target.is_file():
            raise StoreError(f"no such file: {target}")
        TuiAgentApp(settings.db, replay_events=read_jsonl(target), settings=settings).run()
        return 0
    session_id = run(_resolve(settings, args.target))
    TuiAgentApp(settings.db, replay_session=session_id, settings=settings).run()
    return 0


async def _resolve(settings: Settings, id_or_prefix: str) -> str:
    async with await open_store(settings) as store:
        return await store.resolve(id_or_prefix)


def cmd_sessions_list(args: argparse.Namespace, settings: Settings) -> int:
    async def go() -> int:
        async with await open_store(settings) as store:
            summaries = await store.list_sessions()
        if args.json:
            for summary in summaries:
                say_json(summary.model_dump_json())
        elif summaries:
            TerminalConsole().print(sessions_table(summaries))
        else:
            say(f"no sessions in {settings.db} (try: tui-agent sessions import sessions/*.jsonl)")
        return 0

    return run(go())


def cmd_sessions_show(args: argparse.Namespace, settings: Settings) -> int:
    if args.items is not None and (args.items < 0 or not args.json):
        raise UsageError("--items N goes with --json and counts from 0")

    async def go() -> int:
        async with await open_store(settings) as store:
            session_id = await store.resolve(args.session)
            events = await store.events(session_id)
        from tui_agent.session import fold

        if args.json:
            say_json(report_json(build_report(fold(events), args.items)))
            return 0
        shown = [visible_event(event) for event in events]  # display copies
        state = fold(shown)
        console = TerminalConsole()
        if state.kind == "scrape":
            console.print(session_report(state))
            return 0
        if state.kind == "batch":
            console.print(batch_report(state))
            return 0
        for event in shown:
            renderable = render_event(event)
            if renderable is not None:
                console.print(renderable)
        return 0

    return run(go())


def cmd_sessions_schema(args: argparse.Namespace, settings: Settings) -> int:
    print(json.dumps(report_schema(), indent=2))
    return 0


def cmd_sessions_export(args: argparse.Namespace, settings: Settings) -> int:
    async def go() -> int:
        async with await open_store(settings) as store:
            session_id = await store.resolve(args.session)
            count = await store.export_jsonl(session_id, args.output)
        say(f"exported {count} events of {session_id} to {args.output}")
        return 0

    return run(go())


def cmd_sessions_feedback(args: argparse.Namespace, settings: Settings) -> int:
    """The session's FieldFeedback list, in the order given, as a JSON array."""

    async def go() -> int:
        async with await open_store(settings) as store:
            session_id = await store.resolve(args.session)
            state = await store.state(session_id)
        document = [feedback.model_dump(mode="json") for feedback in state.feedback]
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
        if args.output == "-":
            sys.stdout.write(terminal_json(text))
            return 0
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {args.output}: {exc.strerror or exc}") from exc
        items = "item" if len(document) == 1 else "items"
        say(f"wrote {len(document)} feedback {items} of {session_id} to {args.output}")
        return 0

    return run(go())


def cmd_sessions_import(args: argparse.Namespace, settings: Settings) -> int:
    if not args.max_mb > 0:
        raise UsageError("--max-mb must be a positive number of megabytes")

    async def go() -> int:
        async with await open_store(settings) as store:
            for path in args.files:
                try:
                    session_id = await store.import_jsonl(path, args.max_mb)
                except SessionExists as exists:
                    if not args.skip_existing:
                        raise
                    say(f"{path}: session {exists.session_id} already imported")
                    continue
                say(f"imported {path} as session {session_id}")
        return 0

    return run(go())


def cmd_sessions_delete(args: argparse.Namespace, settings: Settings) -> int:
    async def go() -> int:
        async with await open_store(settings) as store:
            session_id = await store.resolve(args.session)
            await store.delete(session_id)
        say(f"deleted session {session_id}")
        return 0

    return run(go())
