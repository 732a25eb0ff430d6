"""The TUI against the headless printer: the same 200-item offline scrape, both ways, one run.

The demo shop's `pagination` layout is served on loopback by this process; each case runs in a
fresh interpreter (its own Chromium, its own SQLite file) and times the session from the
recorder's first event to its SessionEnded:

- headless: `SessionRecorder` with the `--headless` printer writing to a terminal-like console
  (colours, 120 columns) whose output goes to /dev/null;
- tui: the app (`TuiAgentApp.start_session`, as `tui-agent scrape` does) under Textual's
  headless driver at 120x36: every event reaches the session screen, which renders as usual.

Also printed: the CPU seconds of the recording process itself (Chromium's apart), which a
loaded machine changes less than the wall time.

Cases alternate (headless, tui, headless, ...) so both see the same machine load; the figure
is the median TUI time over the median headless time.

    .venv/bin/python benchmarks/tui_vs_headless.py [--items 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

TASK = "Extract {items} items"
SIZE = (120, 36)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--case", choices=("tui", "headless"), help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--db", type=Path, help=argparse.SUPPRESS)
    return parser.parse_args()


def session(url: str, items: int, db: Path):  # type: ignore[no-untyped-def]
    from tui_agent.agents.launch import prepare
    from tui_agent.agents.requests import ScrapeRequest
    from tui_agent.config import load_settings

    settings = load_settings(db=db)
    request = ScrapeRequest(
        url=url, task=TASK.format(items=items), max_items=items, planner="offline"
    )
    launch = prepare(request, settings)
    return settings, launch.started, launch.events


async def run_headless(url: str, items: int, db: Path) -> dict[str, float | int | str]:
    from rich.console import Console

    from tui_agent.printer import EventPrinter
    from tui_agent.recorder import SessionRecorder
    from tui_agent.store import Store

    settings, started, agent = session(url, items, db)
    with open(os.devnull, "w") as sink:
        console = Console(file=sink, force_terminal=True, width=SIZE[0], color_system="truecolor")
        async with await Store.open(settings.db) as store:
            recorder = SessionRecorder(store, listeners=[EventPrinter(console)])
            began, cpu = time.perf_counter(), time.process_time()
            state = await recorder.run(started, agent)
            took, cpu = time.perf_counter() - began, time.process_time() - cpu
    return {"seconds": took, "cpu": cpu, "items": len(state.items), "status": state.status}


async def run_tui(url: str, items: int, db: Path) -> dict[str, float | int | str]:
    from tui_agent.tui.app import SESSION_WORKERS, TuiAgentApp

    settings, started, agent = session(url, items, db)
    app = TuiAgentApp(settings.db, settings=settings)
    async with app.run_test(size=SIZE) as pilot:
        began, cpu = time.perf_counter(), time.process_time()
        app.start_session(started, agent)
        await pilot.pause()
        workers = [w for w in app.workers if w.group == SESSION_WORKERS]
        state = await workers[0].wait()
        took, cpu = time.perf_counter() - began, time.process_time() - cpu
        await pilot.pause()
    return {"seconds": took, "cpu": cpu, "items": len(state.items), "status": state.status}


def one_case(case: str, url: str, items: int, db: Path) -> None:
    run = run_tui if case == "tui" else run_headless
    print(json.dumps(asyncio.run(run(url, items, db))))


def measure(case: str, url: str, items: int, folder: Path, index: int) -> dict[str, float]:
    db = folder / f"{case}-{index}.db"
    command = [sys.executable, __file__, "--case", case, "--url", url, "--items", str(items)]
    done = subprocess.run(
        [*command, "--db", str(db)], capture_output=True, text=True, check=False, timeout=900
    )
    if done.returncode != 0:
        raise SystemExit(f"{case} run failed:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if result["items"] != items or result["status"] != "completed":
        raise SystemExit(f"{case} run ended {result['status']} with {result['items']} items")
    return result


def main() -> None:
    args = parse_args()
    if args.case is not None:
        one_case(args.case, args.url, args.items, args.db)
        return
    from tui_agent.demo_site import DemoSite

    times: dict[str, list[float]] = {"headless": [], "tui": []}
    cpu: dict[str, list[float]] = {"headless": [], "tui": []}
    with DemoSite() as site, tempfile.TemporaryDirectory() as folder:
        url = site.url("pagination")
        print(f"offline scrape of {url}, {args.items} items, {args.repeat} runs each")
        for index in range(args.repeat):
            for case in ("headless", "tui"):
                result = measure(case, url, args.items, Path(folder), index)
                times[case].append(result["seconds"])
                cpu[case].append(result["cpu"])
                print(
                    f"  {case:<8} run {index + 1}: {result['seconds']:6.1f} s wall, "
                    f"{result['cpu']:5.1f} s cpu in this process",
                    flush=True,
                )
    headless, tui = statistics.median(times["headless"]), statistics.median(times["tui"])
    print(f"headless median {headless:.1f} s · tui median {tui:.1f} s")
    print(f"tui / headless = {tui / headless:.2f}x wall time  (aim: <= 1.2x)")
    headless_cpu, tui_cpu = statistics.median(cpu["headless"]), statistics.median(cpu["tui"])
    print(
        f"cpu of the recording process: headless {headless_cpu:.1f} s · tui {tui_cpu:.1f} s "
        f"= {tui_cpu / headless_cpu:.2f}x (Chromium apart; what the TUI costs the machine)"
    )


if __name__ == "__main__":
    main()
