"""What every subcommand shares: options, the store, and running a recorded session."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from tui_agent.agents.requests.fields import API_BASE
from tui_agent.config import Settings
from tui_agent.errors import UserError
from tui_agent.events import Event, dump_event
from tui_agent.printer import EventPrinter
from tui_agent.recorder import SessionRecorder
from tui_agent.session import SessionState
from tui_agent.store import Store
from tui_agent.terminal_text import terminal_json, visible

if TYPE_CHECKING:
    from tui_agent.agents.launch import Launch
    from tui_agent.agents.requests import RequestBase

T = TypeVar("T")
Handler = Callable[[argparse.Namespace, Settings], int]
Output = Literal["tui", "headless", "json"]


class UsageError(UserError):
    """A command-line value that cannot be used (one clear line)."""


def common_options() -> argparse.ArgumentParser:
    """--db, --model, --api-base and the browser's options, accepted by every command (given
    before the command, they are the settings of every session the TUI starts)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--db",
        type=Path,
        default=argparse.SUPPRESS,
        help="session database (default: TUI_AGENT_DB or the user data dir)",
    )
    common.add_argument(
        "--model",
        default=argparse.SUPPRESS,
        help="litellm model name (default: TUI_AGENT_MODEL or config.toml)",
    )
    common.add_argument(
        "--api-base",
        metavar="URL",
        default=argparse.SUPPRESS,
        help=API_BASE.help,
    )
    common.add_argument(
        "--allow-file-urls",
        action="store_true",
        default=argparse.SUPPRESS,
        help="let Chromium load file:// pages (those beneath the start page's folder; "
        "default: TUI_AGENT_ALLOW_FILE_URLS or off)",
    )
    common.add_argument(
        "--no-browser-sandbox",
        dest="browser_sandbox",
        action="store_false",
        default=argparse.SUPPRESS,
        help="run Chromium without its sandbox, as the user tui-agent runs as (root too): "
        "only for pages you trust (default: TUI_AGENT_BROWSER_SANDBOX or on)",
    )
    return common


def add_output_options(parser: argparse.ArgumentParser) -> None:
    """--headless / --json for commands that run an agent."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--headless",
        dest="output",
        action="store_const",
        const="headless",
        help="print the session as it runs instead of opening the TUI",
    )
    group.add_argument(
        "--json",
        dest="output",
        action="store_const",
        const="json",
        help="print each stored event as one line of JSON",
    )
    parser.set_defaults(output="tui")


def say(line: str, *, err: bool = False) -> None:
    """Print `line` for the user (on stderr with `err`); any text it quotes from a session,
    a file or an error is made `visible`, so no control sequence in it reaches the terminal."""
    print(visible(line), file=sys.stderr if err else sys.stdout, flush=True)


def say_json(text: str) -> None:
    """Print one JSON document or line: the same values, DEL, C1 and bidi controls escaped."""
    print(terminal_json(text), flush=True)


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


async def open_store(settings: Settings) -> Store:
    return await Store.open(settings.db)


def failure_reason(state: SessionState) -> str:
    """Why a session did not complete, in one line."""
    if state.errors:
        return state.errors[-1].message
    executions = [s.execution for s in state.steps.values() if s.execution is not None]
    if executions and executions[-1].error is not None:
        error = executions[-1].error
        return f"{error.type}: {error.message}"
    return state.stopped_reason or state.status


def _no_terminal(output: Output) -> bool:
    """Whether the TUI was asked for with no terminal to draw on (a pipe, a CI job)."""
    return output == "tui" and not (sys.stdin.isatty() and sys.stdout.isatty())


def record_request(settings: Settings, request: RequestBase, output: Output) -> tuple[int, Launch]:
    """Start `request` through the launch path and record its session in the TUI, headless
    or as JSON lines: the exit code (0 when it completed; always 0 in the TUI) and the Launch
    (a task's updated context is read from it afterwards).

    Where each run is approved first (`approval_unit`), someone asks: a modal in the TUI; a
    prompt on the terminal when asked to (--approve) or when the sandbox does not isolate
    (local). Asking with no terminal to ask on is a usage error, said before anything starts.
    With no terminal to draw on (a pipe, a CI job), the TUI gives way to the headless printer.
    """
    from tui_agent.agents.launch import prepare
    from tui_agent.store.task_cache import TaskCache

    fall_back = _no_terminal(output)
    output = "headless" if fall_back else output
    cache = TaskCache(settings.db)
    if output == "tui":
        from tui_agent.agents.step_loop import Conversation
        from tui_agent.tui.app import TuiAgentApp
        from tui_agent.tui.screens.approval import ModalApprover

        app = TuiAgentApp(settings.db, settings=settings)
        conversation = Conversation() if request.conversational else None
        launch = prepare(
            request,
            settings,
            approver=ModalApprover(app),
            cache=cache,
            conversation=conversation,
        )
        app.start_launch(launch)
        app.run()
        return 0, launch
    approver = terminal_approver(settings, request, output)
    launch = prepare(request, settings, approver=approver, cache=cache)
    if fall_back:  # said once the request is known to start, so a refusal stays one line
        print("tui-agent: no terminal here: printing the session (--headless)", file=sys.stderr)
    return record_launch(settings, launch, output), launch


def terminal_approver(settings: Settings, request: RequestBase, output: Output) -> Any:
    """The terminal prompt that approves each run of `request`, when one must."""
    unit = request.approval_unit
    approve = bool(getattr(request, "approve", False))
    sandbox = getattr(request, "sandbox", None) or settings.sandbox
    if unit is None or not (approve or sandbox == "local"):
        return None
    from tui_agent.cli.approval import TerminalApprover
    from tui_agent.printer import TerminalConsole

    if not TerminalApprover.available():
        why = "--approve is on" if approve else "the local sandbox is not isolated"
        raise UsageError(
            f"{why}, so each {unit} must be approved, but stdin is not a terminal; "
            "run it in a terminal, or use an isolated sandbox without --approve"
        )
    json_output = output == "json"
    return TerminalApprover(TerminalConsole(stderr=json_output), show_code=json_output)


def record_launch(settings: Settings, launch: Launch, output: Output) -> int:
    """Record the prepared session headless or as JSON lines: 0 when it completed, else 1."""

    def print_json(event: Event, _state: SessionState) -> None:
        say_json(dump_event(event))

    listener = EventPrinter() if output == "headless" else print_json

    async def go() -> int:
        async with await open_store(settings) as store:
            if launch.continues:
                recorder = await SessionRecorder.resume(store, launch.session_id, [listener])
                state = await recorder.go_on(launch.events)
            else:
                recorder = SessionRecorder(store, launch.session_id, listeners=[listener])
                state = await recorder.run(launch.started, launch.events)
        if output == "headless" and state.status != "completed":
            say(f"tui-agent: session {state.status}: {failure_reason(state)}", err=True)
        return 0 if state.status == "completed" else 1

    return run(go())
