"""What the batch tests share: the `tui-agent` command run as a user runs it (`python -m
tui_agent`, a clean environment, no config file, its own --db), a Dask cluster on loopback, and
the driver's database read back through the Store."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import IO, Any

from tui_agent.batch.plan import child_id
from tui_agent.demo_site import DemoSite
from tui_agent.events import BatchItem, Event, SessionStarted
from tui_agent.session import SessionState, SessionSummary, fold
from tui_agent.store import Store

RECIPE = Path(__file__).resolve().parents[2] / "recipes" / "demo-pagination.json"
MAX_ITEMS = 2
"""Products each item extracts (its page's first ones): a short session, all of it real."""
DROPPED = ("TUI_AGENT_MODEL", "TUI_AGENT_API_BASE", "TUI_AGENT_SANDBOX", "TUI_AGENT_DB")
"""The developer's settings a test's command must not pick up."""


@dataclass(frozen=True)
class Cluster:
    """A running Dask cluster: its scheduler's address and a client of the test's own."""

    address: str
    client: Any

    @property
    def engine(self) -> str:
        return self.address

    def worker_pids(self) -> dict[str, int]:
        """Each worker's address and process id."""
        return dict(self.client.run(os.getpid))


AS_IN_A_TERMINAL = (
    "import runpy, signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "runpy.run_module('tui_agent', run_name='__main__', alter_sys=True)"
)
"""`python -m tui_agent` with SIGINT handled as a terminal's foreground job has it. A test run
started in the background (`make test &`, a CI runner) hands its processes SIGINT ignored, which
Python keeps: a Ctrl+C test's signal was then lost (the batch ran on, exit 1)."""


@contextlib.contextmanager
def start_cluster(temp: Path, workers: int = 2) -> Iterator[Cluster]:
    """A LocalCluster of `workers` processes (one thread each, a nanny each) on loopback, their
    temporary files (an item's store, Chromium's profile) in `temp`: what a killed worker
    leaves there is the tests' to clear."""
    import dask
    from distributed import Client, LocalCluster

    from tui_agent.batch.engines import LOST_WORKER_TIMEOUT

    # As the engine's own LocalCluster: a nanny restarting a crashed worker is never closed.
    with dask.config.set({"distributed.deploy.lost-worker-timeout": LOST_WORKER_TIMEOUT}):
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            # With no dashboard the scheduler still serves /health: on a free loopback port,
            # not on 8787 (another cluster's there: a warning and a socket left open).
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
            env={"TMPDIR": str(temp)},
        )
        try:
            with Client(cluster.scheduler_address) as client:
                client.wait_for_workers(workers, timeout=60)
                yield Cluster(cluster.scheduler_address, client)
        finally:
            cluster.close()


@dataclass(frozen=True)
class Cli:
    """`tui-agent` run as a user runs it, in its own folder with its own database."""

    folder: Path

    @property
    def db(self) -> Path:
        return self.folder / "s.db"

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "tui_agent", "--db", str(self.db), *args]

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in DROPPED}
        env["TUI_AGENT_CONFIG_FILE"] = str(self.folder / "none.toml")
        return env

    def run(self, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.argv(*args),
            capture_output=True,
            text=True,
            timeout=timeout,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            cwd=self.folder,
        )

    def start(self, *args: str, timeout: float = 240, group: bool = False) -> Running:
        """The command started, its stdout read line by line (its stderr to a file); killed
        if it runs longer than `timeout` seconds (a hang fails the test, never stalls it).
        Ctrl+C (SIGINT) reaches it as in a terminal, even when the tests run in the background
        (see AS_IN_A_TERMINAL). `group`: it leads a process group of its own, with the
        processes it starts, as a terminal's foreground job does (`Running.interrupt_group`)."""
        errors = (self.folder / "stderr.txt").open("w")
        process = subprocess.Popen(
            [sys.executable, "-c", AS_IN_A_TERMINAL, *self.argv(*args)[3:]],
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            cwd=self.folder,
            start_new_session=group,
        )
        kill = partial(os.killpg, process.pid, signal.SIGKILL) if group else process.kill
        watchdog = threading.Timer(timeout, kill)
        watchdog.daemon = True
        watchdog.start()
        return Running(process, errors, self.folder / "stderr.txt", watchdog, group)


@dataclass
class Running:
    """A started command printing the batch's events as JSON lines (`--json`)."""

    process: subprocess.Popen[str]
    errors: IO[str]
    errors_path: Path
    watchdog: threading.Timer
    group: bool = False

    def interrupt_group(self) -> None:
        """Ctrl+C as a terminal sends it: to every process of the command's group."""
        assert self.group
        os.killpg(self.process.pid, signal.SIGINT)

    def events(self) -> Iterator[dict[str, Any]]:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            yield json.loads(line)

    def batch_id(self) -> str:
        """The batch's id, from its first event (printed before any item starts)."""
        first = next(self.events())
        assert (first["type"], first["kind"]) == ("session_started", "batch"), first
        return str(first["session_id"])

    def finish(self) -> tuple[int, str]:
        """Its exit code and its stderr, once it exited (-9: the watchdog killed it)."""
        code = self.process.wait()
        self.watchdog.cancel()
        assert self.process.stdout is not None
        self.process.stdout.close()
        self.errors.close()
        return code, self.errors_path.read_text()

    def __enter__(self) -> Running:
        return self

    def __exit__(self, *exc: object) -> None:
        """Killed if a failed test left it running (its whole group, when it has one)."""
        if self.group:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
        elif self.process.poll() is None:
            self.process.kill()
        self.finish()


def write_urls(
    folder: Path, demo: DemoSite, count: int, held: HeldPage | None = None
) -> tuple[Path, list[str]]:
    """A file of `count` demo URLs: the catalog's pages 1 to `count` (the page `held` holds
    reached through it)."""
    urls = [demo.url("pagination", page=page) for page in range(1, count + 1)]
    if held is not None:
        urls[held.page - 1] = held.url
    path = folder / "urls.txt"
    path.write_text("".join(f"{url}\n" for url in urls))
    return path, urls


DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))
"""Requests to loopback, never through a proxy the environment names."""


class HeldPage:
    """A loopback HTTP server in front of the demo site that holds the first request for the
    catalog's page `page` until `release` is set, having set `arrived`: an item loading that
    page is then known to be mid-run (its Chromium waiting for the page) for as long as the
    test needs. Every other request, and that page's later ones, pass straight through."""

    def __init__(self, demo: DemoSite, page: int) -> None:
        self.demo = demo
        self.page = page
        self.arrived = threading.Event()
        self.release = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/pagination?page={self.page}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        held = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path == f"/pagination?page={held.page}" and not held.arrived.is_set():
                    held.arrived.set()
                    held.release.wait(timeout=120)
                with contextlib.suppress(OSError):  # the Chromium asking may be gone
                    try:
                        reply = DIRECT.open(held.demo.base_url + self.path)
                    except urllib.error.HTTPError as error:
                        reply = error
                    with reply:
                        body = reply.read()
                        self.send_response(reply.status)
                        self.send_header("Content-Type", reply.headers["Content-Type"])
                        self.send_header("Content-Length", str(len(body)))
                        self.end_headers()
                        self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                return None

        return Handler

    def __enter__(self) -> HeldPage:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


def recipe_batch(urls: Path, engine: str, *more: str) -> list[str]:
    """The arguments of a recipe batch over `urls` on `engine`, as JSON lines."""
    return [
        "batch",
        "recipe",
        str(RECIPE),
        "--urls",
        str(urls),
        "--max-items",
        str(MAX_ITEMS),
        "--no-browser-sandbox",
        "--engine",
        engine,
        "--json",
        *more,
    ]


@dataclass
class Stored:
    """What the driver's database holds of a batch: its session and its children."""

    batch: SessionState
    events: list[Event]
    sessions: list[SessionSummary]
    children: dict[str, SessionSummary]
    child_events: dict[str, list[Event]]
    items: dict[str, list[Any]]

    def items_of(self, index: int) -> list[BatchItem]:
        """The batch's events about item `index`, in order."""
        return [e for e in self.events if isinstance(e, BatchItem) and e.item == index]

    def states(self, state: str) -> list[int]:
        """The items that reached `state` (once each time they did), in order."""
        return [e.item for e in self.events if isinstance(e, BatchItem) and e.state == state]


def read_store(db: Path, batch_id: str | None = None) -> Stored:
    """The batch `batch_id` (the one batch in `db` when None) as the driver stored it."""

    async def read() -> Stored:
        async with await Store.open(db) as store:
            sessions = await store.list_sessions()
            if batch_id is None:
                [found] = [s.session_id for s in sessions if s.kind == "batch"]
            else:
                found = batch_id
            events = await store.events(found)
            children = {s.session_id: s for s in sessions if s.batch == found}
            child_events = {child: await store.events(child) for child in children}
            items = {child: await store.items(child) for child in children}
        return Stored(fold(events), events, sessions, children, child_events, items)

    return asyncio.run(read())


def session_ids(db: Path) -> list[str]:
    """The sessions `db` holds (none when there is no such file)."""

    async def read() -> list[str]:
        async with await Store.open(db) as store:
            return [s.session_id for s in await store.list_sessions()]

    return asyncio.run(read()) if db.exists() else []


def assert_children(stored: Stored, demo: DemoSite, urls: list[str]) -> None:
    """Exactly one child per URL, under its derived id, each stored once and replayable: its
    events one gap-free run from its start to its end, folding into a completed session
    holding its page's first products, the ones the demo shop says are there."""
    batch_id = stored.batch.session_id
    expected = {child_id(batch_id, i): i for i in range(len(urls))}
    assert set(stored.children) == set(expected)
    for child, index in expected.items():
        events = stored.child_events[child]
        assert [e.seq for e in events] == list(range(1, len(events) + 1))
        started = events[0]
        assert isinstance(started, SessionStarted)
        assert sum(isinstance(e, SessionStarted) for e in events) == 1
        assert started.batch is not None
        assert (started.batch.session_id, started.batch.item) == (batch_id, index)
        assert started.test_context["url"] == urls[index]
        state = fold(events)
        assert (state.status, state.stopped_reason) == ("completed", "max_items")
        truth = demo.ground_truth("pagination", page=index + 1)[:MAX_ITEMS]
        titles = [item["title"] for item in stored.items[child]]
        assert titles == [record["title"] for record in truth]
        assert stored.children[child].item_count == MAX_ITEMS
        assert stored.children[child].status == "completed"
    finished = stored.states("finished")
    assert sorted(finished) == sorted(expected.values())  # each item finished exactly once
    kinds = [s.kind for s in stored.sessions]
    assert kinds.count("batch") == 1 and len(kinds) == 1 + len(urls)  # nothing else stored
