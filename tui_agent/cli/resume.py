"""`tui-agent code|toolcode --continue ID "MESSAGE"` and `--fork ID --at STEP "MESSAGE"`:
a stored session goes on, its history from its events and its sandbox's state restored by
running its successful code again (launch/resume.py). In the TUI without a message, it waits
for one."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from tui_agent.agents.requests import RequestBase, RequestError, request_from_json
from tui_agent.cli.common import (
    UsageError,
    open_store,
    record_launch,
    run,
    terminal_approver,
)
from tui_agent.config import Settings
from tui_agent.events import Event, SessionStarted

Handler = Callable[[argparse.Namespace, Settings], int]


def add_resume_options(parser: argparse.ArgumentParser) -> None:
    """--continue / --fork / --at and how the state is restored."""
    group = parser.add_argument_group("continuing a session")
    which = group.add_mutually_exclusive_group()
    which.add_argument(
        "--continue",
        dest="continue_id",
        metavar="ID",
        help="continue session ID: TASK is the next message (only --model and --api-base "
        "may change)",
    )
    which.add_argument(
        "--fork", metavar="ID", help="a new session holding session ID's steps up to --at"
    )
    group.add_argument("--at", type=int, metavar="STEP", help="the last step a fork holds")
    group.add_argument(
        "--restore",
        choices=("state", "clean"),
        default="state",
        help="state: run the session's successful code again first (default); clean: do not",
    )
    group.add_argument(
        "--rerun-flagged",
        action="store_true",
        help="while restoring, also run code that ran with the network or may write outside "
        "the workspace (left out by default)",
    )
    group.add_argument(
        "--on-restore-failure",
        choices=("skip", "clean", "cancel"),
        default="cancel",
        help="when a run fails while restoring: go on without it, start clean, or cancel (default)",
    )


def resuming(cls: type[RequestBase], start: Handler) -> Handler:
    """The handler of a chat-like command: `start` a new session, or continue / fork one."""

    def handle(args: argparse.Namespace, settings: Settings) -> int:
        if args.continue_id is None and args.fork is None:
            if args.at is not None:
                raise UsageError("--at is the step of a fork: give --fork ID too")
            return start(args, settings)
        if args.fork is not None and args.at is None:
            raise UsageError("--fork needs --at STEP: the last step the fork holds")
        return _continue(cls, args, settings)

    return handle


def _continue(cls: type[RequestBase], args: argparse.Namespace, settings: Settings) -> int:
    from tui_agent.agents.launch.resume import continue_session
    from tui_agent.agents.step_loop import Conversation, FixedChoices

    wanted = args.continue_id or args.fork
    session_id, stored, imported = run(_stored(settings, wanted))
    message = getattr(args, "task", None)
    output = args.output
    if output != "tui" and not (message or "").strip():
        raise UsageError(
            f"say what comes next: tui-agent {cls.model_fields['kind'].default} "
            f'--continue {session_id} "MESSAGE" (or open it in the TUI)'
        )
    choices = FixedChoices(flagged=args.rerun_flagged, on_failure=args.on_restore_failure)
    conversation = Conversation() if output == "tui" else None
    app = None
    if output == "tui":
        from tui_agent.tui.app import TuiAgentApp
        from tui_agent.tui.screens.approval import ModalApprover

        app = TuiAgentApp(settings.db, settings=settings)
        approver = ModalApprover(app)
    try:
        if app is None:
            stored_request = request_from_json(_request_of(stored))
            approver = terminal_approver(settings, stored_request, output)
        launch = continue_session(
            stored,
            settings,
            message=message or None,
            choices=choices,
            restore=args.restore,
            model=getattr(args, "model", None),
            api_base=getattr(args, "api_base", None),
            fork_at=args.at if args.fork is not None else None,
            imported=imported,
            approver=approver,
            conversation=conversation,
        )
    except RequestError as error:
        raise UsageError(f"session {session_id}: {error}") from None
    if app is not None:
        app.start_launch(launch)
        app.run()
        return 0
    return record_launch(settings, launch, output)


async def _stored(settings: Settings, id_or_prefix: str) -> tuple[str, list[Event], bool]:
    """The session's id, its events and whether it was imported from a file."""
    async with await open_store(settings) as store:
        session_id = await store.resolve(id_or_prefix)
        events = await store.events(session_id)
        imported = await store.imported_from(session_id) is not None
    return session_id, events, imported


def _request_of(stored: list[Event]) -> dict[str, Any]:
    first = stored[0] if stored else None
    request = first.request if isinstance(first, SessionStarted) else None
    return dict(request or {})
