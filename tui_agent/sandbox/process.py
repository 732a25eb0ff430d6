"""Host side of the kernel protocol, shared by every backend.

`KernelSandbox` implements the Sandbox protocol on top of a `Launcher` (which starts kernel.py
locally, under bubblewrap or in a container). It sends each request as one JSON line, reads the
kernel's messages through a bounded buffer, and enforces the request's timeout on the host. When
a run overruns or the kernel dies, it kills everything the kernel started, starts a fresh
kernel and returns a result that says so (`state_lost`). Nothing waits without a deadline, and
at most one response line (`max_result_bytes` plus room for logs) is held in memory. Tool calls
the code makes during a run are answered by the run's `on_call` handler, inside the run's own
deadline.

The code can write to the protocol pipe too. Each request carries a fresh random run id that
the kernel's messages echo; a line that is not a well-formed message of the run in flight
(garbage, an oversized line, a message with no id or another run's) is dropped, and the run's
logs end with one line saying how many were and why the first was. No such line can end the
session or be taken for another run's result. (The code can find its own run's id in the
kernel's memory and make up its own result: no more than returning a value.)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Protocol, Self

from pydantic_core import PydanticSerializationError

from tui_agent.analysis.output import analyze_output
from tui_agent.events import ErrorInfo, LogLine
from tui_agent.sandbox.base import SandboxError
from tui_agent.sandbox.channel import (
    CallMessage,
    LogsMessage,
    Message,
    ReadyMessage,
    ResultMessage,
    read_message,
)
from tui_agent.sandbox.limits import Limits, PidsCgroup
from tui_agent.sandbox.wire import (
    CallHandler,
    ExecuteRequest,
    ExecuteResult,
    ToolAnswer,
    ToolRequest,
    items_of,
)

KERNEL_FILE = Path(__file__).with_name("kernel.py")
LOG_LIMIT = 1 << 20
"""Bytes of output the kernel keeps per run (kernel.LOG_LIMIT)."""
MAX_RESULT_BYTES = 32 << 20
START_TIMEOUT = 30.0
EXIT_TIMEOUT = 5.0
DIAGNOSTICS_TAIL = 4096
_OVERSIZE = object()

LogCallback = Callable[[list[LogLine]], None]
"""Called with the lines a run printed since the last call, while it runs (about every 0.2 s)."""


def kernel_command(
    python: str, kernel: str, limits: Limits, max_result_bytes: int = MAX_RESULT_BYTES
) -> list[str]:
    """argv that starts kernel.py (at path `kernel`) with `python` and these limits."""
    config = {"limits": limits.kernel_config(), "max_result_bytes": max_result_bytes}
    return [python, "-B", kernel, json.dumps(config, separators=(",", ":"))]


class Writer(Protocol):
    """Where requests go (asyncio.StreamWriter fits)."""

    def write(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...

    def close(self) -> None: ...


@dataclass
class Connection:
    """The pipes of one started kernel."""

    requests: Writer
    responses: asyncio.StreamReader
    diagnostics: asyncio.StreamReader | None = None


class Launcher(Protocol):
    """Starts and stops the kernel of one sandbox; one kernel at a time."""

    async def spawn(self) -> Connection:
        """Start a kernel; raises SandboxError (one line) when it cannot be started."""

    async def started(self) -> None:
        """The kernel said it is ready (nothing of the user's has run yet)."""

    async def stop(self) -> None:
        """Kill the kernel and everything it started, and wait until they are gone."""

    async def exit_reason(self) -> str:
        """After the kernel's output ended: why it is gone, e.g. 'kernel died (signal 9, ...)'."""

    async def close(self) -> None:
        """Stop the kernel and release what the launcher holds."""


class SubprocessLauncher:
    """Runs the kernel as a host subprocess in its own session; kills its whole tree."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        max_processes: int | None = None,
    ) -> None:
        self.argv = list(argv)
        self.cwd = cwd
        self.env = env
        self.max_processes = max_processes
        self.cgroup: PidsCgroup | None = None
        self._process: asyncio.subprocess.Process | None = None

    async def spawn(self) -> Connection:
        return await self._exec(self.argv)

    async def _exec(self, argv: Sequence[str], *, pass_fds: Sequence[int] = ()) -> Connection:
        """Start `argv` with the descriptors `pass_fds` open in it."""
        if self.cgroup is None and self.max_processes:
            self.cgroup = PidsCgroup.create(self.max_processes)
        try:
            self._process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.cwd,
                env=self.env,
                start_new_session=True,
                pass_fds=pass_fds,
            )
        except OSError as exc:
            raise SandboxError(f"cannot start {argv[0]}: {exc.strerror or exc}") from exc
        process = self._process
        assert process.stdin and process.stdout
        return Connection(process.stdin, process.stdout, process.stderr)

    async def started(self) -> None:
        if self.cgroup and self._process:
            self.cgroup.add_tree(self._process.pid)

    async def stop(self) -> None:
        process = self._process
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        if self.cgroup:
            self.cgroup.kill_all()
        if process.stdin:
            process.stdin.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(_gone(process), EXIT_TIMEOUT)
        if process.returncode is not None:
            self._process = None  # its pid (and process group id) may be reused from now on

    async def exit_reason(self) -> str:
        process = self._process
        if process is None:
            return "kernel not started"
        try:
            code = await asyncio.wait_for(process.wait(), EXIT_TIMEOUT)
        except TimeoutError:
            return "kernel closed its protocol pipe and stopped answering"
        return self.describe_exit(code)

    def describe_exit(self, code: int) -> str:
        """A returncode in words ('kernel died (signal 9, SIGKILL)')."""
        if code < 0:
            return signal_reason(-code)
        return f"kernel exited with code {code}"

    async def close(self) -> None:
        await self.stop()
        if self.cgroup:
            self.cgroup.remove()
            self.cgroup = None


async def _gone(process: asyncio.subprocess.Process) -> None:
    """Wait until the killed `process` has exited and its output pipe has reached its end.

    What is left in the pipe is read and dropped: unread output (a thread of the user's code
    writing to the protocol pipe after its run ended) would keep the pipe from its end, and
    the process's transport open until the garbage collector closed it, maybe after its event
    loop had closed.
    """
    if process.stdout is not None:
        with contextlib.suppress(RuntimeError):  # a run being ended reads it to the end itself
            while await process.stdout.read(1 << 20):
                pass
    await process.wait()


def signal_reason(number: int) -> str:
    """Why a kernel killed by signal `number` is gone."""
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = "unknown signal"
    cause = {
        "SIGKILL": "killed: out of memory, or killed from inside",
        "SIGXCPU": "CPU time limit",
        "SIGXFSZ": "file size limit",
        "SIGSEGV": "crashed",
        "SIGBUS": "crashed",
        "SIGABRT": "aborted",
    }.get(name)
    return f"kernel died (signal {number}, {name}" + (f": {cause})" if cause else ")")


class _LineReader:
    """Reads newline-terminated messages, never holding more than `limit` bytes of one."""

    def __init__(self, stream: asyncio.StreamReader, limit: int) -> None:
        self._stream = stream
        self._limit = limit
        self._buffer = bytearray()
        self._scanned = 0
        self._skipping = False

    async def next(self) -> bytes | object | None:
        """The next line; `_OVERSIZE` for a line over the limit (skipped); None at the end."""
        while True:
            index = self._buffer.find(b"\n", self._scanned)
            if index >= 0:
                line = bytes(self._buffer[:index])
                del self._buffer[: index + 1]
                self._scanned = 0
                if self._skipping:
                    self._skipping = False
                    return _OVERSIZE
                return line
            self._scanned = len(self._buffer)
            if len(self._buffer) > self._limit:
                self._buffer.clear()
                self._scanned = 0
                self._skipping = True
            chunk = await self._stream.read(1 << 20)
            if not chunk:
                return None
            self._buffer += chunk


class _RunLogs:
    """The log lines of one run as they arrive, with a host-side cap as a safety net, and the
    lines of the channel that were not the run's messages (ignored, counted).

    `on_logs` gets the lines of each interim `logs` message (not those of the final result).
    """

    def __init__(self, on_logs: LogCallback | None = None) -> None:
        self.lines: list[LogLine] = []
        self.dropped = 0
        self.ignored = 0
        self._first_ignored = ""
        self._size = 0
        self._on_logs = on_logs

    def add(self, message: LogsMessage | ResultMessage) -> None:
        first = len(self.lines)
        for stream, text in message.lines:
            if self._size > 2 * LOG_LIMIT:
                self.dropped += len(text)
                continue
            self._size += len(text) + 1
            self.lines.append(LogLine.model_construct(stream=stream, text=text))
        self.dropped = max(self.dropped, message.dropped)
        interim = isinstance(message, LogsMessage)
        if self._on_logs is not None and interim and first < len(self.lines):
            self._on_logs(self.lines[first:])

    def ignore(self, reason: str) -> None:
        """A line of the channel that is not a message of this run: counted, not used."""
        self.ignored += 1
        self._first_ignored = self._first_ignored or reason

    def final(self) -> list[LogLine]:
        """The lines, then a note for output cut off and one for channel lines ignored."""
        notes = []
        if self.dropped:
            notes.append(
                f"[output truncated: more than {LOG_LIMIT >> 20} MiB printed in this run; "
                f"{self.dropped:,} more bytes not kept]"
            )
        if self.ignored:
            lines = "1 line" if self.ignored == 1 else f"{self.ignored:,} lines"
            notes.append(
                f"[tui-agent: ignored {lines} on the kernel's channel that were not this run's "
                f"messages (written by the code, or late); the first: {self._first_ignored}]"
            )
        return [*self.lines, *(LogLine(stream="stderr", text=note) for note in notes)]


class KernelSandbox:
    """A Sandbox backed by one long-lived kernel process, restarted when it is lost."""

    name = "kernel"
    isolated = True

    def __init__(self, launcher: Launcher, *, max_result_bytes: int = MAX_RESULT_BYTES) -> None:
        self.launcher = launcher
        self.max_result_bytes = max_result_bytes
        self._reader: _LineReader | None = None
        self._writer: Writer | None = None
        self._diagnostics = bytearray()
        self._diagnostics_task: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._alive = False
        self._started = False
        self._closed = False

    async def start(self) -> None:
        if self._closed:
            raise SandboxError(f"the {self.name} sandbox is closed")
        async with self._lock:
            if not self._alive:
                await self._spawn()

    async def execute(
        self,
        request: ExecuteRequest,
        on_logs: LogCallback | None = None,
        on_call: CallHandler | None = None,
    ) -> ExecuteResult:
        """Run `request`; `on_logs` (optional) sees its output lines while it runs, and
        `on_call` answers the tool calls it makes (without one, each call fails)."""
        if self._closed:
            raise SandboxError(f"the {self.name} sandbox is closed")
        try:
            body = request.model_dump_json(exclude={"timeout"})
        except PydanticSerializationError as exc:
            raise SandboxError(f"the request cannot be sent to the sandbox: {exc}") from exc
        run = secrets.token_hex(16)
        payload = f'{{"op":"execute","run":"{run}",{body[1:]}\n'.encode()
        async with self._lock:
            state_lost = False
            if not self._alive:
                state_lost = self._started
                await self._spawn()
            began = time.monotonic()
            logs = _RunLogs(on_logs)
            try:
                exchange = self._exchange(payload, run, logs, on_call)
                reply = await asyncio.wait_for(exchange, request.timeout)
            except TimeoutError:
                message = f"the run did not finish within {request.timeout:g} s and was killed"
                return await self._fault(logs, began, "timeout", "TimeoutError", message)
            except asyncio.CancelledError:
                self._alive = False
                await asyncio.shield(self.launcher.stop())
                raise
            if reply is None:
                closed = self._closed
                reason = "the sandbox was closed" if closed else await self.launcher.exit_reason()
                return await self._fault(logs, began, reason, "KernelDied", reason)
            return self._result(reply, logs, began, state_lost)

    async def reset(self) -> None:
        async with self._lock:
            await self._stop()
            await self._spawn()

    async def close(self) -> None:
        self._closed = True
        await self._stop()
        await self.launcher.close()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def _spawn(self) -> None:
        connection = await self.launcher.spawn()
        self._writer = connection.requests
        self._reader = _LineReader(connection.responses, self.max_result_bytes + 16 * LOG_LIMIT)
        self._diagnostics = bytearray()
        if connection.diagnostics is not None:
            self._diagnostics_task = asyncio.create_task(self._keep_tail(connection.diagnostics))
        try:
            line = await asyncio.wait_for(self._reader.next(), START_TIMEOUT)
        except TimeoutError:
            line = None
        if not isinstance(line, bytes) or not isinstance(read_message(line), ReadyMessage):
            await self._stop()
            detail = self._diagnostics_text().strip().splitlines()
            why = detail[-1] if detail else "it stopped before saying it was ready"
            raise SandboxError(f"the {self.name} sandbox did not start: {why}")
        await self.launcher.started()
        self._alive = True
        self._started = True

    async def _stop(self) -> None:
        self._alive = False
        await self.launcher.stop()
        task, self._diagnostics_task = self._diagnostics_task, None
        if task:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(task, 1.0)

    async def _exchange(
        self, request: bytes, run: str, logs: _RunLogs, on_call: CallHandler | None
    ) -> ResultMessage | None:
        """Send the request of run `run`, answering the tool calls of that run; its result
        message, or None if the kernel died. Every other line is ignored (noted in `logs`)."""
        assert self._writer and self._reader
        if not await self._send(request):
            return None
        while True:
            message = await self._next_message()
            if message is None:
                return None
            if isinstance(message, str):
                logs.ignore(message)
            elif isinstance(message, ReadyMessage) or message.run != run:
                logs.ignore(f"a {message.type} message of another run")
            elif isinstance(message, ResultMessage):
                logs.add(message)
                return message
            elif isinstance(message, LogsMessage):
                logs.add(message)
            else:
                answer = await _answer(message, on_call)
                line = json.dumps({"op": "answer", "id": message.id, **answer}) + "\n"
                if not await self._send(line.encode()):
                    return None

    async def _next_message(self) -> Message | str | None:
        """The next line as a message, or why it is none; None once the kernel is gone."""
        assert self._reader
        line = await self._reader.next()
        if line is None:
            return None
        if line is _OVERSIZE:
            return f"a line over {(self.max_result_bytes >> 20) + 16} MiB"
        assert isinstance(line, bytes)
        if len(line) > LOG_LIMIT:
            return await asyncio.to_thread(read_message, line)
        return read_message(line)

    async def _send(self, data: bytes) -> bool:
        """Write `data` to the kernel; False when its end of the pipe is gone."""
        assert self._writer
        try:
            self._writer.write(data)
            await self._writer.drain()
        except (BrokenPipeError, ConnectionResetError):
            return False
        return True

    async def _fault(
        self, logs: _RunLogs, began: float, reason: str, kind: str, message: str
    ) -> ExecuteResult:
        """The result of a run whose kernel is gone: kill what is left, start a fresh one."""
        await self._stop()
        trace = self._diagnostics_text() if kind == "KernelDied" else ""
        note = "the sandbox was restarted and its state (variables, imports) is lost"
        if self._closed:
            note = "the sandbox is closed"
        else:
            try:
                await self._spawn()
            except SandboxError as exc:
                note = f"restarting the sandbox failed: {exc}"
        return ExecuteResult(
            success=False,
            logs=logs.final(),
            logs_truncated=bool(logs.dropped),
            duration=time.monotonic() - began,
            error=ErrorInfo(type=kind, message=f"{message}; {note}", traceback=trace),
            timed_out=reason == "timeout",
            killed_reason=reason,
            state_lost=True,
        )

    def _result(
        self, reply: ResultMessage, logs: _RunLogs, began: float, state_lost: bool
    ) -> ExecuteResult:
        value, context = reply.result, reply.context
        problems = list(reply.non_serializable)
        if context is not None and not isinstance(context, dict):
            problems.append(f"context: replaced by a {type(context).__name__}, not a dict")
            context = None
        return ExecuteResult(
            success=reply.success,
            result=value,
            items=items_of(value),
            analysis=analyze_output(value) if reply.success and value is not None else None,
            logs=logs.final(),
            logs_truncated=bool(logs.dropped),
            duration=time.monotonic() - began,
            error=reply.error,
            context=context,
            non_serializable=problems,
            state_lost=state_lost,
        )

    async def _keep_tail(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(1 << 16):
            self._diagnostics += chunk
            del self._diagnostics[:-DIAGNOSTICS_TAIL]

    def _diagnostics_text(self) -> str:
        return self._diagnostics.decode("utf-8", "replace")


async def _answer(message: CallMessage, on_call: CallHandler | None) -> dict[str, str]:
    """The answer to one tool-call message: {"output": ...} or {"failure": ...}."""
    request = ToolRequest(id=message.id, tool=message.tool, arguments=message.arguments)
    if on_call is None:
        return {"failure": f"{request.tool}: no tools are available to this run"}
    try:
        answer: ToolAnswer = await on_call(request)
    except Exception as exc:  # a fault of the host's handler must not leave the code waiting
        problem = f"{type(exc).__name__}: {exc}"
        return {"failure": f"{request.tool}: the host could not answer: {problem}"}
    if answer.failure is not None:
        return {"failure": answer.failure}
    return {"output": answer.output or ""}
