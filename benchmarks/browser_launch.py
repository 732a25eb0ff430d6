"""Benchmark: Chromium confined (its sandbox on; as root, as the browser user) vs unconfined.

Run: ``.venv/bin/python benchmarks/browser_launch.py [--runs R]``. Each round starts a
Browser, opens a page on a demo-site layout and closes it, once confined (the default) and
once with `sandbox=False` (the old way: Chromium as we are, --no-sandbox), interleaved; then
loads the page R times in one browser of each kind (the file:// route's cost on every
request). Prints the medians and their ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from tui_agent.demo_site import DemoSite
from tui_agent.web.browser import Browser


async def launch_and_load(url: str, *, sandbox: bool) -> float:
    began = time.perf_counter()
    async with Browser(sandbox=sandbox) as browser:
        page = await browser.page()
        await page.goto(url)
    return time.perf_counter() - began


async def loads(url: str, runs: int, *, sandbox: bool) -> list[float]:
    times = []
    async with Browser(sandbox=sandbox) as browser:
        page = await browser.page()
        for _ in range(runs):
            began = time.perf_counter()
            await page.goto(url)
            times.append(time.perf_counter() - began)
    return times


async def main(runs: int) -> None:
    with DemoSite() as site:
        url = site.url("panel")
        started: dict[bool, list[float]] = {True: [], False: []}
        for _ in range(runs):
            for sandbox in (True, False):
                started[sandbox].append(await launch_and_load(url, sandbox=sandbox))
        loaded = {sandbox: await loads(url, runs * 3, sandbox=sandbox) for sandbox in started}
    for what, figures in (("start + first page", started), ("page load", loaded)):
        confined, bare = (statistics.median(figures[s]) * 1000 for s in (True, False))
        print(
            f"{what:<20} confined {confined:7.0f} ms   unconfined {bare:7.0f} ms   "
            f"ratio {confined / bare:.2f}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    asyncio.run(main(parser.parse_args().runs))
