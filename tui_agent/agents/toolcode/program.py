"""One `write_code`: check the program, write it to a fresh folder in the workspace, run it in
the sandbox with its tool calls answered on the host, and remove the folder.

Events, on the program's step: CodeProposed (action "write_code"); then either an
ExecutionFinished of type ProgramRefused (the program was checked and not run: no
ExecutionStarted), or ExecutionStarted, the output and a ToolCall / ToolResult pair (run_step =
the step) for every tool call it made, and ExecutionFinished. `answer` is what the model gets.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from tui_agent.agents.approval import Approver
from tui_agent.agents.codeact_prompts import describe_result
from tui_agent.agents.streaming import StepRun
from tui_agent.events import CodeProposed, ErrorInfo, Event, ExecutionFinished, Log
from tui_agent.sandbox.base import Sandbox
from tui_agent.sandbox.models import CallHandler, ExecuteRequest, ExecuteResult
from tui_agent.tools import check_program, refusal_text

CODE_FOLDER = ".toolcode"
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
path (paths relative to the workspace, where every backend's runner starts)."""


class Program:
    """Runs the programs of one session: `workspace` is the sandbox's workspace on the host,
    `packages` the folder of the generated packages inside it."""

    def __init__(
        self,
        sandbox: Sandbox,
        tools: CallHandler,
        *,
        workspace: Path,
        packages: Path,
        timeout: float,
        approver: Approver | None = None,
    ) -> None:
        self.sandbox = sandbox
        self.tools = tools
        self.workspace = workspace
        self.packages = packages.relative_to(workspace)
        self.timeout = timeout
        self.approver = approver
        self.runs = 0

    async def run(
        self, step: int, code: str, args: Sequence[str], starting: asyncio.Future[None]
    ) -> AsyncIterator[Event | str]:
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
            main = folder / "main.py"
            main.write_text(code, encoding="utf-8")
            relative = folder.relative_to(self.workspace)
            launcher = LAUNCHER.format(
                main=str(relative / "main.py"),
                args=[str(a) for a in args],
                packages=str(self.packages),
                folder=str(relative),
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
        folder = self.workspace / CODE_FOLDER / f"code_{stamp}_{step}_{self.runs}"
        folder.mkdir(parents=True)
        return folder


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
