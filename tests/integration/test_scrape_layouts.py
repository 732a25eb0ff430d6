"""`tui-agent scrape --planner offline` on the layouts real sites use, in real Chromium.

Each demo layout here is written in its own style (a list filled seconds after load, items
spread over table rows behind a positional pager, Spanish labels, facet links, checkboxes,
sort buttons, a click-to-open menu, radio buttons, a dialog only Escape closes): the offline
planner finds its way on its own and the items equal the ground truth. A next page that fails
ends the session `partial`, keeping every item, through the real CLI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from support.requirements import require_chromium
from support.sessions import launched

from tui_agent.agents.requests import RecipeRunRequest, RequestError, ScrapeRequest
from tui_agent.agents.scrape import ScrapeAgent, TaskReading
from tui_agent.config import Settings
from tui_agent.demo_site import ES_FIELDS, ROWS_PAGE_SIZE, DemoSite
from tui_agent.events import Artifact, LLMCall, Log
from tui_agent.llm.client import LLM, RetryPolicy
from tui_agent.recorder import SessionRecorder
from tui_agent.session import SessionState
from tui_agent.store import Store
from tui_agent.web.phase import collect
from tui_agent.web.plan import parse_strategy

pytestmark = pytest.mark.chromium


@pytest.fixture(scope="module")
def demo_site():
    with DemoSite() as site:
        yield site


async def scrape(tmp_path: Path, url: str, task: str, **options: Any) -> SessionState:
    require_chromium()
    settings = Settings(db=tmp_path / "sessions.db", model=None)
    launch = launched(ScrapeRequest, settings, url=url, task=task, planner="offline", **options)
    async with await Store.open(settings.db) as store:
        return await SessionRecorder(store).run(launch.started, launch.events)


def logs(state: SessionState, level: str | None = None) -> list[str]:
    return [
        e.message
        for e in state.timeline
        if isinstance(e, Log) and (level is None or e.level == level)
    ]


def recipe_of(state: SessionState) -> dict[str, Any]:
    artifact = state.artifact("recipe")
    assert artifact is not None
    return json.loads(artifact.content)


# --- content rendered late, with no spinner -------------------------------------------------


async def test_a_list_rendered_seconds_after_load_is_waited_for_visibly(tmp_path, demo_site):
    state = await scrape(tmp_path, demo_site.url("late"), "Extract 5 items")
    assert state.status == "completed", [e.message for e in state.errors]
    truth = demo_site.ground_truth("late")[:5]
    assert [
        {k: item.get(k) for k in record} for item, record in zip(state.items, truth, strict=True)
    ] == truth
    waiting = [m for m in logs(state) if m.startswith("waiting for the page to render: ")]
    assert len(waiting) >= 2  # about one a second, while the page's request is open
    assert any("1 request open" in m for m in waiting)
    assert any(m.startswith("the page rendered after ") for m in logs(state))


async def test_a_wait_too_short_for_the_page_says_so(tmp_path, demo_site):
    state = await scrape(tmp_path, demo_site.url("late"), "Extract 5 items", wait=1.0)
    assert (state.status, state.stopped_reason) == ("failed", "error")
    message = state.errors[-1].message
    assert message.startswith(
        f"no strategy: no repeated list of items found on {demo_site.url('late')}"
    )
    assert "only navigation menus" in message  # the header's links are never the items
    assert "it was still busy: a longer --wait may help" in message


# --- items spread over two table rows, a pager row, a sidebar cell -------------------------


async def test_two_row_items_cross_pages_by_the_next_links_text(tmp_path, demo_site):
    limit = 2 * ROWS_PAGE_SIZE + 5
    recipe_path = tmp_path / "rows.json"
    url = demo_site.url("rows")
    state = await scrape(tmp_path, url, f"Extract {limit} items", save_recipe=recipe_path)
    assert state.status == "completed", [e.message for e in state.errors]
    assert state.items and len(state.items) == limit
    truth = demo_site.ground_truth("rows")[:limit]
    assert [
        {k: item.get(k) for k in record} for item, record in zip(state.items, truth, strict=True)
    ] == truth
    texts = [item["text"] for item in state.items]
    assert not any("Next" in text or "Previous" in text for text in texts)  # no pager row
    assert not any("Popular tags" in text for text in texts)  # nor the sidebar
    bindings = recipe_of(state)["bindings"]
    assert bindings["LIST_ITEM_SIBLINGS"]  # the seller-and-tags row belongs to the item
    assert bindings["NEXT_PAGE_TEXT"] == "Next →"
    assert "nth-" not in bindings["NEXT_PAGE_BUTTON"] and "nth-" not in bindings["LIST_ITEM"]
    strategy = parse_strategy(state.artifact("strategy").content)
    assert strategy.pagination_text == "Next →"
    assert {"seller", "tags"} <= set(strategy.item_fields)  # read in the item's second row
    # The saved recipe runs again without any planning, over every page to the last.
    settings = Settings(db=tmp_path / "again.db", model=None)
    launch = launched(RecipeRunRequest, settings, recipe=str(recipe_path), url=url, max_items=100)
    async with await Store.open(settings.db) as store:
        again = await SessionRecorder(store).run(launch.started, launch.events)
    assert (again.status, again.stopped_reason) == ("completed", "list_exhausted")
    assert [item["title"] for item in again.items] == [
        record["title"] for record in demo_site.ground_truth("rows")
    ]


# --- Spanish labels and a Spanish task ------------------------------------------------------


async def test_a_spanish_shop_read_with_a_spanish_task(tmp_path, demo_site):
    task = "Extrae 8 productos de la categoría Cocina, ordenados por precio de menor a mayor"
    state = await scrape(tmp_path, demo_site.url("es"), task)
    assert state.status == "completed", [e.message for e in state.errors]
    assert len(state.items) == 8  # the count the Spanish task asked for
    truth = demo_site.ground_truth("es", categoria="kitchen", orden="price-asc")[:8]
    assert [{k: item.get(k) for k in ES_FIELDS} for item in state.items] == truth
    assert {"categoría", "año_de_publicación", "precio", "vendedor"} <= set(state.items[0])
    assert [p.name for p in state.phases] == ["load", "plan", "generators", "recipe", "list"]


# --- filters and sorts beyond <select> ------------------------------------------------------


async def test_facet_links_checkboxes_and_a_sort_button(tmp_path, demo_site):
    task = "Extract 6 outdoor eco products sorted by price, lowest first"
    state = await scrape(tmp_path, demo_site.url("facets"), task)
    assert state.status == "completed", [e.message for e in state.errors]
    truth = demo_site.ground_truth("facets", category="outdoor", tag="eco", sort="price-asc")
    assert [item["title"] for item in state.items] == [r["title"] for r in truth[:6]]
    strategies = [e for e in state.timeline if isinstance(e, Artifact) and e.name == "strategy"]
    assert [s.version for s in strategies] == [1, 2]
    shapes = json.loads(strategies[1].content.split("```json\n")[1].split("\n```")[0])
    assert {shape["generator"] for shape in shapes} == {"FilterGenerator", "SortGenerator"}
    by_option = {shape["filterOption"]: shape for shape in shapes}
    assert by_option["eco"]["fragment"][0] == {
        "type": "CLICK",
        "selector": 'input[name="tag"][value="eco"]',
    }
    assert by_option["/facets?category=outdoor"]["fragment"][0]["text"] == "Outdoor (60)"
    assert by_option["price-asc"]["filterTarget"] == "div.sort-bar"
    for shape in shapes:  # each waits for the list to change after its click
        assert shape["fragment"][-1] == {"type": "WAIT_FOR", "target": "list", "changed": True}


async def test_a_click_to_open_dropdown_and_sort_radio_buttons(tmp_path, demo_site):
    state = await scrape(
        tmp_path, demo_site.url("dropdown"), "Extract 5 Kitchen items, best rated first"
    )
    assert state.status == "completed", [e.message for e in state.errors]
    truth = demo_site.ground_truth("dropdown", category="kitchen", sort="rating")[:5]
    assert [
        {k: item.get(k) for k in record} for item, record in zip(state.items, truth, strict=True)
    ] == truth
    commands = recipe_of(state)["recipe"]["commands"]
    assert commands[2:6] == [  # the menu opened, waited for, its entry clicked, the list changed
        {"type": "CLICK", "selector": "button.picker-toggle"},
        {"type": "WAIT_FOR", "condition": {"exists": "#category-menu"}},
        {"type": "CLICK", "selector": 'li[data-value="kitchen"]'},
        {"type": "WAIT_FOR", "target": "list", "changed": True},
    ]
    assert {"type": "CLICK", "selector": 'input[name="order"][value="rating"]'} in commands


# --- details only Escape closes ---------------------------------------------------------------


async def test_a_dialog_only_escape_closes_is_closed_by_escape(tmp_path, demo_site):
    state = await scrape(tmp_path, demo_site.url("escape"), "Extract 5 items")
    assert state.status == "completed", [e.message for e in state.errors]
    truth = demo_site.ground_truth("escape")[:5]
    assert [
        {k: item.get(k) for k in record} for item, record in zip(state.items, truth, strict=True)
    ] == truth
    assert recipe_of(state)["bindings"]["CLOSE_DETAILS"] == {"key": "Escape"}
    assert "- CLOSE_DETAILS: PRESS Escape" in state.artifact("strategy").content
    assert logs(state, "warning") == []


# --- a task in a language the patterns do not read -------------------------------------------


async def test_a_task_in_another_language_is_read_by_the_model(demo_site):
    from support.scripted_model import ScriptedModel, text

    answer = {"max_items": 7, "filters": ["kitchen"], "sort": "price_asc", "search": None}
    with ScriptedModel([text("Sure:\n" + json.dumps(answer))]) as model:
        llm = LLM(model.model(), api_base=model.api_base, retry=RetryPolicy(attempts=1))
        agent = ScrapeAgent(
            demo_site.url("filter"), "Estrai 7 prodotti da cucina, i meno cari prima", llm=llm,
            max_items=None,
        )  # fmt: skip
        events, reading = await collect(agent._read_task(), TaskReading)
        assert "Estrai 7 prodotti" in model.requests[0].messages[-1]["content"]
    assert [type(e) for e in events] == [LLMCall, Log]
    assert (reading.intent.max_items, reading.intent.filters, reading.intent.sort) == (
        7, ["kitchen"], "price_asc"
    )  # fmt: skip
    assert reading.max_items == 7
    english = ScrapeAgent(demo_site.url("filter"), "Extract 7 kitchen items", llm=llm, max_items=7)
    events, reading = await collect(english._read_task(), TaskReading)
    assert events == [] and reading.max_items == 7  # read offline, no call


def test_bad_wait_and_parse_details_are_refused_before_anything_is_recorded(tmp_path, demo_site):
    settings = Settings(db=tmp_path / "sessions.db", model=None)
    task = "Extract 3 items"
    with pytest.raises(RequestError, match="wait must be more than 0") as raised:
        launched(ScrapeRequest, settings, url=demo_site.url("late"), task=task, wait=0)
    assert raised.value.field == "wait"
    with pytest.raises(RequestError, match="parse_details needs a model") as raised:
        launched(ScrapeRequest, settings, url=demo_site.url("prose"), task=task, parse_details=True)
    assert raised.value.field == "model"
    assert not settings.db.exists()


# --- a failure on page N: partial, every item kept -----------------------------------------

PAGE = """<!doctype html><html><head><meta charset="utf-8"></head><body>
<h1>Jobs, page {n}</h1><table class="jobs"><tbody>
{rows}<tr><td colspan="2">{pager}</td></tr></tbody></table></body></html>"""
RECIPE = {
    "bindings": {
        "LIST": "table.jobs tbody",
        "LIST_ITEM": "table.jobs tr:has(td.role)",
        "CLICK_BEHAVIOR": "inline",
        "ITEM_FIELDS": {"title": "td.role"},
        "NEXT_PAGE_BUTTON": "table.jobs a",
        "NEXT_PAGE_TEXT": "Next →",
    },
    "recipe": {
        "id": "jobs",
        "name": "jobs",
        "commands": [
            {"type": "WAIT_FOR", "target": "list"},
            {
                "type": "REPEAT",
                "body": [
                    {
                        "type": "FOR_EACH_ITEM_IN_LIST",
                        "body": [
                            {"type": "EXTRACT_DETAILS"},
                            {"type": "SAVE", "as": "item"},
                            {"type": "MARK_DONE"},
                        ],
                    },
                    {"type": "CLICK_IF_EXISTS", "target": "next_page", "timeout": 2000},
                ],
            },
            {"type": "END"},
        ],
    },
}


@pytest.fixture
def job_site(tmp_path):
    """Two pages of jobs whose "Next →" on page 2 leads to a page that is not there."""
    root = tmp_path / "site"
    root.mkdir()
    for n in (1, 2):
        rows = "".join(
            f'<tr><td class="role">Job {n}.{i}</td><td>Lyon</td></tr>' for i in range(1, 4)
        )
        previous = f'<a href="p{n - 1}.html">← Previous</a> | ' if n > 1 else ""
        pager = previous + f'<a href="p{n + 1}.html">Next →</a>'
        (root / f"p{n}.html").write_text(PAGE.format(n=n, rows=rows, pager=pager))
    handler = partial(SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a: None  # type: ignore[attr-defined]
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/p1.html"
    server.shutdown()
    server.server_close()


def test_a_failing_next_page_ends_the_session_partial_with_every_item(tmp_path, job_site):
    require_chromium()
    recipe = tmp_path / "jobs.json"
    recipe.write_text(json.dumps(RECIPE))
    env = {**os.environ, "TUI_AGENT_CONFIG_FILE": str(tmp_path / "none.toml")}
    base = [sys.executable, "-m", "tui_agent", "--db", str(tmp_path / "s.db")]
    done = subprocess.run(
        [*base, "recipe", "run", str(recipe), "--url", job_site, "--wait", "2", "--headless"],
        capture_output=True, text=True, env=env, timeout=300, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.startswith("tui-agent: session partial: page 3: the next page shows no")
    assert "■ partial (error)" in done.stdout and "6 items kept; page 3:" in done.stdout
    listing = subprocess.run(
        [*base, "sessions", "list", "--json"], capture_output=True, text=True, env=env, timeout=60
    )
    [summary] = [json.loads(line) for line in listing.stdout.splitlines()]
    assert (summary["status"], summary["item_count"]) == ("partial", 6)
    shown = subprocess.run(
        [*base, "sessions", "show", summary["session_id"], "--json"],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    report = json.loads(shown.stdout)
    assert [item["title"] for item in report["items"]] == [
        f"Job {n}.{i}" for n in (1, 2) for i in (1, 2, 3)
    ]
