"""Semantic-cache matcher: precision, recall and time per lookup, against unguarded fuzzy matching.

Run: ``.venv/bin/python benchmarks/task_similarity.py [--rounds R]``. Over the labelled pairs
in tests/unit/task_paraphrases.py, each task A is matched against its B alone: a hit on a
same-task pair counts toward recall, a hit on a near-miss is a wrong hit (precision). The
baseline, measured in the same run, is `rapidfuzz.fuzz.token_sort_ratio >= T` on lower-cased
text with no guards, at several T. Time per lookup is one `best_match` of each A against all
B texts (a cache with ~100 entries of the same schema and model), cold (normalisation caches
cleared before every lookup) and warm (entries already normalised), against the baseline's
`rapidfuzz.process.extractOne` over the same candidates; medians of R rounds of process CPU time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from rapidfuzz import fuzz, process, utils

from tui_agent.agents.task import similarity
from tui_agent.agents.task.similarity import DEFAULT_THRESHOLD, best_match

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "unit"))
from task_paraphrases import PAIRS

BASELINE_THRESHOLDS = (70, 80, 90, 95)


def scores(matches: Callable[[str, str], bool]) -> tuple[float, float, int]:
    """Precision, recall and number of wrong hits of a pairwise matcher over PAIRS."""
    hits = [(matches(a, b), same) for a, b, same in PAIRS]
    right = sum(hit and same for hit, same in hits)
    wrong = sum(hit and not same for hit, same in hits)
    found = right + wrong
    return (right / found if found else 1.0), right / sum(s for *_, s in PAIRS), wrong


def baseline(threshold: float) -> Callable[[str, str], bool]:
    def matches(a: str, b: str) -> bool:
        return fuzz.token_sort_ratio(a, b, processor=utils.default_process) >= threshold

    return matches


def cpu_per_lookup(lookup: Callable[[str], object], queries: list[str], cold: bool) -> float:
    """Microseconds of process CPU time per lookup over all queries."""
    total = 0.0
    for query in queries:
        if cold:
            similarity._normalised.cache_clear()
            similarity._canonical.cache_clear()
        start = time.process_time()
        lookup(query)
        total += time.process_time() - start
    return total / len(queries) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    same = sum(s for *_, s in PAIRS)
    print(f"{len(PAIRS)} pairs: {same} same task, {len(PAIRS) - same} near-misses")
    print(f"{'matcher':<40} {'precision':>9} {'recall':>7} {'wrong hits':>10}")
    rows = [
        (f"best_match (threshold {DEFAULT_THRESHOLD:g})", lambda a, b: bool(best_match(a, [b])))
    ]
    rows += [(f"token_sort_ratio >= {t} (baseline)", baseline(t)) for t in BASELINE_THRESHOLDS]
    for name, matches in rows:
        precision, recall, wrong = scores(matches)
        print(f"{name:<40} {precision:>9.3f} {recall:>7.3f} {wrong:>10}")

    queries = [a for a, _, _ in PAIRS]
    candidates = [b for _, b, _ in PAIRS]

    def guarded(query: str) -> object:
        return best_match(query, candidates)

    def plain(query: str) -> object:
        return process.extractOne(
            query, candidates, scorer=fuzz.token_sort_ratio, processor=utils.default_process
        )

    times = {
        name: statistics.median(cpu_per_lookup(fn, queries, cold) for _ in range(rounds))
        for name, fn, cold in [
            ("baseline", plain, False),
            ("cold", guarded, True),
            ("warm", guarded, False),
        ]
    }
    print(f"\nper lookup over {len(candidates)} candidates (median of {rounds} rounds, CPU):")
    print(f"  baseline extractOne        {times['baseline']:9.1f} us   1.0x")
    for kind in ("cold", "warm"):
        ratio = times[kind] / times["baseline"]
        print(f"  best_match, {kind} caches    {times[kind]:9.1f} us  {ratio:5.1f}x")


if __name__ == "__main__":
    main()
