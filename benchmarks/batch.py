"""Batches on Dask against plain asyncio at the same concurrency, on the same work, in one run.

Usage: .venv/bin/python benchmarks/batch.py [--items 6] [--runs 2] [--max-items 5]
                                            [--noop 30] [--quick]

The work: recipes/demo-pagination.json on the demo shop's pagination layout, --max-items items
a run, one URL per item (`?page=1..10` in turn). The shop is `tui-agent demo-site` in a process
of its own on 127.0.0.1, so neither engine shares its interpreter with the server. Everything
goes the production way: a plan from a URL file (`recipe_plan`), `BatchRun` with the engine's
own slots, the batch recorded as a session and each item's session sent back into a real
Store in a temporary folder. At each concurrency N (1, 2, 4) the two engines run one after
the other, never both up at once (an idle Dask cluster costs CPU the other would lose), the
order swapped from one N to the next; each is started and warmed by batches of its own first
(that cold cost is printed, not counted):

  asyncio N   LocalEngine(N): N items at once as coroutines in this process, one Chromium
  dask N      DaskEngine(address) on a LocalCluster of N worker processes (1 thread each)
              this script starts on 127.0.0.1, dashboard off: one warm Chromium per worker

Lines printed:

  sessions/s        --items sessions a batch, the median of --runs batches, and dask / asyncio
                    at each N (the aim is >= 0.8x). Also the CPU seconds a session of this
                    process and every process under it (the site, workers, Playwright,
                    Chromium), which other load on the machine changes less than wall time,
                    and of this process alone (the driver; asyncio's items run in it)
  no-op item        ms per item of --noop items, one in flight, refused at once: the URL's
                    port on 127.0.0.1 accepts no connection, so the start-page check fails.
                    Each still goes the whole way (the job shipped, the worker's temporary
                    store opened, the request parsed and checked, the refusal sent back, two
                    batch events recorded); no session is recorded. dask minus asyncio is what
                    Dask adds to an item; a bare Dask round trip (a function that does nothing)
                    is the floor under it
  killed worker     on the dask 2 cluster, one item alone: its normal time (median of --runs),
                    then the same with the worker process running it SIGKILLed halfway
                    through: when the scheduler handed it to another worker, when its result
                    came (against its normal time), where it ran again, whether its session
                    was stored exactly once and whether the dead worker's Chromium outlived it
  returned session  bytes of each recipe session sent back (ItemOutcome.size) and ms to store
                    it with Store.add_recorded in a fresh store; median and p95, and the
                    median's share of an item's own time

At the end, any process this run started that still runs (seen under this one, or carrying a
marker in its environment) is named and killed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
import warnings
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# Set before any worker or Chromium starts, so each inherits it: how the end finds leftovers.
os.environ.setdefault("TUI_AGENT_BENCH_BATCH", uuid.uuid4().hex)
# Dask's own lines (a killed worker restarted, a port taken) would drown the figures; errors stay.
os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "error")

from tui_agent.agents.requests import RecipeRunRequest, parse_request
from tui_agent.batch.engines import DaskEngine, Engine, LocalEngine
from tui_agent.batch.plan import BatchPlan, recipe_plan
from tui_agent.batch.runner import BatchOptions, BatchRun, batch_started
from tui_agent.batch.worker import ItemJob, ItemOutcome
from tui_agent.config import Settings
from tui_agent.recorder import SessionRecorder
from tui_agent.session import SessionState
from tui_agent.store import Store
from tui_agent.store.task_cache import TaskCache

MARK = "TUI_AGENT_BENCH_BATCH"
RECIPE = Path(__file__).resolve().parents[1] / "recipes" / "demo-pagination.json"
PAGES = 10
CONCURRENCY = (1, 2, 4)
TICK = os.sysconf("SC_CLK_TCK")


# --- an engine watched: the outcomes it returns and when ---


@dataclass
class Arrival:
    at: float
    outcome: ItemOutcome


class Watched:
    """An engine as BatchRun sees it (the Engine protocol), noting each outcome it returns."""

    def __init__(self, engine: Engine, label: str) -> None:
        self.engine = engine
        self.label = label
        self.name = engine.name
        self.slots = engine.slots
        self.arrivals: list[Arrival] = []
        self.cold: float = 0.0
        """Seconds to start it (its cluster too) and run its warm-up batches."""

    async def start(self) -> None:
        await self.engine.start()
        self.slots = self.engine.slots

    async def run(self, job: ItemJob) -> ItemOutcome:
        outcome = await self.engine.run(job)
        self.arrivals.append(Arrival(time.perf_counter(), outcome))
        return outcome

    async def close(self) -> None:
        await self.engine.close()


@dataclass
class Bench:
    """What every measurement shares: the store the batches record into (a real one, in a
    temporary folder), the demo shop, the options; and what they gather on the way."""

    store: Store
    cache: TaskCache
    settings: Settings
    site: str
    folder: Path
    args: argparse.Namespace
    outcomes: list[ItemOutcome] = field(default_factory=list)
    """Every recipe session sent back by a timed batch."""
    noop: dict[str, float] = field(default_factory=dict)
    """Seconds per no-op item, by engine kind."""
    killed: list[str] = field(default_factory=list)
    """The killed-worker section's lines."""

    def plan(self, urls: list[str]) -> BatchPlan:
        """A recipe batch over `urls`, made as `tui-agent batch recipe --urls FILE` makes it."""
        listing = self.folder / f"urls-{uuid.uuid4().hex[:8]}.txt"
        listing.write_text("".join(url + "\n" for url in urls))
        fields = {
            "recipe": json.loads(RECIPE.read_text()),
            "recipe_file": str(RECIPE),
            "url": urls[0],
            "max_items": self.args.max_items,
        }
        return recipe_plan(parse_request(RecipeRunRequest, fields), listing)

    def pages(self, count: int) -> BatchPlan:
        """A batch of `count` recipe runs, on pages 1..10 of the pagination layout in turn."""
        return self.plan([f"{self.site}/pagination?page={1 + i % PAGES}" for i in range(count)])

    async def batch(
        self, engine: Watched, plan: BatchPlan, *, want: str = "completed"
    ) -> tuple[float, SessionState]:
        """Run `plan` on `engine` as `tui-agent batch` does; its wall seconds and its state."""
        recorder = SessionRecorder(self.store)
        options = BatchOptions()
        batch = BatchRun(plan, recorder, engine, self.settings, self.cache, options)
        await recorder.emit(batch_started(plan, engine, options))
        todo = await batch.queue_all()
        engine.arrivals.clear()
        began = time.perf_counter()
        state = await batch.run(todo)
        took = time.perf_counter() - began
        under(os.getpid(), processes())  # note the Chromiums the batch started
        items = state.batch.items.values() if state.batch else []
        wrong = [item for item in items if item.status != want]
        if wrong:
            first = wrong[0]
            sys.exit(f"{engine.label}: {len(wrong)} item(s) {first.status}: {first.line}")
        return took, state


# --- processes this run started, and their CPU time ---


@dataclass(frozen=True)
class Proc:
    parent: int
    start: int
    """Clock ticks after boot: with the pid, this process and no later one of the same pid."""
    cpu: int
    """Clock ticks: its own user and system time and that of the children it reaped."""


SEEN: dict[int, int] = {}
"""pid -> start of every process seen under this one (Chromium runs as another user with an
environment of its own, so the marker does not reach it; the tree does)."""


def processes() -> dict[int, Proc]:
    table = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                cpu = sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
                table[int(entry.name)] = Proc(int(fields[1]), int(fields[19]), cpu)
    return table


def under(root: int, table: dict[int, Proc]) -> dict[int, Proc]:
    """`root` and every process below it now; each noted in SEEN."""
    found, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        for pid, proc in table.items():
            if proc.parent == parent and pid not in found:
                found.add(pid)
                frontier.append(pid)
    tree = {pid: table[pid] for pid in found if pid in table}
    SEEN.update({pid: proc.start for pid, proc in tree.items()})
    return tree


def cpu_seconds() -> tuple[float, float]:
    """CPU seconds so far of this process and everything under it, and of this one alone."""
    tree = under(os.getpid(), processes())
    return sum(p.cpu for p in tree.values()) / TICK, tree[os.getpid()].cpu / TICK


def still_running(seen: dict[int, int]) -> list[int]:
    """The processes of `seen` (pid -> start) that are still running."""
    table = processes()
    return sorted(pid for pid, start in seen.items() if pid in table and table[pid].start == start)


def marked() -> list[int]:
    """Processes carrying this run's marker in their environment (this one excepted)."""
    token = f"{MARK}={os.environ[MARK]}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            with contextlib.suppress(OSError):
                if token in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
    return found


def command(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    return "?"


# --- the demo shop and the plans ---


@contextlib.contextmanager
def demo_site() -> Iterator[str]:
    """`tui-agent demo-site` in a process of its own; its base URL."""
    site = subprocess.Popen(
        [sys.executable, "-m", "tui_agent", "demo-site"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert site.stdout is not None
        found = re.search(r"(http://127\.0\.0\.1:\d+)/", site.stdout.readline())
        if found is None:
            sys.exit("the demo site did not say where it serves")
        yield found[1]
    finally:
        site.send_signal(signal.SIGINT)
        try:
            site.wait(timeout=10)
        except subprocess.TimeoutExpired:
            site.kill()
            site.wait()


# --- engines ---


async def warmed(bench: Bench, engine: Watched, workers: int) -> None:
    """Warm-up batches (one item a slot) until `workers` distinct workers have each run one."""
    ran: set[str] = set()
    for _ in range(4):
        await bench.batch(engine, bench.pages(engine.slots))
        ran |= {arrival.outcome.worker for arrival in engine.arrivals}
        if len(ran) >= workers:
            return
    sys.exit(f"{engine.label}: only {len(ran)} of {workers} workers ran an item")


@contextlib.asynccontextmanager
async def asyncio_engine(bench: Bench, n: int) -> AsyncIterator[Watched]:
    """LocalEngine(n) (`--engine local:N`), started and warmed."""
    began = time.perf_counter()
    engine = Watched(LocalEngine(n), f"asyncio {n}")
    try:
        await engine.start()
        await warmed(bench, engine, 1)
        engine.cold = time.perf_counter() - began
        yield engine
    finally:
        await engine.close()


@contextlib.asynccontextmanager
async def dask_engine(bench: Bench, n: int) -> AsyncIterator[tuple[Watched, Any]]:
    """A LocalCluster of n worker processes on loopback, dashboard off, and a DaskEngine reaching
    it by its address (as `--engine tcp://HOST:8786` does), started and warmed; and the cluster.
    Closed before the asyncio engine runs: idle workers and their scheduler cost CPU."""
    from distributed import LocalCluster

    began = time.perf_counter()
    async with await LocalCluster(
        n_workers=n,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        asynchronous=True,
    ) as cluster:
        engine = Watched(DaskEngine(cluster.scheduler_address), f"dask {n}")
        try:
            await engine.start()
            await warmed(bench, engine, n)
            engine.cold = time.perf_counter() - began
            yield engine, cluster
        finally:
            await engine.close()


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


# --- the measurements ---


@dataclass
class Rate:
    """An engine's timed batches: sessions/s, CPU s a session (all, this process alone)."""

    engine: Watched
    rates: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    own: list[float] = field(default_factory=list)

    def line(self) -> str:
        rate, cpu, own = (statistics.median(v) for v in (self.rates, self.cpu, self.own))
        return (
            f"  {self.engine.label:<10} {rate:5.2f} sessions/s  {cpu:5.2f} CPU s/session "
            f"({own:4.2f} in this process)  cold {self.engine.cold:4.1f} s"
        )


async def sessions_per_second(bench: Bench, engine: Watched) -> Rate:
    """--runs batches of --items recipe sessions on `engine`."""
    plan = bench.pages(bench.args.items)
    rate = Rate(engine)
    for _ in range(bench.args.runs):
        all_before, own_before = cpu_seconds()
        took, _ = await bench.batch(engine, plan)
        all_after, own_after = cpu_seconds()
        rate.rates.append(len(plan.items) / took)
        rate.cpu.append((all_after - all_before) / len(plan.items))
        rate.own.append((own_after - own_before) / len(plan.items))
        bench.outcomes += [arrival.outcome for arrival in engine.arrivals]
    return rate


async def noop(bench: Bench, engine: Watched) -> float:
    """Seconds per no-op item (refused at once: see the module docstring), median of 2."""
    with socket.socket() as closed:  # bound, never listening: a connection is refused at once
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}/pagination"
        plan = bench.plan([url] * bench.args.noop)
        took = [(await bench.batch(engine, plan, want="refused"))[0] for _ in range(2)]
    return statistics.median(took) / len(plan.items)


async def round_trip(cluster: Any, count: int) -> float:
    """Seconds of a bare Dask round trip: a function that does nothing, submitted and awaited
    `count` times one after the other (the floor under any item Dask runs)."""
    from distributed import Client

    async with await Client(cluster.scheduler_address, asynchronous=True) as client:
        await client.submit(int, pure=False)
        began = time.perf_counter()
        for _ in range(count):
            await client.submit(int, pure=False)
        return (time.perf_counter() - began) / count


async def killed_worker(bench: Bench, engine: Watched, cluster: Any) -> list[str]:
    """One item alone on the 2-worker cluster, normally, then with its worker killed halfway."""
    from distributed import Client

    plan, runs = bench.pages(1), bench.args.runs
    normal = statistics.median([(await bench.batch(engine, plan))[0] for _ in range(runs)])
    async with await Client(cluster.scheduler_address, asynchronous=True) as observer:
        pids: dict[str, int] = await observer.run(os.getpid)
        batch = asyncio.create_task(bench.batch(engine, plan))
        victim = None
        while victim is None:
            await asyncio.sleep(0.02)
            processing: dict[str, Any] = await observer.processing()
            victim = next((worker for worker, keys in processing.items() if keys), None)
        began = time.perf_counter()
        await asyncio.sleep(normal / 2)
        doomed = {pid: p.start for pid, p in under(pids[victim], processes()).items()}
        os.kill(pids[victim], signal.SIGKILL)
        killed = time.perf_counter()
        moved = None
        while moved is None and not batch.done():
            await asyncio.sleep(0.01)
            processing = await observer.processing()
            if any(keys for worker, keys in processing.items() if worker != victim):
                moved = time.perf_counter() - killed
        took, state = await batch
        arrived = engine.arrivals[-1]
        await observer.wait_for_workers(2, timeout=120)
    left, waited = still_running(doomed), 0.0
    while left and waited < 10:  # a dead worker's Playwright driver may take a moment to go
        await asyncio.sleep(0.25)
        left, waited = still_running(doomed), waited + 0.25
    assert state.batch is not None
    children = [s for s in await bench.store.list_sessions() if s.batch == state.session_id]
    ran_on = int(arrived.outcome.worker.rsplit(":", 1)[-1])
    where = "the other worker" if ran_on in pids.values() else "the restarted worker"
    recovery = arrived.at - killed
    dead = (
        f"{len(left)} of its {len(doomed)} processes still running {waited:.0f} s after it "
        f"came back: {', '.join(command(pid)[:40] for pid in left)}"
        if left
        else f"none of its {len(doomed)} processes (worker, Playwright, Chromium) left running"
    )
    handed = f"{moved:.2f} s after the kill" if moved is not None else "(not seen)"
    return [
        "\nkilled worker: one item alone on dask 2, its worker process SIGKILLed halfway through",
        f"  normal item     {normal:6.2f} s  (batch wall time, median of {runs})",
        f"  killed at       {killed - began:6.2f} s into it; given to another worker {handed}",
        f"  result          {recovery:6.2f} s after the kill = {recovery / normal:.2f}x a normal "
        f"item; {took:.2f} s in all = {took / normal:.2f}x; ran again on {where}",
        f"  stored          {len(children)} session for the item (the batch saw attempt "
        f"{state.batch.items[0].attempt}); {dead}",
    ]


async def concurrency(bench: Bench, n: int, dask_first: bool) -> list[str]:
    """Both engines at `n` at once, one after the other (never both up at once)."""
    rates: dict[str, Rate] = {}
    for kind in ("dask", "asyncio") if dask_first else ("asyncio", "dask"):
        if kind == "asyncio":
            async with asyncio_engine(bench, n) as engine:
                rates[kind] = await sessions_per_second(bench, engine)
                if n == 1:
                    bench.noop[kind] = await noop(bench, engine)
            continue
        async with dask_engine(bench, n) as (engine, cluster):
            rates[kind] = await sessions_per_second(bench, engine)
            if n == 1:
                bench.noop[kind] = await noop(bench, engine)
                bench.noop["bare"] = await round_trip(cluster, bench.args.noop)
            if n == 2:
                bench.killed = await killed_worker(bench, engine, cluster)
    local, dask = rates["asyncio"], rates["dask"]
    speed = statistics.median(dask.rates) / statistics.median(local.rates)
    cpu = statistics.median(dask.cpu) / statistics.median(local.cpu)
    return [
        local.line(),
        dask.line(),
        f"    dask / asyncio at {n}: {speed:.2f}x the sessions/s (aim >= 0.8x), {cpu:.2f}x the "
        "CPU a session",
    ]


async def returned(bench: Bench) -> list[str]:
    """Bytes of each session sent back, and ms to store it as the driver does."""
    outcomes = bench.outcomes
    sizes = [float(outcome.size) for outcome in outcomes]
    times = []
    async with await Store.open(bench.folder / "returned.db") as store:
        for outcome in outcomes:
            began = time.perf_counter()
            await store.add_recorded(outcome.lines)
            times.append(time.perf_counter() - began)
    item = statistics.median(outcome.seconds for outcome in outcomes)
    stored = statistics.median(times)
    events = statistics.median(len(outcome.lines) for outcome in outcomes)
    return [
        f"\nreturned session: the {len(outcomes)} recipe sessions of the timed batches",
        f"  size                median {statistics.median(sizes) / 1024:5.1f} KiB  "
        f"p95 {percentile(sizes, 0.95) / 1024:5.1f} KiB  ({events:.0f} events)",
        f"  Store.add_recorded  median {stored * 1000:5.1f} ms   p95 "
        f"{percentile(times, 0.95) * 1000:5.1f} ms  = {stored / item:.1%} of an item's "
        f"median {item:.2f} s",
    ]


async def measure(site: str, folder: Path, args: argparse.Namespace) -> list[str]:
    """Every section, in the order run; the lines to print."""
    settings = Settings(db=folder / "batch.db")
    lines = [
        f"\nsessions/s: {args.items} recipe sessions a batch, median of {args.runs} "
        f"batch{'es' if args.runs != 1 else ''} "
        "(cold: the engine's start, its cluster's included, and its warm-up batches)"
    ]
    async with await Store.open(settings.db) as store:
        bench = Bench(store, TaskCache(settings.db), settings, site, folder, args)
        try:
            for index, n in enumerate(CONCURRENCY):
                lines += await concurrency(bench, n, dask_first=index % 2 == 1)
                print(f"  ... {n} at once done, load average {load()}", file=sys.stderr)
        finally:
            await bench.cache.close()
        local, dask = bench.noop["asyncio"], bench.noop["dask"]
        lines += [
            f"\nno-op item: {args.noop} items refused at the start-page check, one in flight, "
            "median of 2 batches",
            f"  asyncio 1  {local * 1000:7.1f} ms/item",
            f"  dask 1     {dask * 1000:7.1f} ms/item   = {dask / local:.2f}x; Dask adds "
            f"{(dask - local) * 1000:.1f} ms an item",
            f"  bare Dask  {bench.noop['bare'] * 1000:7.1f} ms a round trip of a function that "
            "does nothing (submitted, awaited)",
        ]
        return lines + bench.killed + await returned(bench)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=6, help="sessions a timed batch (6)")
    parser.add_argument("--runs", type=int, default=2, help="timed batches per engine (2)")
    parser.add_argument("--max-items", type=int, default=5, help="items a recipe run reads (5)")
    parser.add_argument("--noop", type=int, default=30, help="no-op items a batch (30)")
    parser.add_argument("--quick", action="store_true", help="--items 4 --runs 1 --noop 10")
    args = parser.parse_args()
    if args.quick:
        args.items, args.runs, args.noop = 4, 1, 10
    warnings.filterwarnings("ignore", message="Port .* is already in use")
    logging.getLogger("distributed").setLevel(logging.ERROR)
    print(
        f"{os.cpu_count()} cores, load average {load()} at the start; recipe sessions: "
        f"demo-pagination, {args.max_items} items each"
    )
    began = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix="tui-agent-bench-") as name, demo_site() as site:
            for line in await measure(site, Path(name), args):
                print(line)
    finally:
        await asyncio.sleep(1)
        # multiprocessing's resource tracker ends when this process does
        running = set(still_running(SEEN)) | set(marked())
        running.discard(os.getpid())
        left = {pid: command(pid) for pid in running if "resource_tracker" not in command(pid)}
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    print(
        f"\n{time.perf_counter() - began:.0f} s in all, load average {load()} at the end; "
        + (
            f"{len(left)} process(es) left behind, killed: "
            + ", ".join(f"{pid} {line[:40]}" for pid, line in left.items())
            if left
            else "no process left behind"
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
