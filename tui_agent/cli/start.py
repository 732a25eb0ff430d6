"""`tui-agent code | toolcode | exec | scrape` start a session from its request's flags;
`tui-agent rerun ID` starts a recorded session again from the request it stored."""

from __future__ import annotations

import argparse
from typing import Any

from tui_agent.agents.requests import (
    REQUEST_CLASSES,
    CodeRequest,
    ExecRequest,
    RequestBase,
    RequestError,
    ScrapeRequest,
    ToolcodeRequest,
)
from tui_agent.cli.common import UsageError, add_output_options, open_store, record_request, run
from tui_agent.cli.imported import add_trust_options, allowances, approve
from tui_agent.cli.request_options import add_request_arguments, record_command, shell_line
from tui_agent.cli.resume import add_resume_options, resuming
from tui_agent.config import Settings
from tui_agent.events import SessionStarted

COMMANDS: tuple[tuple[str, type[RequestBase], str], ...] = (
    (
        "code",
        CodeRequest,
        "solve a task with the CodeAct agent: it writes Python, runs it, reads, answers",
    ),
    (
        "toolcode",
        ToolcodeRequest,
        "solve a task with programs that call MCP tools as Python functions",
    ),
    ("exec", ExecRequest, "run a Python file in a sandbox as a recorded session"),
    (
        "scrape",
        ScrapeRequest,
        "explore a list page, write a verified recipe, and extract its items",
    ),
)


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    for name, cls, help_text in COMMANDS:
        command = commands.add_parser(name, parents=[common], help=help_text)
        chat = cls.conversational
        add_request_arguments(command, cls, optional_positionals=chat)
        add_output_options(command)
        if chat:
            add_resume_options(command)
            command.set_defaults(handler=resuming(cls, record_command(cls)))
        else:
            command.set_defaults(handler=record_command(cls))
    rerun = commands.add_parser(
        "rerun",
        parents=[common],
        help="start a recorded session again, as it was started (--model, --api-base: with "
        "another model, another model server)",
    )
    rerun.add_argument("session", metavar="ID", help="session id (or a unique prefix)")
    rerun.add_argument(
        "--context",
        metavar="ctx.json",
        help="run with this context instead (needed when the stored one had secrets)",
    )
    add_trust_options(rerun)
    add_output_options(rerun)
    rerun.set_defaults(handler=cmd_rerun)


def cmd_rerun(args: argparse.Namespace, settings: Settings) -> int:
    from tui_agent.agents.launch.rerun import rerun_plan, rerun_request
    from tui_agent.printer import TerminalConsole

    session_id, started, imported_from = run(_recorded(settings, args.session))
    allowed = allowances(args, settings)
    try:
        request = rerun_request(
            started,
            model=getattr(args, "model", None),
            api_base=getattr(args, "api_base", None),
            context=args.context,
            imported=imported_from is not None,
            allowed=allowed,
        )
    except RequestError as error:
        cls = REQUEST_CLASSES.get(str((started.request or {}).get("kind")))
        said = shell_line(error, cls) if cls is not None else str(error)
        raise UsageError(f"session {session_id}: {said}") from None
    if imported_from is not None:
        plan = rerun_plan(session_id, imported_from, request, allowed)
        approve(TerminalConsole(stderr=args.output == "json"), plan, args.trust)
    try:
        code, _ = record_request(settings, request, args.output)
    except RequestError as error:
        raise UsageError(shell_line(error, type(request))) from None
    return code


async def _recorded(
    settings: Settings, id_or_prefix: str
) -> tuple[str, SessionStarted, str | None]:
    """The session's id, its first event and the file it was imported from (None: here)."""
    async with await open_store(settings) as store:
        session_id = await store.resolve(id_or_prefix)
        first = (await store.events(session_id))[0]
        imported_from = await store.imported_from(session_id)
    if not isinstance(first, SessionStarted):
        raise UsageError(f"session {session_id} does not begin with its start")
    return session_id, first, imported_from
