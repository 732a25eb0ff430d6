"""Benchmark: `analyze_output` on 100,000 records x 10 fields vs one `json.dumps` of them.

Run: ``.venv/bin/python benchmarks/analysis.py [--items N] [--runs R]``. The two are timed in
R interleaved rounds, by wall clock and by process CPU time (steadier on a busy machine);
prints the best and median of each and their ratios (issue 2 aims at <= 2x).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from tui_agent.analysis import analyze_output

WORDS = ["oak", "lamp", "steel", "chair", "blue", "desk", "linen", "brass", "sofa", "glass"]


def build_items(count: int, seed: int = 2) -> list[dict[str, Any]]:
    """`count` deterministic product-like records with 10 top-level fields of mixed kinds.

    Kinds: int id, text title, float price, bool, url, ISO date, sparse float rating, list of
    tags, a nested seller dict (flattened to two fields) and an sku mixing text, numbers and
    blanks.
    """
    rng = random.Random(seed)
    items = []
    for i in range(count):
        items.append(
            {
                "id": i,
                "title": " ".join(rng.choices(WORDS, k=3)),
                "price": round(rng.uniform(1, 500), 2),
                "in_stock": rng.random() < 0.6,
                "url": f"https://shop.example.com/p/{i}",
                "published": f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                "rating": rng.choice([None, 1.5, 3.0, 4.5, 5]),
                "tags": rng.sample(WORDS, rng.randint(0, 3)),
                "seller": {"name": rng.choice(WORDS), "url": f"https://example.com/s/{i % 97}"},
                "sku": rng.choice([f"SKU-{i}", i, "", "  "]),
            }
        )
    return items


def timed(work: Callable[[], object]) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one call of `work`."""
    wall, cpu = time.perf_counter(), time.process_time()
    work()
    return time.perf_counter() - wall, time.process_time() - cpu


def report(clock: str, dumps: list[float], analyze: list[float]) -> None:
    """Print best and median of both and the two ratios for one clock."""
    best = min(analyze) / min(dumps)
    median = statistics.median(analyze) / statistics.median(dumps)
    print(
        f"{clock}: json.dumps best {min(dumps):.3f} s / median {statistics.median(dumps):.3f} s;"
        f" analyze_output best {min(analyze):.3f} s / median {statistics.median(analyze):.3f} s;"
        f" ratio best {best:.2f}x, median {median:.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    items = build_items(args.items)
    analysis = analyze_output(items)
    print(f"{args.items:,} records, {len(analysis.fields)} fields after flattening (aim <= 2x)")
    dumps: list[tuple[float, float]] = []
    analyze: list[tuple[float, float]] = []
    for _ in range(args.runs):  # interleaved, so both see the same machine load
        dumps.append(timed(lambda: json.dumps(items)))
        analyze.append(timed(lambda: analyze_output(items)))
    for index, clock in enumerate(("wall", "cpu ")):
        report(clock, [t[index] for t in dumps], [t[index] for t in analyze])


if __name__ == "__main__":
    main()
