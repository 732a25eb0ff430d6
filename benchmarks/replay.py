"""Replay of a long session: time to first paint jumped to the end, moves from there, memory.

Builds a realistic codeact-like session (streamed thought tokens, code, executions with output,
LLM calls, item batches with analysis, logs, tool calls) of each size asked for in a temporary
SQLite database, then measures each case in a fresh interpreter (so peak RSS belongs to that
case alone):

- baseline: read the session's events from the store and fold them once (what any view of
  the session has to do at least); also with the cyclic collector paused, as the app loads a
  session (its full passes over the new events cost the plain load much at 100k);
- home: the app showing the sessions list (Textual's own footprint);
- replay: the app opened on the replay screen, `end` pressed, until the screen is idle; then,
  one key at a time and each until idle again: a step back (a re-fold), a step forward,
  three pages of scrolling up the stream and three down, a cursor move onto a card, `home`;
  and a key that does nothing (the floor: what the test pilot's waiting for idle costs).

A paint is timed at the last frame the app sends the terminal before it is idle (each frame
rendered to the escape sequences a terminal is written, which a headless app skips); when
the test pilot then sees it idle is printed too (its idle check samples the CPU in 20 ms
slices, so it comes some 50-100 ms later). A move is timed from its key to its last frame.
Times are wall clock; CPU time (of that process, up to the pilot's idle) is shown beside
them, as the machine may be shared. Also times the replay controller stepping through all
events one by one (incremental apply) against one plain fold. Prints medians and ratios
against the baseline measured in this run, and the median of the ratios of each run's pair
(a baseline and a replay measured one after the other: a shared machine's speed drifts by
more than the difference between runs).

    .venv/bin/python benchmarks/replay.py [--events 10000,100000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tui_agent.analysis import analyze_output
from tui_agent.events import (
    CodeProposed,
    Event,
    ExecutionFinished,
    ExecutionStarted,
    FinalAnswer,
    ItemsExtracted,
    LLMCall,
    Log,
    LogLine,
    OutputAnalyzed,
    SessionEnded,
    SessionStarted,
    Thought,
    ThoughtDelta,
    ToolCall,
    ToolResult,
    dump_event,
)
from tui_agent.session import fold

SESSION_ID = "be4c40000001"
SIZE = (120, 36)
THOUGHT = "the price column is empty on every second page so I will try the next selector"


def step_events(step: int) -> list[Event]:
    """About 36 events of one agent step."""
    words = f"{THOUGHT} {THOUGHT}".split(" ")
    events: list[Event] = [ThoughtDelta(step=step, text=f"{w} ") for w in words]
    thought = " ".join(words)
    code = "\n".join(f"row_{i} = fetch(page={step}, row={i})" for i in range(8))
    items = [
        {"title": f"item {step}-{i}", "price": i * 1.5 or None, "url": f"https://x.test/{i}"}
        for i in range(20)
    ]
    events += [
        Thought(step=step, text=thought),
        LLMCall(model="gpt-4o-mini", prompt_tokens=900, completion_tokens=80, cost=0.0002),
        CodeProposed(step=step, code=code),
        ExecutionStarted(step=step, backend="docker"),
        ExecutionFinished(
            step=step,
            success=step % 7 != 0,
            duration=0.2,
            result={"rows": 20},
            logs=[LogLine(stream="stdout", text=f"page {step} row {i}") for i in range(6)],
        ),
        ToolCall(call_id=f"c{step}", name="probeClick", arguments={"selector": "a.next"}),
        ToolResult(call_id=f"c{step}", name="probeClick", output="ok", duration=0.3),
        Log(message=f"step {step} done"),
    ]
    if step % 5 == 0:
        events += [ItemsExtracted(step=step, items=items)]
        events += [OutputAnalyzed(step=step, analysis=analyze_output(items))]
    return events


def build_events(count: int) -> list[Event]:
    """`count` events of one session, stamped with seq and recorded-looking timestamps."""
    payloads: list[Event] = [
        SessionStarted(kind="codeact", title="Benchmark session", model="gpt-4o-mini")
    ]
    step = 1
    while len(payloads) < count - 2:
        payloads += step_events(step)
        step += 1
    payloads = payloads[: count - 2]
    payloads += [FinalAnswer(step=step, text="done"), SessionEnded(status="completed")]
    start = 1_767_268_800.0
    return [
        e.model_copy(update={"session_id": SESSION_ID, "seq": i, "ts": start + i * 0.05})
        for i, e in enumerate(payloads, start=1)
    ]


async def build_db(db_path: Path, count: int) -> None:
    from tui_agent.store import Store

    jsonl = db_path.with_suffix(".jsonl")
    jsonl.write_text("".join(dump_event(e) + "\n" for e in build_events(count)))
    async with await Store.open(db_path) as store:
        await store.import_jsonl(jsonl)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def child_baseline(db_path: Path, collect: bool = True) -> dict[str, float]:
    from tui_agent.store import Store

    if not collect:  # as the app loads a session: the cyclic collector paused
        gc.disable()
    start, cpu = time.perf_counter(), time.process_time()
    async with await Store.open(db_path) as store:
        events = await store.events(SESSION_ID)
    state = fold(events)
    seconds = time.perf_counter() - start
    assert state.event_count == len(events)
    return {"seconds": seconds, "cpu": time.process_time() - cpu, "rss_mb": peak_rss_mb()}


MOVES: list[tuple[str, tuple[str, ...]]] = [
    ("step back (re-fold)", ("left",)),
    ("step forward", ("right",)),
    ("scroll up a page", ("pageup",)),
    ("scroll up a page", ("pageup",)),
    ("scroll up a page", ("pageup",)),
    ("scroll down a page", ("pagedown",)),
    ("scroll down a page", ("pagedown",)),
    ("scroll down a page", ("pagedown",)),
    ("cursor onto the card above", ("up",)),
    ("`home` (back to the start)", ("home",)),
    ("a key bound to nothing (floor)", ("f12",)),
]
"""The moves timed after the jump to the end, in order, one key each."""


def measured_app(db_path: Path, replay: bool) -> Any:
    """The app, noting when it last sent the terminal a frame (rendered to the escape
    sequences a terminal is written, which a headless app otherwise skips)."""
    from textual._compositor import CompositorUpdate
    from textual.screen import Screen

    from tui_agent.tui.app import TuiAgentApp

    class MeasuredApp(TuiAgentApp):
        last_frame = 0.0

        def _display(self, screen: Screen[Any], renderable: Any) -> None:
            if renderable is not None and not self._batch_count:
                if isinstance(renderable, CompositorUpdate):
                    renderable.render_segments(self.console)
                self.last_frame = time.perf_counter()
            super()._display(screen, renderable)

    return MeasuredApp(db_path, replay_session=SESSION_ID if replay else None)


async def child_app(db_path: Path, replay: bool) -> dict[str, float]:
    from tui_agent.tui.screens.home import HomeScreen
    from tui_agent.tui.screens.replay import ReplayScreen

    start, cpu = time.perf_counter(), time.process_time()
    app = measured_app(db_path, replay)
    target = ReplayScreen if replay else HomeScreen
    timings: dict[str, float] = {}
    async with app.run_test(size=SIZE) as pilot:
        while not isinstance(app.screen, target):
            await asyncio.sleep(0.005)
        opened = time.perf_counter()
        if replay:
            await pilot.press("end")
            screen = app.screen
            assert isinstance(screen, ReplayScreen)
            while not screen.replay.at_end:
                await asyncio.sleep(0.005)
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
        idle, painted_cpu = time.perf_counter(), time.process_time()
        painted = app.last_frame
        if replay:
            for name, keys in MOVES:
                began = time.perf_counter()
                await pilot.press(*keys)
                await pilot.pause()
                took = max(app.last_frame - began, 0.0)  # 0: the key changed nothing shown
                timings[name] = max(timings.get(name, 0.0), took)
                idle_key = f"{name} (idle)"
                timings[idle_key] = max(timings.get(idle_key, 0.0), time.perf_counter() - began)
    return {
        "seconds": painted - start,
        "idle_seconds": idle - start,
        "cpu": painted_cpu - cpu,
        "open_seconds": opened - start,
        "end_seconds": painted - opened,
        "rss_mb": peak_rss_mb(),
        **{f"move:{name}": seconds for name, seconds in timings.items()},
    }


def stepping(events: list[Event]) -> dict[str, float]:
    """Stepping through every event with the replay controller vs one plain fold."""
    from tui_agent.tui.replay import Replay

    start = time.perf_counter()
    fold(events)
    fold_seconds = time.perf_counter() - start
    replay = Replay(events)
    start = time.perf_counter()
    while not replay.at_end:
        replay.forward()
    step_seconds = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(10):
        replay.back()
    back_seconds = (time.perf_counter() - start) / 10
    return {"fold": fold_seconds, "forward_all": step_seconds, "one_back": back_seconds}


def run_child(mode: str, db_path: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(db_path)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def median(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(run[key] for run in runs)


def report(count: int, repeat: int, runs: dict[str, list[dict[str, float]]]) -> None:
    """Print one session size's table, ratios and move latencies."""
    base, home, replay = runs["baseline"], runs["home"], runs["replay"]
    base_s, replay_s = median(base, "seconds"), median(replay, "seconds")
    print(f"replay of a {count:,}-event session, terminal {SIZE[0]}x{SIZE[1]},")
    print(f"median of {repeat} runs, each case in a fresh interpreter\n")
    print(f"{'case':<44}{'time':>10}{'CPU':>10}{'peak RSS':>12}")
    paused = runs["baseline-paused"]
    rows = [
        ("baseline: load events from SQLite + fold", base_s, median(base, "cpu"), base),
        ("  the same, the cyclic collector paused", median(paused, "seconds"), None, paused),
        ("app on the sessions list (first paint)", median(home, "seconds"), None, home),
        ("replay: open the replay screen", median(replay, "open_seconds"), None, None),
        ("replay: then `end` (fold + paint)", median(replay, "end_seconds"), None, None),
        ("replay: first paint jumped to the end", replay_s, median(replay, "cpu"), replay),
        ("  (then seen idle by the test pilot)", median(replay, "idle_seconds"), None, None),
    ]
    for name, seconds, cpu, rss_runs in rows:
        line = f"{name:<44}{seconds * 1000:>8.0f} ms"
        line += f"{cpu * 1000:>7.0f} ms" if cpu is not None else " " * 10
        line += f"{median(rss_runs, 'rss_mb'):>9.0f} MB" if rss_runs else ""
        print(line)
    cpu_ratio = median(replay, "cpu") / median(base, "cpu")
    paused_s = median(paused, "seconds")
    pairs = [r["seconds"] / b["seconds"] for b, r in zip(base, replay, strict=True)]
    print(
        f"\nratio replay first paint / baseline, run by run (each pair measured back to back,"
        f" so the machine's drift cancels): median {statistics.median(pairs):.1f}x"
        f" (runs: {', '.join(f'{ratio:.1f}' for ratio in sorted(pairs))})"
    )
    print(
        f"ratio of the medians: {replay_s / base_s:.1f}x (CPU: {cpu_ratio:.1f}x; against the"
        f" baseline with the collector paused, as the app loads: {replay_s / paused_s:.1f}x)"
    )
    replay_rss = median(replay, "rss_mb")
    print(
        f"ratio replay peak RSS / baseline: {replay_rss / median(base, 'rss_mb'):.2f}x; "
        f"/ app on the sessions list: {replay_rss / median(home, 'rss_mb'):.2f}x"
    )
    print("\nfrom the end, one key each, to its last frame (slowest of its kind, median of runs;")
    print("then when the pilot saw it idle):")
    for name in dict.fromkeys(name for name, _ in MOVES):
        seconds = median(replay, f"move:{name}")
        idle = median(replay, f"move:{name} (idle)")
        print(
            f"  {name:<42}{seconds * 1000:>8.0f} ms  ({seconds / base_s:.1f}x baseline)"
            f"{idle * 1000:>8.0f} ms idle"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", default="10000,100000", help="session sizes, comma-separated")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--child", nargs=2, metavar=("MODE", "DB"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        mode, db = args.child
        db_path = Path(db)
        coroutine: Any = (
            child_baseline(db_path, collect=mode == "baseline")
            if mode.startswith("baseline")
            else child_app(db_path, mode == "replay")
        )
        print(json.dumps(asyncio.run(coroutine)))
        return

    for number, count in enumerate(int(size) for size in args.events.split(",")):
        if number:
            print("\n" + "-" * 76 + "\n")
        with tempfile.TemporaryDirectory() as tmp:
            db_path = Path(tmp) / "bench.db"
            asyncio.run(build_db(db_path, count))
            runs: dict[str, list[dict[str, float]]] = {  # a baseline, then its replay
                "baseline": [],
                "replay": [],
                "baseline-paused": [],
                "home": [],
            }
            for _ in range(args.repeat):
                for mode, results in runs.items():
                    results.append(run_child(mode, db_path))
        report(count, args.repeat, runs)
        steps = stepping(build_events(count))
        print(
            f"\nstepping all {count:,} events forward one by one: "
            f"{steps['forward_all'] * 1000:.0f} ms (one plain fold: {steps['fold'] * 1000:.0f} ms,"
            f" ratio {steps['forward_all'] / steps['fold']:.2f}x); one step back (re-fold) from"
            f" the end: {steps['one_back'] * 1000:.0f} ms"
        )


if __name__ == "__main__":
    main()
