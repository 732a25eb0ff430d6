"""The tui-agent kernel: a stdlib-only Python kernel that runs inside every sandbox backend.

Started as ``python3 kernel.py [CONFIG_JSON]``, it speaks JSON lines over the stdin and stdout it
was started with. It moves them to private descriptors at once: the user's code gets fd 0 from
/dev/null and fds 1 and 2 as pipes whose output becomes logs, so nothing it prints, writes with
``os.write`` or lets a subprocess print can reach the protocol.

Messages out: ``{"type": "ready", "pid", "python"}`` once;
``{"type": "logs", "run", "lines": [[stream, text], ...], "dropped"}`` while a run prints;
``{"type": "result", "run", "success", "result", "context", "error", "non_serializable",
"lines", "dropped"}`` after each run. Message in: ``{"op": "execute", "run", "code", "args",
"context", "entrypoint", "url", "html"}``; every message of a run echoes its ``run`` id, so the
host can tell them from lines the code writes to the channel itself. Messages are UTF-8 JSON
lines whose values nest at most MAX_DEPTH levels (deeper parts of a result are replaced and
reported, as values JSON cannot hold are). Config (optional): ``{"limits": {"memory_mb",
"processes", "file_size_mb", "cpu_seconds", "open_files"}, "max_result_bytes"}``.

Tool calls: while a run goes on, its code may call ``tui_agent_bridge.call(tool, arguments)``.
The kernel sends ``{"type": "call", "run", "id", "tool", "arguments"}`` (after the lines printed
so far), the host answers with one line, ``{"op": "answer", "id", "output"}`` or ``{"op":
"answer", "id", "failure"}``, and the call returns the output or raises
``tui_agent_bridge.ToolCallFailed`` with the failure. Calls are made one at a time; the code
gets no network for them, only this channel.

Globals persist between runs. A run's value is what its ``main`` (or the named entrypoint)
returns when the code defines it and does not call it itself (called with ``args``, awaited if
a coroutine), else the variable ``result`` when the code uses it, else the value of a final
expression. Top-level ``await`` works. A type hint naming one of ``typing``'s names the code
never imports or defines (``List`` with no ``from typing import List``) gets it from ``typing``
rather than failing. Processes a run leaves behind are stopped when it ends.
"""

import ast
import builtins
import codecs
import collections.abc
import contextlib
import ctypes
import faulthandler
import io
import json
import linecache
import os
import select
import signal
import sys
import threading
import time
import traceback
import types

LOG_LIMIT = 1 << 20
FLUSH_INTERVAL = 0.2
SYNC_TIMEOUT = 2.0
MAX_RESULT_BYTES = 32 << 20
MAX_REPORTED = 20
MAX_DEPTH = 100
MAX_INT_DIGITS = 4300
_INT_LIMIT = 10**MAX_INT_DIGITS
_NESTING = (list, tuple, dict)
LAST_VALUE = "__tui_agent_last__"
CODE_PREFIX = "<code-"
CO_COROUTINE = 0x80
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


class CPULimitExceeded(Exception):
    """Raised in the user's code when a run uses up its CPU-time budget."""


class ToolCallFailed(RuntimeError):
    """A tool call the host could not complete (the tool's server is gone, the call timed
    out); a tool that reports an error returns it as text instead."""


class Channel:
    """The protocol descriptors, moved away from 0 and 1 before any user code runs."""

    def __init__(self):
        self._in = os.fdopen(os.dup(0), "rb")
        self._out = os.dup(1)
        self.lock = threading.Lock()

    def requests(self):
        for line in self._in:
            if line.strip():
                yield line

    def read_line(self):
        """The next line from the host (b"" once it closed the channel)."""
        return self._in.readline()

    def send(self, data):
        """Write one encoded message (the caller holds `lock` when runs may overlap)."""
        view = memoryview(data)
        while view:
            view = view[os.write(self._out, view) :]


class Logs:
    """The lines printed since the last delivery, in order, capped at LOG_LIMIT bytes a run."""

    def __init__(self):
        self.lock = threading.RLock()
        self._lines = []
        self._partial = {}
        self._size = 0
        self.dropped = 0

    @property
    def full(self):
        return self._size >= LOG_LIMIT

    def begin_run(self):
        with self.lock:
            self._size = 0
            self.dropped = 0

    def write(self, source, stream, text):
        """Add `text` written by `source`; a line is logged once its newline arrives."""
        with self.lock:
            if self._size >= LOG_LIMIT:
                self.dropped += len(text)
                return
            partial = self._partial.setdefault(source, [stream, [], 0])
            *complete, tail = text.split("\n")
            if complete:
                partial[1].append(complete[0])
                self._close(partial)
                for line in complete[1:]:
                    self._add(stream, line)
            if tail:
                partial[1].append(tail)
                partial[2] += len(tail)
                if partial[2] > LOG_LIMIT - self._size:
                    self._close(partial)

    def end_run(self):
        """Log the lines left without a newline."""
        with self.lock:
            for partial in self._partial.values():
                if partial[1]:
                    self._close(partial)

    def _close(self, partial):
        self._add(partial[0], "".join(partial[1]))
        partial[1] = []
        partial[2] = 0

    def take(self):
        with self.lock:
            lines, self._lines = self._lines, []
            return lines

    def _add(self, stream, text):
        cost = (len(text) if text.isascii() else len(text.encode("utf-8", "replace"))) + 1
        room = LOG_LIMIT - self._size
        if cost <= room:
            self._lines.append((stream, text))
            self._size += cost
            return
        if room > 1:
            self._lines.append((stream, text[: room - 1]))
        self.dropped += cost - max(room, 0)
        self._size = LOG_LIMIT


class Capture(io.TextIOBase):
    """sys.stdout / sys.stderr: Python-level writes go straight to the logs, in order."""

    def __init__(self, logs, pipes, stream, fd):
        self._logs = logs
        self._pipes = pipes
        self._stream = stream
        self._fd = fd
        self._source = "py-" + stream
        self.buffer = _BinaryCapture(self)

    @property
    def encoding(self):
        return "utf-8"

    @property
    def errors(self):
        return "replace"

    def writable(self):
        return True

    def isatty(self):
        return False

    def fileno(self):
        return self._fd

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if not self._logs.full:
            self._pipes.drain()
        self._logs.write(self._source, self._stream, text)
        return len(text)


class _BinaryCapture(io.RawIOBase):
    """sys.stdout.buffer: bytes decoded as UTF-8 into the same capture."""

    def __init__(self, text):
        self._text = text
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def writable(self):
        return True

    def fileno(self):
        return self._text.fileno()

    def write(self, data):
        self._text.write(self._decoder.decode(bytes(data)))
        return len(data)


class Pipes:
    """fds 1 and 2 as pipes drained by a thread: subprocess and C-level output becomes logs."""

    def __init__(self, logs, tick):
        self._logs = logs
        self._tick = tick
        self._streams = {}
        self._inodes = {}
        for fd, stream in ((1, "stdout"), (2, "stderr")):
            read_end, write_end = os.pipe()
            os.dup2(write_end, fd)
            os.close(write_end)
            os.set_blocking(read_end, False)
            decoder = codecs.getincrementaldecoder("utf-8")("replace")
            self._streams[read_end] = [stream, decoder, b"", "fd-" + stream]
            self._inodes[fd] = os.fstat(fd).st_ino
        self._token = b""
        self._seen = set()
        threading.Thread(target=self._pump, name="tui-agent-pipes", daemon=True).start()

    def drain(self):
        """Log whatever the pipes hold now (keeps Python and fd output in order)."""
        ready = select.select(list(self._streams), [], [], 0)[0]
        if ready:
            self._read(ready)

    def sync(self):
        """Wait until everything written to fds 1 and 2 before this call is logged."""
        with self._logs.lock:
            self._token = b"\0tui-agent-sync-" + os.urandom(8).hex().encode() + b"\0"
            self._seen = set()
            token = self._token
        expected = 0
        for fd in (1, 2):
            try:
                if os.fstat(fd).st_ino == self._inodes[fd]:
                    os.write(fd, token)
                    expected += 1
            except OSError:
                pass
        deadline = time.monotonic() + SYNC_TIMEOUT
        while len(self._seen) < expected and time.monotonic() < deadline:
            select.select(list(self._streams), [], [], 0.01)
            self._read(list(self._streams))
        self._token = b""

    def _pump(self):
        while True:
            ready = select.select(list(self._streams), [], [], FLUSH_INTERVAL)[0]
            if ready:
                self._read(ready)
            self._tick()

    def _read(self, fds):
        with self._logs.lock:
            for fd in fds:
                while True:
                    try:
                        data = os.read(fd, 1 << 16)
                    except (BlockingIOError, InterruptedError):
                        break
                    if not data:
                        break
                    self._consume(fd, data)

    def _consume(self, fd, data):
        entry = self._streams[fd]
        stream, decoder, held, source = entry
        data = held + data
        token = self._token
        if token and token in data:
            before, data = data.split(token, 1)
            self._logs.write(source, stream, decoder.decode(before))
            self._seen.add(fd)
        keep = _prefix_overlap(data, token) if token else 0
        entry[2] = data[len(data) - keep :] if keep else b""
        if keep:
            data = data[: len(data) - keep]
        if data:
            self._logs.write(source, stream, decoder.decode(data))


def _prefix_overlap(data, token):
    """How many bytes at the end of `data` could start `token`."""
    for size in range(min(len(token) - 1, len(data)), 0, -1):
        if data.endswith(token[:size]):
            return size
    return 0


class Bridge:
    """Tool calls from the running code to the host, over the protocol channel."""

    def __init__(self, channel, logs, pipes):
        self.channel = channel
        self.logs = logs
        self.pipes = pipes
        self.lock = threading.Lock()
        self.open = False
        self.run = None
        self.pid = os.getpid()
        self._calls = 0

    def call(self, tool, arguments=None):
        """Call `tool` with the JSON object `arguments` on the host; its output as text."""
        if not isinstance(tool, str) or not isinstance(arguments or {}, dict):
            raise TypeError("call(tool, arguments): a tool name and a dict of arguments")
        if _unwritable(arguments):
            raise TypeError(
                f"the arguments of {tool} must nest at most {MAX_DEPTH} levels and hold no "
                f"integer of more than {MAX_INT_DIGITS} digits"
            )
        with self.lock:
            if not self.open or os.getpid() != self.pid:
                raise ToolCallFailed("tools can be called only from a running program's process")
            self._calls += 1
            message = {"type": "call", "run": self.run, "id": self._calls, "tool": tool}
            message["arguments"] = arguments or {}
            try:
                data = _line(message)
            except (TypeError, ValueError) as exc:
                raise TypeError(f"the arguments of {tool} must be JSON values: {exc}") from None
            self.pipes.drain()
            with self.channel.lock:
                lines = self.logs.take()
                if lines:
                    printed = {"type": "logs", "run": self.run, "lines": lines}
                    printed["dropped"] = self.logs.dropped
                    self.channel.send(_line(printed))
                self.channel.send(data)
            line = self.channel.read_line()
        if not line:
            raise ToolCallFailed(f"{tool}: the host closed the channel")
        answer = json.loads(line)
        if answer.get("op") != "answer" or answer.get("id") != message["id"]:
            raise ToolCallFailed(f"{tool}: the host answered something else: {line[:80]!r}")
        if answer.get("failure") is not None:
            raise ToolCallFailed(str(answer["failure"]))
        return str(answer.get("output") or "")

    def close(self):
        """No more calls: wait for one in flight, then refuse the rest (the run is over)."""
        with self.lock:
            self.open = False


def _bridge_module(bridge):
    module = types.ModuleType("tui_agent_bridge", Bridge.__doc__)
    module.call = bridge.call
    module.ToolCallFailed = ToolCallFailed
    return module


class Kernel:
    """Runs requests in one persistent namespace and builds their result messages."""

    def __init__(self, channel, logs, pipes, config, bridge):
        self.channel = channel
        self.logs = logs
        self.pipes = pipes
        self.bridge = bridge
        self.limits = config.get("limits") or {}
        self.max_result_bytes = config.get("max_result_bytes") or MAX_RESULT_BYTES
        self.pid = os.getpid()
        self.namespace = {"__name__": "__main__", "__builtins__": builtins}
        self.loop = None
        self.runs = 0
        self.run = None
        self.running = False
        self._last_tick = 0.0

    def execute(self, request):
        self.runs += 1
        filename = f"{CODE_PREFIX}{self.runs}>"
        self.run = self.bridge.run = request.get("run")
        self.logs.begin_run()
        self._arm_cpu_limit()
        value, error = None, None
        self.running = self.bridge.open = True
        try:
            value = self._run(request, filename)
        except BaseException as exc:
            try:
                error = _error_info(exc, filename, self.limits)
            except MemoryError:
                error = {"type": _type_name(exc), "message": "out of memory", "traceback": ""}
            del exc
        finally:
            if os.getpid() != self.pid:
                _leave_forked_child()
            self.bridge.close()
            self.running = False
        stopped = stop_children()
        if stopped:
            note = f"[tui-agent: stopped {stopped} processes the run left running]\n"
            self.logs.write("kernel", "stderr", note)
        self.pipes.sync()
        self.logs.end_run()
        context = self.namespace.get("context")
        if request.get("context") is None and not context:
            context = None
        message = {
            "type": "result",
            "run": self.run,
            "success": error is None,
            "result": value,
            "context": context,
            "error": error,
            "non_serializable": [],
        }
        with self.channel.lock:
            message["lines"] = self.logs.take()
            message["dropped"] = self.logs.dropped
            self.channel.send(self._encode(message))

    def tick(self):
        """Send the lines printed so far while a run is going (so a killed run keeps them)."""
        now = time.monotonic()
        if not self.running or now - self._last_tick < FLUSH_INTERVAL:
            return
        self._last_tick = now
        with self.channel.lock:
            if not self.running:  # its result has gone out: these lines are the next run's
                return
            lines = self.logs.take()
            if lines:
                message = {"type": "logs", "run": self.run, "lines": lines}
                message["dropped"] = self.logs.dropped
                self.channel.send(_line(message))

    def _run(self, request, filename):
        code = request.get("code", "")
        entrypoint = request.get("entrypoint") or "main"
        tree = ast.parse(code, filename)
        bound, loaded = _top_level_names(tree)
        self._lend_typing_names(tree)
        uses_result = "result" in bound | loaded or any(
            isinstance(node, ast.Global) and "result" in node.names for node in ast.walk(tree)
        )
        has_last = bool(tree.body) and isinstance(tree.body[-1], ast.Expr)
        if has_last:
            last = tree.body[-1]
            target = ast.Name(id=LAST_VALUE, ctx=ast.Store())
            tree.body[-1] = ast.copy_location(ast.Assign(targets=[target], value=last.value), last)
            ast.fix_missing_locations(tree)
        compiled = compile(
            tree, filename, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True
        )
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        namespace = self.namespace
        if request.get("context") is not None or "context" not in namespace:
            namespace["context"] = dict(request.get("context") or {})
        namespace["url"] = request.get("url")
        namespace["html"] = request.get("html")
        namespace.pop(LAST_VALUE, None)
        outcome = eval(compiled, namespace)
        if compiled.co_flags & CO_COROUTINE:
            self._wait(outcome)
        last_value = namespace.pop(LAST_VALUE, None)
        function = namespace.get(entrypoint)
        if entrypoint in bound and entrypoint not in loaded and callable(function):
            value = function(*(request.get("args") or []))
            return self._wait(value) if isinstance(value, collections.abc.Awaitable) else value
        if uses_result and "result" in namespace:
            return namespace["result"]
        return last_value

    def _lend_typing_names(self, tree):
        """Bind the `typing` names the code's annotations use and nothing defines (small
        models hint with List or Optional and forget the import; the hint is no reason to
        fail)."""
        used = set()
        for node in ast.walk(tree):
            hints = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                arguments = node.args
                every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
                every += [arg for arg in (arguments.vararg, arguments.kwarg) if arg]
                hints = [arg.annotation for arg in every if arg.annotation] + [node.returns]
            elif isinstance(node, ast.AnnAssign):
                hints = [node.annotation]
            for hint in hints:
                if hint is not None:
                    used.update(n.id for n in ast.walk(hint) if isinstance(n, ast.Name))
        if not used:
            return
        defined = _all_bound_names(tree)
        missing = [
            name
            for name in used
            if name not in self.namespace and name not in defined and not hasattr(builtins, name)
        ]
        if missing:
            import typing

            for name in missing:
                if name in typing.__all__:
                    self.namespace[name] = getattr(typing, name)

    def _wait(self, awaitable):
        """Run `awaitable` to its end on the kernel's event loop (kept between runs)."""
        import asyncio

        if self.loop is None or self.loop.is_closed():
            self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)
        return self.loop.run_until_complete(awaitable)

    def _arm_cpu_limit(self):
        seconds = self.limits.get("cpu_seconds")
        if not seconds:
            return
        import resource

        usage = resource.getrusage(resource.RUSAGE_SELF)
        soft = int(usage.ru_utime + usage.ru_stime) + 1 + int(seconds)
        hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))

    def on_cpu_limit(self, signum, frame):
        if self.running and os.getpid() == self.pid:
            seconds = self.limits.get("cpu_seconds")
            raise CPULimitExceeded(f"the run used more than {seconds} s of CPU time")

    def _encode(self, message):
        """The message as a JSON line; what JSON cannot hold, and what nests deeper than
        MAX_DEPTH, is replaced and reported."""
        try:
            if _unwritable(message["result"]) or _unwritable(message["context"]):
                raise ValueError("nested too deep, or an integer too large")
            data = _line(message)
        except (TypeError, ValueError, RecursionError):
            problems = []
            message["result"] = _clean(message["result"], "result", problems, 0, set())
            message["context"] = _clean(message["context"], "context", problems, 0, set())
            if len(problems) > MAX_REPORTED:
                more = len(problems) - MAX_REPORTED
                problems[MAX_REPORTED:] = [f"... and {more} more"]
            message["non_serializable"] = problems
            data = _line(message)
        if len(data) > self.max_result_bytes:
            message.update(result=None, context=None, success=False, non_serializable=[])
            message["error"] = {
                "type": "ResultTooLarge",
                "message": (
                    f"the result is {len(data) / 2**20:.1f} MiB as JSON, over the "
                    f"{self.max_result_bytes / 2**20:.0f} MiB limit; return less, or write it "
                    "to a file in the workspace"
                ),
                "traceback": "",
            }
            data = _line(message)
        return data


def _line(message):
    """`message` as one protocol line: UTF-8 JSON (text that is not valid Unicode, such as a
    lone surrogate from a file name, gets "?" in its place)."""
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    return (text + "\n").encode("utf-8", "replace")


def _unwritable(value):
    """Whether `value` holds what the host refuses to read: lists and dicts nested more than
    MAX_DEPTH levels (a loop always is), or an integer of more than MAX_INT_DIGITS digits
    (whatever limit the code set for this process)."""
    if not isinstance(value, _NESTING):
        return _too_big(value)
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        for child in item.values() if isinstance(item, dict) else item:
            if isinstance(child, _NESTING):
                stack.append((child, depth + 1))
            elif isinstance(child, int) and not -_INT_LIMIT < child < _INT_LIMIT:
                return True
    return False


def _too_big(number):
    return isinstance(number, int) and not -_INT_LIMIT < number < _INT_LIMIT


def _top_level_names(tree):
    """Names the module-level code binds and reads (function and class bodies excluded)."""
    bound, loaded = set(), set()
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
            stack.extend(node.decorator_list)
            continue
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        stack.extend(ast.iter_child_nodes(node))
    return bound, loaded


def _all_bound_names(tree):
    """Every name the code binds anywhere: assigned, imported, defined, or a parameter."""
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
    return bound


def _clean(value, path, problems, depth, active):
    """`value` with what JSON cannot hold replaced by a placeholder, each one reported."""
    if _too_big(value):
        problems.append(f"{path}: an integer of more than {MAX_INT_DIGITS} digits")
        return "<integer too large>"
    if value is None or isinstance(value, (str, int, float)):
        return value
    if depth > MAX_DEPTH:
        problems.append(f"{path}: nested deeper than {MAX_DEPTH} levels")
        return "<too deep>"
    if isinstance(value, (list, tuple, dict)):
        if id(value) in active:
            problems.append(f"{path}: circular reference")
            return "<circular reference>"
        active.add(id(value))
        try:
            if isinstance(value, dict):
                cleaned = {}
                for key, item in value.items():
                    if not (key is None or isinstance(key, (str, int, float))) or _too_big(key):
                        problems.append(f"{path}: key {_short_repr(key)} of type {_type_name(key)}")
                        key = _short_repr(key)
                    cleaned[key] = _clean(item, f"{path}[{key!r}]", problems, depth + 1, active)
                return cleaned
            return [
                _clean(item, f"{path}[{index}]", problems, depth + 1, active)
                for index, item in enumerate(value)
            ]
        finally:
            active.discard(id(value))
    problems.append(f"{path}: {_type_name(value)}")
    return f"<not serializable: {_type_name(value)}: {_short_repr(value)}>"


def _type_name(value):
    kind = type(value)
    if kind.__module__ in ("builtins", "__main__"):
        return kind.__qualname__
    return f"{kind.__module__}.{kind.__qualname__}"


def _short_repr(value):
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__} object>"
    return text if len(text) <= 120 else text[:117] + "..."


def _error_info(exc, filename, limits):
    """type, message and a traceback trimmed to the user's code."""
    message = str(exc)
    if isinstance(exc, MemoryError) and not message and limits.get("memory_mb"):
        message = f"out of memory (limit {limits['memory_mb']} MiB per process)"
    if isinstance(exc, SyntaxError) and (exc.filename or "").startswith(CODE_PREFIX):
        message = f"{exc.msg} (line {exc.lineno})"
        trace = "".join(traceback.format_exception_only(type(exc), exc))
        shown = _display(exc.filename, filename)
        trace = trace.replace(f'File "{exc.filename}"', f'File "{shown}"')
        return {"type": _type_name(exc), "message": message, "traceback": trace}
    frames = traceback.extract_tb(exc.__traceback__)
    first = next((i for i, f in enumerate(frames) if f.filename.startswith(CODE_PREFIX)), None)
    lines = []
    if first is not None:
        kept = [_renamed(f, filename) for f in frames[first:] if f.filename != __file__]
        lines = ["Traceback (most recent call last):\n"]
        lines.extend(traceback.StackSummary.from_list(kept).format())
    lines.extend(traceback.format_exception_only(type(exc), exc))
    return {"type": _type_name(exc), "message": message, "traceback": "".join(lines)}


def _renamed(frame, current):
    """`frame` with the user's code file shown by its display name (source line kept)."""
    line = linecache.getline(frame.filename, frame.lineno) if frame.lineno else ""
    return traceback.FrameSummary(
        _display(frame.filename, current),
        frame.lineno,
        frame.name,
        lookup_line=False,
        line=line,
        end_lineno=frame.end_lineno,
        colno=frame.colno,
        end_colno=frame.end_colno,
    )


def _display(frame_file, current):
    """How a code file is named in tracebacks: <code> for this run's code."""
    if frame_file == current:
        return "<code>"
    if frame_file.startswith(CODE_PREFIX):
        return f"<code of run {frame_file[len(CODE_PREFIX) : -1]}>"
    return frame_file


def stop_children():
    """Kill every process this kernel still has below it; returns how many there were."""
    stopped = set()
    for _ in range(1000):
        pids = _children()
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for pid in pids:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        stopped.update(pids)
    return len(stopped)


def _children():
    pids = []
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return pids
    for tid in tasks:
        try:
            with open(f"/proc/self/task/{tid}/children") as handle:
                pids.extend(int(pid) for pid in handle.read().split())
        except OSError:
            pass
    return pids


def _leave_forked_child():
    """A process the user's code forked has finished the code: it must not act as the kernel."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(0)


def _child_streams():
    """After a fork, the child prints to fds 1 and 2 (the parent's pipes) instead of memory."""
    sys.stdout = io.TextIOWrapper(
        io.FileIO(1, "w", closefd=False), encoding="utf-8", errors="replace", line_buffering=True
    )
    sys.stderr = io.TextIOWrapper(
        io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="replace", line_buffering=True
    )


def apply_limits(limits):
    """Set this process's rlimits (inherited by everything the user's code starts)."""
    import resource

    def cap(kind, value):
        hard = resource.getrlimit(kind)[1]
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(kind, (value, value))

    cap(resource.RLIMIT_CORE, 0)
    if limits.get("memory_mb"):
        cap(resource.RLIMIT_AS, limits["memory_mb"] << 20)
    if limits.get("file_size_mb"):
        cap(resource.RLIMIT_FSIZE, limits["file_size_mb"] << 20)
    if limits.get("open_files"):
        cap(resource.RLIMIT_NOFILE, limits["open_files"])
    if limits.get("processes"):
        # The limit counts every thread of the uid; root is exempt, so needs no count.
        uid = os.getuid()
        running = _threads_of_uid(uid) if uid else 0
        cap(resource.RLIMIT_NPROC, running + limits["processes"])


def _threads_of_uid(uid):
    """Threads running under `uid` now (RLIMIT_NPROC counts them all)."""
    count = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as handle:
                fields = dict(line.split(":", 1) for line in handle if ":" in line)
        except OSError:
            continue
        if int(fields.get("Uid", "-1").split()[0]) == uid:
            count += int(fields.get("Threads", "1"))
    return count


def _prctl(option, value):
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(option, value, 0, 0, 0)


def main():
    config = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    limits = config.get("limits") or {}
    apply_limits(limits)
    channel = Channel()
    diagnostics = os.fdopen(os.dup(2), "w")
    faulthandler.enable(diagnostics)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    logs = Logs()
    kernel = None
    pipes = Pipes(logs, lambda: kernel and kernel.tick())
    bridge = Bridge(channel, logs, pipes)
    sys.modules["tui_agent_bridge"] = _bridge_module(bridge)
    kernel = Kernel(channel, logs, pipes, config, bridge)
    if limits.get("cpu_seconds"):
        signal.signal(signal.SIGXCPU, kernel.on_cpu_limit)
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
    sys.stdout = Capture(logs, pipes, "stdout", 1)
    sys.stderr = Capture(logs, pipes, "stderr", 2)
    os.register_at_fork(after_in_child=_child_streams)
    sys.path[0] = os.getcwd()
    ready = {"type": "ready", "pid": os.getpid(), "python": sys.version.split()[0]}
    channel.send(_line(ready))
    for line in channel.requests():
        try:
            request = json.loads(line)
            op = request.get("op")
        except (ValueError, RecursionError, AttributeError):
            request, op = {}, None
        if op == "answer":  # to a call the run's code made up on the channel: nobody waits
            continue
        if op != "execute":
            failure = {"type": "result", "run": request.get("run"), "success": False}
            message = f"not a request the kernel knows: {line[:80]!r}"
            failure["error"] = {"type": "ProtocolError", "message": message, "traceback": ""}
            with channel.lock:
                channel.send(_line({**failure, "lines": [], "dropped": 0}))
            continue
        if not isinstance(sys.stdout, Capture) or sys.stdout.closed:
            sys.stdout = Capture(logs, pipes, "stdout", 1)
        if not isinstance(sys.stderr, Capture) or sys.stderr.closed:
            sys.stderr = Capture(logs, pipes, "stderr", 2)
        kernel.execute(request)


if __name__ == "__main__":
    main()
