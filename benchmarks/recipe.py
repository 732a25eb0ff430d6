"""Recipe interpreter speed against a minimal hand-written Playwright script, in one run.

Usage: .venv/bin/python benchmarks/recipe.py [--items 200] [--runs 2] [--layouts panel,navigate]

For each layout of the demo site (served in this process on an ephemeral port), --items items
are extracted by:

  script        a minimal hand-written Playwright script: click the card, wait for its details,
                read the same ten fields in one evaluate (navigate: then go back and wait for
                the list); it knows the site, so it needs no identities and no events
  interpreter   RecipeInterpreter running recipes/demo-<layout>.json (the same clicks and
                reads, plus item identities, bindings and one ToolCall / ToolResult per command)
  recorded      the whole `tui-agent recipe run` agent (Chromium start and page load included)
                recorded into a temporary SQLite store, as the CLI does

Each run gets a fresh Chromium; script and interpreter alternate --runs times and the medians are
compared (items/s, ratio interpreter / script; the aim is >= 0.8x). Both time from a loaded list
page to the last item read; "recorded" is wall time for the whole session.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from playwright.async_api import Page

from tui_agent.agents.recipe_run import recipe_started, run_recipe
from tui_agent.demo_site import DemoSite
from tui_agent.recorder import SessionRecorder
from tui_agent.store import Store
from tui_agent.web.browser import Browser
from tui_agent.web.phase import collect
from tui_agent.web.recipe import RecipeInterpreter, RunOutcome, load_recipe

RECIPES = Path(__file__).resolve().parents[1] / "recipes"
FIELDS = ("title", "price", "currency", "rating", "date", "seller", "category", "tags")
READ_JS = """([root, names]) => {
  const scope = document.querySelector(root);
  const text = (css) => { const el = scope.querySelector(css);
    return el ? el.innerText.replace(/\\s+/g, " ").trim() : null; };
  const out = {};
  for (const name of names) out[name] = text(".field-" + name);
  out.description = text(".field-description");
  return out;
}"""


async def script_panel(page: Page, count: int) -> int:
    cards = page.locator("#product-list li.card")
    slugs = await cards.evaluate_all("(cards) => cards.map((card) => card.dataset.slug)")
    read = 0
    for index, slug in enumerate(slugs[:count]):
        await cards.nth(index).click()
        await page.wait_for_selector(f"#details-panel[data-slug='{slug}']")
        record = await page.evaluate(READ_JS, ["#details-panel", FIELDS])
        record["url"] = await page.get_attribute("#details-panel a.field-url", "href")
        read += 1
    return read


async def script_navigate(page: Page, count: int) -> int:
    cards = page.locator("#product-list li.card")
    read = 0
    for index in range(count):
        await cards.nth(index).click()
        await page.wait_for_selector("#product .field-title")
        record = await page.evaluate(READ_JS, ["#product", FIELDS])
        record["url"] = page.url
        await page.go_back()
        await page.wait_for_selector("#product-list li.card")
        read += 1
    return read


SCRIPTS = {"panel": script_panel, "navigate": script_navigate}


async def timed(site: DemoSite, layout: str, count: int, interpreter: bool) -> float:
    """Seconds from a loaded list page to the last of `count` items read."""
    async with Browser() as browser:
        page = await browser.page()
        await page.goto(site.url(layout))
        await page.wait_for_selector("#product-list li.card")
        began = time.perf_counter()
        if interpreter:
            recipe = load_recipe(RECIPES / f"demo-{layout}.json")
            _, ran = await collect(
                RecipeInterpreter(page, recipe, max_items=count).run(), RunOutcome
            )
            read = len(ran.items)
        else:
            read = await SCRIPTS[layout](page, count)
        elapsed = time.perf_counter() - began
    if read != count:
        sys.exit(f"{layout}: {'interpreter' if interpreter else 'script'} read {read} of {count}")
    return elapsed


async def recorded(site: DemoSite, layout: str, count: int) -> float:
    recipe = load_recipe(RECIPES / f"demo-{layout}.json")
    url = site.url(layout)
    with tempfile.TemporaryDirectory() as folder:
        began = time.perf_counter()
        async with await Store.open(Path(folder) / "bench.db") as store:
            state = await SessionRecorder(store).run(
                recipe_started(recipe, url, count), run_recipe(recipe, url, max_items=count)
            )
        elapsed = time.perf_counter() - began
    if len(state.items) != count:
        sys.exit(f"{layout}: the recorded session has {len(state.items)} of {count} items")
    return elapsed


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--layouts", default="panel,navigate")
    args = parser.parse_args()
    print(f"{args.items} items per run, {args.runs} runs each, medians")
    with DemoSite() as site:
        for layout in args.layouts.split(","):
            script, interpreter = [], []
            for _ in range(args.runs):
                script.append(await timed(site, layout, args.items, interpreter=False))
                interpreter.append(await timed(site, layout, args.items, interpreter=True))
            whole = await recorded(site, layout, args.items)
            script_rate = args.items / statistics.median(script)
            interpreter_rate = args.items / statistics.median(interpreter)
            print(f"{layout}:")
            print(f"  script     {script_rate:6.1f} items/s")
            print(
                f"  interpreter   {interpreter_rate:6.1f} items/s   "
                f"{interpreter_rate / script_rate:.2f}x the script (aim >= 0.8x)"
            )
            print(f"  recorded   {args.items / whole:6.1f} items/s   (whole session, SQLite)")


if __name__ == "__main__":
    asyncio.run(main())
