"""One `write_code`: check the program, write it to a fresh folder of the session's hosted
folder (which the sandbox reads and never writes: sandbox/folders/hosted.py), run it in the sandbox
with its tool calls answered on the host, and remove the folder.

Events, on the program's step: CodeProposed (action "write_code"); then either an
ExecutionFinished of type ProgramRefused (the program was checked and not run: no
ExecutionStarted), or ExecutionStarted, the output and a ToolCall / ToolResult pair (run_step =
the step) for every tool call it made, and ExecutionFinished. `answer` is what the model gets.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
from collections.abc import AsyncGenerator, Sequence
from pathlib import Path

from tui_agent.agents.approval import Approver
from tui_agent.agents.codeact_prompts import describe_result
from tui_agent.agents.streaming import StepRun
from tui_agent.events import CodeProposed, ErrorInfo, Event, ExecutionFinished, Log
from tui_agent.sandbox.base import Sandbox
from tui_agent.sandbox.folders.hosted import FOLDER_MODE, HostedFolder
from tui_agent.sandbox.wire import CallHandler, ExecuteRequest, ExecuteResult
from tui_agent.tools import check_program, refusal_text

PROGRAMS_FOLDER = "programs"
FILE_MODE = 0o644
LAUNCHER = """\
import sys as _toolcode_sys

_toolcode_saved = (list(_toolcode_sys.argv), list(_toolcode_sys.path))
_toolcode_sys.argv = [{main!r}, *{args!r}]
_toolcode_sys.path[:0] = [{packages!r}, {folder!r}]
try:
    with open({main!r}, encoding="utf-8") as _toolcode_file:
        _toolcode_code = compile(_toolcode_file.read(), {main!r}, "exec")
    exec(_toolcode_code, {{"__name__": "__main__", "__file__": {main!r}}})
except SystemExit as _toolcode_exit:
    if _toolcode_exit.code not in (None, 0):
        raise
finally:
    _toolcode_sys.argv, _toolcode_sys.path[:] = _toolcode_saved
"""
"""Runs main.py as __main__ in a namespace of its own, with its args and the packages on the
path (paths where the sandbox sees the hosted folder)."""


class Program:
    """Runs the programs of one session: each is written to a fresh folder of `hosted` (the
    session's hosted folder), with `packages` (a folder in it: the generated packages) on its
    path."""

    def __init__(
        self,
        sandbox: Sandbox,
        tools: CallHandler,
        *,
        hosted: HostedFolder,
        packages: Path,
        timeout: float,
        approver: Approver | None = None,
    ) -> None:
        self.sandbox = sandbox
        self.tools = tools
        self.hosted = hosted
        self.packages = hosted.seen(packages)
        self.timeout = timeout
        self.approver = approver
        self.runs = 0

    async def run(
        self, step: int, code: str, args: Sequence[str], starting: asyncio.Future[None]
    ) -> AsyncGenerator[Event | str, None]:
        """The program's events, then (last) the text the model gets back."""
        yield CodeProposed(step=step, code=code, action="write_code")
        refusals = check_program(code)
        if refusals:
            answer = refusal_text(refusals)
            problem = "\n".join(str(r) for r in refusals)
            error = ErrorInfo(type="ProgramRefused", message=problem)
            yield ExecutionFinished(step=step, success=False, error=error)
            yield answer
            return
        if self.approver is not None:
            decision = await self.approver.approve(step, code)
            if decision.kind == "skip":
                yield Log(message=f"step {step}: the user skipped this program; the model is told")
                yield "Not run: the user skipped this program. Write another, or answer."
                return
            if decision.kind == "edit" and decision.code is not None:
                code = decision.code
                yield Log(message=f"step {step}: the user edited the program before it ran")
                yield CodeProposed(step=step, code=code, action="write_code")
        await starting
        result: ExecuteResult | None = None
        folder = self._fresh_folder(step)
        try:
            _write_new(folder / "main.py", code)
            seen = self.hosted.seen(folder)
            launcher = LAUNCHER.format(
                main=f"{seen}/main.py",
                args=[str(a) for a in args],
                packages=self.packages,
                folder=seen,
            )
            request = ExecuteRequest(code=launcher, timeout=self.timeout)
            run = StepRun(self.sandbox, request, step, tools=self.tools)
            async for event in run.events():
                yield event
            result = run.result
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        assert result is not None
        yield program_answer(result)

    def _fresh_folder(self, step: int) -> Path:
        self.runs += 1
        stamp = time.strftime("%Y%m%d_%H%M%S")
        programs = self.hosted.host / PROGRAMS_FOLDER
        programs.mkdir(exist_ok=True)
        folder = programs / f"code_{stamp}_{step}_{self.runs}"
        folder.mkdir(mode=FOLDER_MODE)
        for made in (programs, folder):  # whatever the umask: the sandbox user reads them
            os.chmod(made, FOLDER_MODE)
        return folder


def _write_new(path: Path, text: str) -> None:
    """Create `path` with `text`, readable by the sandbox user (never an existing file)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        os.fchmod(fd, FILE_MODE)
        file.write(text)


def program_answer(result: ExecuteResult) -> str:
    """What the model is told about a program's run: how it ended, then its output."""
    if result.success:
        head = f"The program ran ({result.duration:.2f} s)."
    elif result.timed_out:
        head = f"The program was stopped: {result.killed_reason}."
    else:
        head = "The program failed."
    body = describe_result(result.model_copy(update={"result": None}))
    return f"{head}\n{body}"


def args_of(value: object) -> list[str] | str:
    """write_code's `args` as strings; a message when they are not a list."""
    if value is None:
        return []
    if not isinstance(value, list):
        return f"Error: args must be a list of strings, not {json.dumps(value)[:80]}"
    return [item if isinstance(item, str) else json.dumps(item) for item in value]
