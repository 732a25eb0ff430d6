"""Sandbox speed and host memory, each backend against a fresh local process, in one run.

Usage: .venv/bin/python benchmarks/sandbox.py [--runs 300] [--sequential 1000]
                                              [--backends local,bubblewrap]

Baseline: spawning `python3 -c 'print(1+1)'` on the host (p50 of --spawns runs). Then, for
every backend in `choose.BACKENDS` that works here (docker joins when it is registered there),
one section:

  start            opening the sandbox until its kernel answers
  warm 1+1         round trip of `1 + 1` through the started sandbox: p50 and p95 of --runs,
                   and p50 / baseline p50 (the aim is under 0.5x)
  sequential       --sequential runs of `1 + 1` one after another: total time and runs/s
  host memory      the host's RSS before and after the sequential runs, and how much the
                   Python heap (tracemalloc) grows over a second, traced, batch of the same size
  flood            5 runs that each print 20 MiB (capped at 1 MiB a run): host RSS after
  restart          a run killed at its timeout: time from the timeout to the next result

Then, for docker and bubblewrap, what the workspace quota costs: --starts sessions (open, run
`1 + 1`, close) on a workspace of 1 MiB in 20 files, without a quota and with the default one
(mounting the image at the start, copying the files back at the close), p50 and their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from tui_agent.sandbox.base import Sandbox
from tui_agent.sandbox.choose import BACKENDS, backend_status
from tui_agent.sandbox.docker import DockerSandbox
from tui_agent.sandbox.engine import IMAGE
from tui_agent.sandbox.limits import Limits
from tui_agent.sandbox.pool import ContainerPool, close_shared_pool
from tui_agent.sandbox.quota import quota_status
from tui_agent.sandbox.wire import ExecuteRequest

TRIVIAL = ExecuteRequest(code="1 + 1")
FLOOD = ExecuteRequest(code="for _ in range(100_000):\n    print('x' * 200)")
HANG = ExecuteRequest(code="import time\ntime.sleep(3600)", timeout=0.5)


def rss_mib() -> float:
    """Resident memory of this process now, in MiB."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def spawn_baseline(spawns: int) -> tuple[str, float]:
    """The python3 used and the p50 seconds of spawning it to print 1+1."""
    python = "/usr/bin/python3" if Path("/usr/bin/python3").is_file() else sys.executable
    python = shutil.which(python) or python
    times = []
    for _ in range(spawns):
        began = time.perf_counter()
        subprocess.run([python, "-c", "print(1+1)"], check=True, capture_output=True)
        times.append(time.perf_counter() - began)
    return python, statistics.median(times)


async def timed_runs(sandbox: Sandbox, request: ExecuteRequest, count: int) -> list[float]:
    times = []
    for _ in range(count):
        began = time.perf_counter()
        result = await sandbox.execute(request)
        times.append(time.perf_counter() - began)
        if not result.success:
            raise SystemExit(f"{sandbox.name}: the run failed: {result.error}")
    return times


async def backend_section(name: str, baseline: float, args: argparse.Namespace) -> None:
    """Measure one backend and print its lines."""
    status = backend_status(name)
    if not status.ok:
        print(f"\n[{name}] skipped: {status.reason}")
        return
    with tempfile.TemporaryDirectory(prefix="tui-agent-bench-") as folder:
        began = time.perf_counter()
        sandbox = BACKENDS[name](workspace=Path(folder))
        await sandbox.start()
        start = time.perf_counter() - began
        try:
            await timed_runs(sandbox, TRIVIAL, 30)
            warm = await timed_runs(sandbox, TRIVIAL, args.runs)
            rss_before = rss_mib()
            sequential = sum(await timed_runs(sandbox, TRIVIAL, args.sequential))
            rss_after = rss_mib()
            tracemalloc.start()
            await timed_runs(sandbox, TRIVIAL, args.sequential)
            heap_growth = tracemalloc.get_traced_memory()[0]
            tracemalloc.stop()
            for _ in range(5):
                await sandbox.execute(FLOOD)
            rss_flood = rss_mib()
            hung = await sandbox.execute(HANG)
            restarted = time.perf_counter()
            await sandbox.execute(TRIVIAL)
            restart = hung.duration - HANG.timeout + time.perf_counter() - restarted
        finally:
            await sandbox.close()
            # The restart above left a warm container for this workspace in the shared pool;
            # it holds the workspace quota's mount until the pool lets it go.
            close_shared_pool()
    p50, p95 = statistics.median(warm), percentile(warm, 0.95)
    print(f"\n[{name}] {'isolated' if sandbox.isolated else 'NOT isolated'}")
    print(f"  start           {start * 1000:8.1f} ms")
    print(
        f"  warm 1+1        p50 {p50 * 1000:6.3f} ms  p95 {p95 * 1000:6.3f} ms  "
        f"= {p50 / baseline:.3f}x a fresh python3 (aim < 0.5x)"
    )
    print(
        f"  sequential      {args.sequential} runs in {sequential:.2f} s "
        f"({args.sequential / sequential:,.0f} runs/s)"
    )
    print(
        f"  host memory     RSS {rss_before:.1f} -> {rss_after:.1f} MiB over "
        f"{args.sequential} runs; Python heap +{heap_growth / 1024:.0f} KiB over "
        f"{args.sequential} more (traced) runs"
    )
    print(f"  flood           RSS {rss_flood:.1f} MiB after 5 runs printing 20 MiB each")
    print(f"  restart         {restart * 1000:8.1f} ms from a timeout kill to the next result")


# --- docker only: session start from the warm pool vs. cold (written by the docker backend) ---


async def docker_start_section(baseline: float, args: argparse.Namespace) -> None:
    """Session start (to the first result of `1 + 1`) from the warm pool, from a cold container,
    and a cold `docker run --rm`; plus `docker exec` per run against the kept-open pipe."""
    status = backend_status("docker")
    if not status.ok:
        print(f"\n[docker start] skipped: {status.reason}")
        return
    count = args.starts
    run_argv = ["docker", "run", "--rm", "--network", "none", IMAGE, "python3", "-c", "print(1+1)"]
    cli_run = [_timed_command(run_argv) for _ in range(count)]
    with tempfile.TemporaryDirectory(prefix="tui-agent-bench-") as folder:
        cold_pool, warm_pool = ContainerPool(size=0), ContainerPool(size=1)
        try:
            cold = [await _first_result(folder, cold_pool) for _ in range(count)]
            spec = DockerSandbox(workspace=Path(folder), pool=warm_pool).spec
            warm_pool.prewarm(spec)
            warm = []
            for _ in range(count):
                while warm_pool.warm_count(spec) < 1:  # not timed: the pool refills between
                    await asyncio.sleep(0.05)
                warm.append(await _first_result(folder, warm_pool))
            async with DockerSandbox(workspace=Path(folder), pool=warm_pool) as sandbox:
                exec_argv = ["docker", "exec", str(sandbox.container_id), "python3", "-c", "1"]
                per_exec = [_timed_command(exec_argv) for _ in range(count * 3)]
                piped = await timed_runs(sandbox, TRIVIAL, args.runs)
                restarts = []
                for _ in range(count):
                    while warm_pool.warm_count(spec) < 1:
                        await asyncio.sleep(0.05)
                    hung = await sandbox.execute(HANG)
                    began = time.perf_counter()
                    await sandbox.execute(TRIVIAL)
                    restarts.append(hung.duration - HANG.timeout + time.perf_counter() - began)
        finally:
            cold_pool.close()
            warm_pool.close()
    run_p50, cold_p50, warm_p50 = (statistics.median(t) for t in (cli_run, cold, warm))
    exec_p50, piped_p50 = statistics.median(per_exec), statistics.median(piped)
    print(f"\n[docker start] p50 of {count} session starts, each to its first result of 1+1")
    print(f"  docker run --rm {run_p50 * 1000:8.1f} ms  (cold CLI run of python3 -c, no session)")
    print(f"  cold container  {cold_p50 * 1000:8.1f} ms  = {cold_p50 / run_p50:.2f}x docker run")
    print(
        f"  warm pool       {warm_p50 * 1000:8.1f} ms  = {warm_p50 / run_p50:.3f}x docker run, "
        f"{warm_p50 / baseline:.2f}x a fresh python3"
    )
    print(
        f"  restart         {statistics.median(restarts) * 1000:8.1f} ms  from a timeout kill to "
        "the next result, with a warm container waiting"
    )
    print(
        f"  per run         docker exec p50 {exec_p50 * 1000:.1f} ms vs. the kept-open attach "
        f"pipe p50 {piped_p50 * 1000:.3f} ms ({exec_p50 / piped_p50:,.0f}x)"
    )


async def _first_result(folder: str, pool: ContainerPool) -> float:
    began = time.perf_counter()
    async with DockerSandbox(workspace=Path(folder), pool=pool) as sandbox:
        result = await sandbox.execute(TRIVIAL)
        took = time.perf_counter() - began
    if result.result != 2:
        raise SystemExit(f"docker: the first run failed: {result.error}")
    return took


# --- the workspace quota: sessions with and without it ---


async def quota_section(args: argparse.Namespace) -> None:
    """p50 of whole sessions (open, `1 + 1`, close) without and with the workspace quota."""
    capped, reason = quota_status()
    if not capped:
        print(f"\n[workspace quota] skipped: {reason}")
        return
    print(f"\n[workspace quota] p50 of {args.starts} sessions: open, run 1+1, close")
    for name in ("bubblewrap", "docker"):
        if not backend_status(name).ok:
            print(f"  {name:10s} skipped: {backend_status(name).reason}")
            continue
        without = [await _session(name, Limits(workspace_quota_mb=0)) for _ in range(args.starts)]
        with_quota = [await _session(name, Limits()) for _ in range(args.starts)]
        plain, quota = statistics.median(without), statistics.median(with_quota)
        print(
            f"  {name:10s} no quota {plain * 1000:7.1f} ms   1 GiB quota {quota * 1000:7.1f} ms"
            f"   = {quota / plain:.2f}x"
        )


async def _session(name: str, limits: Limits) -> float:
    with tempfile.TemporaryDirectory(prefix="tui-agent-bench-") as folder:
        workspace = Path(folder, "workspace")
        workspace.mkdir()
        for index in range(20):
            (workspace / f"file-{index}.bin").write_bytes(os.urandom(50 << 10))
        if os.geteuid() == 0:
            os.chown(workspace, 65534, 65534)
        began = time.perf_counter()
        async with BACKENDS[name](workspace=workspace, limits=limits) as sandbox:
            result = await sandbox.execute(TRIVIAL)
        took = time.perf_counter() - began
    if result.result != 2:
        raise SystemExit(f"{name}: the run failed: {result.error}")
    return took


def _timed_command(argv: list[str]) -> float:
    began = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True)
    return time.perf_counter() - began


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--sequential", type=int, default=1000)
    parser.add_argument("--spawns", type=int, default=50)
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--starts", type=int, default=10, help="docker session starts to time")
    args = parser.parse_args()
    python, baseline = spawn_baseline(args.spawns)
    print(f"baseline: spawn `{python} -c 'print(1+1)'` p50 {baseline * 1000:.2f} ms")
    print(f"host RSS at start: {rss_mib():.1f} MiB")
    for name in args.backends.split(","):
        await backend_section(name.strip(), baseline, args)
    if "docker" in args.backends.split(","):
        await docker_start_section(baseline, args)
    await quota_section(args)


if __name__ == "__main__":
    asyncio.run(main())
