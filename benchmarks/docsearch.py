"""How long one search_documentation call takes in a warm sandbox, against running `1 + 1` there.

Usage: .venv/bin/python benchmarks/docsearch.py [--runs 10] [--backends docker,bubblewrap]

For each backend that works here: a sandbox is started and warmed with `1 + 1`; the baseline is
the p50 of --runs round trips of `1 + 1` in it. Then, for each search below: the first call (which
imports the library into the sandbox) and the p50 and max of --runs calls after it, each as a
ratio to the baseline, with the size of the answer.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from tui_agent.agents.task.docsearch import doc_search_request
from tui_agent.sandbox.base import Sandbox
from tui_agent.sandbox.choose import BACKENDS, backend_status
from tui_agent.sandbox.limits import Limits
from tui_agent.sandbox.wire import ExecuteRequest

SEARCHES = (
    ("pandas", "read csv file"),
    ("fitz", "extract text from a page"),
    ("pypdf", "extract text"),
)
TRIVIAL = ExecuteRequest(code="1 + 1")


async def timed(sandbox: Sandbox, request: ExecuteRequest) -> tuple[float, object]:
    began = time.perf_counter()
    result = await sandbox.execute(request)
    took = time.perf_counter() - began
    if not result.success:
        raise SystemExit(f"{sandbox.name}: the run failed: {result.error}")
    return took, result.result


async def backend_section(name: str, runs: int) -> None:
    status = backend_status(name)
    if not status.ok:
        print(f"\n[{name}] skipped: {status.reason}")
        return
    with tempfile.TemporaryDirectory(prefix="tui-agent-bench-") as folder:
        limits = Limits(workspace_quota_mb=0)
        async with BACKENDS[name](workspace=Path(folder), limits=limits) as sandbox:
            await timed(sandbox, TRIVIAL)
            baseline = statistics.median([(await timed(sandbox, TRIVIAL))[0] for _ in range(runs)])
            print(f"\n[{name}] baseline: `1 + 1` in the warm sandbox, p50 {baseline * 1000:.1f} ms")
            for library, query in SEARCHES:
                request = doc_search_request(library, query)
                first, answer = await timed(sandbox, request)
                again = [(await timed(sandbox, request))[0] for _ in range(runs)]
                p50 = statistics.median(again)
                print(
                    f"  {library:7} {query!r:28} first {first * 1000:7.1f} ms"
                    f" = {first / baseline:6.1f}x   then p50 {p50 * 1000:7.1f} ms"
                    f" = {p50 / baseline:6.1f}x  max {max(again) * 1000:7.1f} ms"
                    f"   answer {len(str(answer))} chars"
                )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--backends", default="docker,bubblewrap")
    args = parser.parse_args()
    for name in args.backends.split(","):
        await backend_section(name.strip(), args.runs)


if __name__ == "__main__":
    asyncio.run(main())
