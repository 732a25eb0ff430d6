"""The planners on every demo layout: what they find, how well, how fast, at what cost.

Usage: .venv/bin/python benchmarks/planner_eval.py [--layouts panel,navigate] [--items 10]
       [--planner offline|llm|auto] [--model M --api-base URL]
       .venv/bin/python benchmarks/planner_eval.py --corpus [datasette,django,pelican,trac]
       [--layouts datasette-table,...] [--planner ...]

For each layout of the demo site (served in this process on an ephemeral port) one
`tui-agent scrape` session runs (Chromium start, planning, generators, recipe with its dry run,
extraction) into a temporary SQLite store, saving its recipe; then the saved recipe runs again
as `tui-agent recipe run` does, with no model. Printed per layout: items found / expected,
field accuracy against the ground truth, seconds, the planners' probe calls, tokens; and the
second run's seconds and tokens (always zero) with its ratio to the first run (the baseline
measured in the same run: what exploring the page costs over simply running what was learned).

With --corpus, the layouts are those of the corpus of real web software (tests/corpus: Datasette,
Django's admin, Pelican, Trac, each started on loopback with generated data): one scrape each,
printed with items found / expected, field recall against the ground truth, seconds, and the
fields that missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tui_agent.agents.launch import prepare
from tui_agent.agents.recipe_run import recipe_started, run_recipe
from tui_agent.agents.requests import ScrapeRequest
from tui_agent.config import Settings
from tui_agent.demo_site import LAYOUTS, DemoSite
from tui_agent.recorder import SessionRecorder
from tui_agent.session import SessionState
from tui_agent.store import Store
from tui_agent.web.recipe import load_recipe

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from corpus.apps import APPS, all_running
from corpus.layouts import layouts_of
from corpus.run import Run, scrape

PLANNER_CALLS = ("offline-", "planner-")
"""Call ids of the planners' probes (the generators, dry run and executor have their own)."""


def field_accuracy(items: list[dict[str, Any]], truth: list[dict[str, str]]) -> float:
    """Share of the ground truth's field values found, item by item, in the same places."""
    total = found = 0
    for index, record in enumerate(truth):
        item = items[index] if index < len(items) else {}
        for name, value in record.items():
            total += 1
            found += item.get(name) == value
    return found / total if total else 1.0


async def record(store: Store, started: Any, agent: Any) -> tuple[SessionState, float]:
    began = time.perf_counter()
    state = await SessionRecorder(store).run(started, agent)
    return state, time.perf_counter() - began


async def evaluate(layout: str, site: DemoSite, args: argparse.Namespace, folder: Path) -> dict:
    settings = Settings(db=folder / "eval.db", model=args.model, api_base=args.api_base)
    recipe_path = folder / f"{layout}.json"
    url = site.url(layout)
    request = ScrapeRequest(
        url=url, task=f"Extract {args.items} items", planner=args.planner, save_recipe=recipe_path
    )
    launch = prepare(request, settings)
    async with await Store.open(settings.db) as store:
        state, first = await record(store, launch.started, launch.events)
        row: dict[str, Any] = {
            "layout": layout,
            "status": state.status,
            "items": len(state.items),
            "expected": args.items,
            "accuracy": field_accuracy(state.items, site.ground_truth(layout)[: args.items]),
            "seconds": first,
            "tool_calls": sum(c.startswith(PLANNER_CALLS) for c in state.tool_calls),
            "tokens": state.total_tokens,
            "again": None,
            "again_tokens": None,
        }
        if state.status != "completed" or not recipe_path.exists():
            row["error"] = state.errors[-1].message if state.errors else state.stopped_reason
            return row
        recipe = load_recipe(recipe_path)
        again, second = await record(
            store,
            recipe_started(recipe, url, args.items),
            run_recipe(recipe, url, max_items=args.items),
        )
        row["again"] = second
        row["again_tokens"] = again.total_tokens
        row["again_items"] = len(again.items)
    return row


def print_rows(rows: list[dict]) -> None:
    header = (
        f"{'layout':<11}{'items':>9}{'fields':>9}{'seconds':>9}{'probes':>7}{'tokens':>8}"
        f"{'again s':>9}{'again tok':>10}{'again/first':>12}"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        if row.get("error"):
            print(f"{row['layout']:<11}  {row['status']}: {row['error']}")
            continue
        ratio = row["again"] / row["seconds"]
        print(
            f"{row['layout']:<11}{row['items']:>4}/{row['expected']:<4}{row['accuracy']:>9.1%}"
            f"{row['seconds']:>9.2f}{row['tool_calls']:>7}{row['tokens']:>8}"
            f"{row['again']:>9.2f}{row['again_tokens']:>10}{ratio:>11.2f}x"
        )
    done = [r for r in rows if not r.get("error")]
    if done:
        accuracy = statistics.mean(r["accuracy"] for r in done)
        ratio = statistics.median(r["again"] / r["seconds"] for r in done)
        print(
            f"\n{len(done)}/{len(rows)} layouts planned; mean field accuracy {accuracy:.1%}; "
            f"a second run of the saved recipe takes {ratio:.2f}x the first run's time "
            f"(median) and {sum(r['again_tokens'] for r in done)} tokens"
        )


def print_corpus(runs: list[Run]) -> None:
    header = f"{'app':<10}{'layout':<17}{'items':>9}{'recall':>8}{'str-lists':>10}{'seconds':>9}"
    print(header)
    print("-" * len(header))
    for run in runs:
        score = run.score
        status = "" if run.status == "completed" else f"  {run.status}: {run.error}"
        print(
            f"{run.layout.app:<10}{run.layout.name:<17}{score.found:>4}/{score.expected:<4}"
            f"{score.recall:>8.1%}{score.as_string:>10}{run.seconds:>9.1f}{status}"
        )
    print("\nmisses per field (expected → got):")
    for run in runs:
        if run.score.misses:
            print(f"  {run.layout.key}: {run.score.miss_summary()}")
        if run.traffic.blocked:
            print(f"  {run.layout.key}: requests beyond loopback (aborted): {run.traffic.blocked}")
    good = sum(r.score.items >= 0.95 and r.score.recall >= 0.95 for r in runs)
    print(f"\n{good}/{len(runs)} layouts at ≥95% items and field recall")


async def corpus_main(args: argparse.Namespace) -> int:
    apps = tuple(args.corpus.split(",")) if args.corpus != "all" else APPS
    layouts = layouts_of(apps)
    if args.layouts:
        keys = {name.strip() for name in args.layouts.split(",")}
        layouts = [layout for layout in layouts if layout.key in keys]
    unknown = [app for app in apps if app not in APPS]
    if unknown or not layouts:
        print(f"unknown apps or no layouts: {', '.join(unknown) or args.layouts}", file=sys.stderr)
        return 2
    runs = []
    needed = tuple({layout.app: 0 for layout in layouts})
    with all_running(needed) as running, tempfile.TemporaryDirectory() as folder:
        for layout in layouts:
            base_url = running[layout.app].url
            planner = (args.planner, args.model, args.api_base)
            run = await scrape(layout, base_url, Path(folder), *planner)
            runs.append(run)
            print(f"  {layout.key}: {run.seconds:.1f} s", file=sys.stderr, flush=True)
    print_corpus(runs)
    if args.items_out:
        found = {run.layout.key: run.items for run in runs}
        Path(args.items_out).write_text(json.dumps(found, indent=1, ensure_ascii=False))
    return 0


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--corpus",
        nargs="?",
        const="all",
        metavar="APPS",
        help=f"the corpus of real web software instead ({','.join(APPS)}; default all)",
    )
    parser.add_argument("--layouts", default=None)
    parser.add_argument("--items-out", metavar="FILE", help="with --corpus: each layout's items")
    parser.add_argument("--items", type=int, default=10)
    parser.add_argument("--planner", choices=("offline", "llm", "auto"), default="offline")
    parser.add_argument("--model", default=os.environ.get("TUI_AGENT_MODEL") or None)
    parser.add_argument("--api-base", default=os.environ.get("TUI_AGENT_API_BASE") or None)
    args = parser.parse_args()
    if args.corpus:
        return await corpus_main(args)
    layouts = [name.strip() for name in (args.layouts or ",".join(LAYOUTS)).split(",")]
    layouts = [name for name in layouts if name]
    unknown = [name for name in layouts if name not in LAYOUTS]
    if unknown:
        print(f"unknown layouts: {', '.join(unknown)}", file=sys.stderr)
        return 2
    rows = []
    with DemoSite() as site, tempfile.TemporaryDirectory() as folder:
        for layout in layouts:
            rows.append(await evaluate(layout, site, args, Path(folder)))
            print(f"  {layout}: done", file=sys.stderr, flush=True)
    print_rows(rows)
    return 0 if all(not r.get("error") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
