"""Approval on the terminal: a rich prompt before each step's code runs (run / skip / edit)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from rich.console import Console
from rich.prompt import Prompt
from rich.syntax import Syntax

from tui_agent.agents.approval import Decision, decision_for
from tui_agent.printer import TerminalConsole
from tui_agent.terminal_text import visible

T = TypeVar("T")
END_OF_CODE = "."
"""The line that ends code typed at the prompt when no $VISUAL / $EDITOR is set."""


class TerminalApprover:
    """Asks on the terminal with rich: (r)un / (s)kip / (e)dit.

    Edit opens $VISUAL or $EDITOR on the code, or, when neither is set, reads new code typed at
    the prompt up to a line holding only ".". Input is read on a daemon thread, so a cancelled
    session never waits for a key. `show_code` prints the code first (for `--json`, where the
    events on stdout are not for reading).
    """

    def __init__(self, console: Console | None = None, *, show_code: bool = False) -> None:
        self.console = console or TerminalConsole()
        self.show_code = show_code

    @staticmethod
    def available() -> bool:
        """Whether there is a terminal to ask on (stdin is a TTY)."""
        return sys.stdin is not None and sys.stdin.isatty()

    async def approve(self, step: int, code: str) -> Decision:
        return await _on_daemon_thread(lambda: self._ask(step, code))

    def _ask(self, step: int, code: str) -> Decision:
        if self.show_code:
            shown = visible(code)  # what is run stays as written; what is read shows all
            self.console.print(Syntax(shown, "python", line_numbers=True, theme="ansi_dark"))
        while True:
            answer = Prompt.ask(
                f"Run the code of step {step}? [bold](r)un[/] / (s)kip / (e)dit",
                console=self.console,
                choices=["r", "s", "e"],
                default="r",
                show_choices=False,
            )
            if answer == "r":
                return Decision("run")
            if answer == "s":
                return Decision("skip")
            edited = self._edit(code)
            if edited.strip():
                return decision_for(code, edited)
            self.console.print("[yellow]The edited code is empty; choose again.[/]")

    def _edit(self, code: str) -> str:
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
        if editor:
            return _edit_in(editor, code)
        self.console.print(f"Type the code to run; end with a line holding only {END_OF_CODE!r}:")
        lines: list[str] = []
        while (line := self.console.input()) != END_OF_CODE:
            lines.append(line)
        return "\n".join(lines) + "\n"


def _edit_in(editor: str, code: str) -> str:
    """`code` after the user edited it in `editor` (a command line, e.g. "code --wait")."""
    with tempfile.TemporaryDirectory(prefix="tui-agent-edit-") as folder:
        path = Path(folder) / "step.py"
        path.write_text(code, encoding="utf-8")
        subprocess.run([*shlex.split(editor), str(path)], check=False)
        return path.read_text(encoding="utf-8")


async def _on_daemon_thread(work: Callable[[], T]) -> T:
    """`work()` on a daemon thread; cancelling the await leaves the thread behind, unjoined."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]

    def target() -> None:
        try:
            outcome: tuple[T | None, BaseException | None] = (work(), None)
        except BaseException as exc:  # handed to the awaiting task, never lost
            outcome = (None, exc)
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits any more
            loop.call_soon_threadsafe(settle, *outcome)

    threading.Thread(target=target, name="tui-agent-approval", daemon=True).start()
    return await future
