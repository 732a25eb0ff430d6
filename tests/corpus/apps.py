"""Start a corpus app: its server script in a subprocess, on loopback, stopped when done."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).parent
APPS = ("datasette", "django", "pelican", "trac")
START_TIMEOUT = 60.0


class AppError(RuntimeError):
    """An app that did not start."""


@dataclass(frozen=True)
class App:
    """A running app: its base URL and the folder its server keeps its data in."""

    name: str
    url: str
    folder: Path
    pid: int


@contextmanager
def running(app: str) -> Iterator[App]:
    """`app` serving fresh data on `http://127.0.0.1:PORT`, for the block."""
    with tempfile.TemporaryDirectory(prefix=f"corpus-{app}-") as folder:
        log = Path(folder) / "stderr.log"
        with log.open("w") as errors:
            process = subprocess.Popen(
                [sys.executable, str(HERE / f"serve_{app}.py"), folder],
                stdin=subprocess.PIPE,  # its end stops the server (see serving.announce)
                stdout=subprocess.PIPE,
                stderr=errors,
                text=True,
                cwd=folder,
                env={**os.environ, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"},
            )
            try:
                url = f"http://127.0.0.1:{_port(process, log)}"
                yield App(app, url, Path(folder), process.pid)
            finally:
                _stop(process)


def _port(process: subprocess.Popen[str], log: Path) -> int:
    """The port the server announces (a JSON line on stdout, printed before it serves); a
    server silent for START_TIMEOUT seconds is killed."""
    assert process.stdout is not None
    watchdog = threading.Timer(START_TIMEOUT, process.kill)
    watchdog.start()
    try:
        for line in process.stdout:
            if line.startswith('{"port"'):
                return int(json.loads(line)["port"])
    finally:
        watchdog.cancel()
    process.wait(timeout=10)
    script = Path(str(process.args[1])).name  # type: ignore[index]
    raise AppError(f"{script} exited before serving: {log.read_text()[-2000:]}")


def _stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            stream.close()


@contextmanager
def all_running(apps: tuple[str, ...] = APPS) -> Iterator[dict[str, App]]:
    """Each of `apps` running, by name."""
    with ExitStack() as stack:
        yield {app: stack.enter_context(running(app)) for app in apps}
