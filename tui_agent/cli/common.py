"""What every subcommand shares: options, the store, and running a recorded session."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import Any, Literal, TypeVar

from tui_agent.agents.approval import Approver
from tui_agent.config import Settings
from tui_agent.errors import UserError
from tui_agent.events import Event, SessionStarted, dump_event
from tui_agent.printer import EventPrinter
from tui_agent.recorder import SessionRunner
from tui_agent.session import SessionState
from tui_agent.store import Store
from tui_agent.terminal_text import terminal_json, visible

T = TypeVar("T")
Handler = Callable[[argparse.Namespace, Settings], int]
Output = Literal["tui", "headless", "json"]


class UsageError(UserError):
    """A command-line value that cannot be used (one clear line)."""


def common_options() -> argparse.ArgumentParser:
    """--db, --model and the browser's options, accepted by every command."""
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


def add_api_base_option(parser: argparse.ArgumentParser) -> None:
    """--api-base: the model server's URL, for commands that call a model."""
    parser.add_argument(
        "--api-base",
        default=None,
        metavar="URL",
        help="the model server's URL (default: TUI_AGENT_API_BASE or the provider's)",
    )


def add_sandbox_option(parser: argparse.ArgumentParser) -> None:
    """--sandbox: the backend code runs in."""
    parser.add_argument(
        "--sandbox",
        choices=("auto", "docker", "bubblewrap", "local"),
        default=None,
        help="backend (default: TUI_AGENT_SANDBOX or auto: docker, else bubblewrap)",
    )


AGENT_TYPES = ("scraper", "transformer", "analyzer", "api-client", "generic")


def add_agent_type_option(parser: argparse.ArgumentParser, default: str | None) -> None:
    """--agent-type: what the code does, so feedback and refinement speak its language."""
    parser.add_argument(
        "--agent-type",
        choices=AGENT_TYPES,
        default=default,
        help="what the code does; feedback forms and refinement prompts follow it "
        f"(default: {default or 'scraper with --url, else generic'})",
    )


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


def read_json_object(path: Path, what: str) -> dict[str, Any]:
    """A JSON object from `path`, or a UsageError naming the file, line and problem."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise UsageError(f"{what} {path} is not UTF-8 text") from exc
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{what} {path} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from exc
    if not isinstance(data, dict):
        raise UsageError(f"{what} {path} must hold a JSON object, not {type(data).__name__}")
    return data


def failure_reason(state: SessionState) -> str:
    """Why a session did not complete, in one line."""
    if state.errors:
        return state.errors[-1].message
    executions = [s.execution for s in state.steps.values() if s.execution is not None]
    if executions and executions[-1].error is not None:
        error = executions[-1].error
        return f"{error.type}: {error.message}"
    return state.stopped_reason or state.status


def _terminal(output: Output) -> Output:
    """`output`, or headless when the TUI has no terminal to draw on (a pipe, a CI job)."""
    if output == "tui" and not (sys.stdin.isatty() and sys.stdout.isatty()):
        print("tui-agent: no terminal here: printing the session (--headless)", file=sys.stderr)
        return "headless"
    return output


Session = tuple[SessionStarted, AsyncIterator[Event]]
"""A session's first event and the agent that goes on from it."""


def record_approved_session(
    settings: Settings,
    output: Output,
    start: Callable[[Approver | None], Session],
    *,
    approve: bool,
    sandbox: str | None,
    what: str,
) -> int:
    """Record the session `start(approver)` begins, with someone to approve each `what`
    ("run", "program") before it runs: a modal in the TUI; a prompt on the terminal when
    asked to (`approve`) or when the sandbox does not isolate (local). Asking with no
    terminal to ask on is a usage error, said before anything starts.
    """
    output = _terminal(output)
    if output == "tui":
        from tui_agent.tui.app import TuiAgentApp
        from tui_agent.tui.screens.approval import ModalApprover

        app = TuiAgentApp(settings.db, settings=settings)
        started, agent = start(ModalApprover(app))
        app.start_session(started, agent)
        app.run()
        return 0
    approver = None
    if approve or (sandbox or settings.sandbox) == "local":
        from tui_agent.cli.approval import TerminalApprover
        from tui_agent.printer import TerminalConsole

        if not TerminalApprover.available():
            why = "--approve is on" if approve else "the local sandbox is not isolated"
            raise UsageError(
                f"{why}, so each {what} must be approved, but stdin is not a terminal; "
                "run it in a terminal, or use an isolated sandbox without --approve"
            )
        json_output = output == "json"
        approver = TerminalApprover(TerminalConsole(stderr=json_output), show_code=json_output)
    started, agent = start(approver)
    return record_session(settings, started, agent, output)


def record_session(
    settings: Settings,
    started: SessionStarted,
    agent: AsyncIterator[Event],
    output: Output,
    *,
    session_id: str | None = None,
) -> int:
    """Run `agent` as a recorded session in the TUI, headless or as JSON lines.

    Returns the exit code: 0 when the session completed, 1 otherwise (headless / json).
    With no terminal to draw on (a pipe, a CI job), the TUI gives way to the headless printer.
    `session_id` defaults to a new one.
    """
    output = _terminal(output)
    if output == "tui":
        from tui_agent.tui.app import TuiAgentApp

        app = TuiAgentApp(settings.db, settings=settings)
        app.start_session(started, agent, session_id=session_id)
        app.run()
        return 0

    def print_json(event: Event, _state: SessionState) -> None:
        say_json(dump_event(event))

    listener = EventPrinter() if output == "headless" else print_json

    async def go() -> int:
        async with await open_store(settings) as store:
            runner = SessionRunner(store, session_id, listeners=[listener])
            state = await runner.run(started, agent)
        if output == "headless" and state.status != "completed":
            say(f"tui-agent: session {state.status}: {failure_reason(state)}", err=True)
        return 0 if state.status == "completed" else 1

    return run(go())
