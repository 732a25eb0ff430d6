"""`tui-agent scrape` end to end: real Chromium on the demo shop, a real SQLite store.

The offline planner must find each layout's list, click behaviour, growth and fields on its own
(the demo site's anatomy is never shown to it) and the recipe it leads to must extract the
ground truth: >= 95 % of field values and exactly the expected number of items.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.requirements import require_chromium
from support.sessions import launched

from tui_agent.agents.requests import RequestError, ScrapeRequest
from tui_agent.config import Settings
from tui_agent.demo_site import FIELDS, LAYOUTS, DemoSite
from tui_agent.events import Artifact, ItemsExtracted, LLMCall, PhaseFinished, ToolCall
from tui_agent.recorder import SessionRecorder
from tui_agent.session import SessionState
from tui_agent.store import Store
from tui_agent.web.recipe import load_recipe

pytestmark = pytest.mark.chromium

LIMITS = {
    "panel": 8,
    "navigate": 4,
    "inline": 6,
    "pagination": 30,
    "infinite": 25,
    "loadmore": 25,
    "filter": 8,
    "slow": 6,
    "missing": 12,
    "modal": 6,
    "late": 6,
    "rows": 14,
    "es": 6,
    "facets": 6,
    "dropdown": 6,
    "escape": 4,
    "prose": 4,
}
"""Items asked of each layout: enough to cross a page or a batch where the layout has them."""


@pytest.fixture(scope="module")
def demo_site():
    with DemoSite() as site:
        yield site


def field_accuracy(items: list[dict[str, Any]], truth: list[dict[str, str]]) -> float:
    """Share of the ground truth's field values found, item by item, in the same places."""
    total = found = 0
    for item, record in zip(items, truth, strict=False):
        for name, value in record.items():
            total += 1
            found += item.get(name) == value
    total += sum(len(record) for record in truth[len(items) :])
    return found / total if total else 1.0


async def scrape(tmp_path: Path, url: str, task: str, **options: Any) -> SessionState:
    require_chromium()
    settings = Settings(db=tmp_path / "sessions.db", model=None)
    launch = launched(ScrapeRequest, settings, url=url, task=task, **options)
    async with await Store.open(settings.db) as store:
        return await SessionRecorder(store).run(launch.started, launch.events)


def test_every_demo_layout_is_scraped_here():
    assert set(LIMITS) == set(LAYOUTS)


@pytest.mark.parametrize("layout", list(LIMITS))
async def test_offline_planner_extracts_the_ground_truth_on_every_layout(
    tmp_path, demo_site, layout
):
    limit = LIMITS[layout]
    state = await scrape(
        tmp_path, demo_site.url(layout), f"Extract {limit} items", planner="offline"
    )
    assert state.status == "completed", [e.message for e in state.errors]
    truth = demo_site.ground_truth(layout)[:limit]
    assert len(state.items) == limit
    accuracy = field_accuracy(state.items, truth)
    assert accuracy >= 0.95, (layout, accuracy, state.items[0], truth[0])
    assert [p.name for p in state.phases] == ["load", "plan", "recipe", "list"]
    assert all(p.finished is not None and p.finished.ok for p in state.phases)
    assert state.artifact("strategy") is not None and state.artifact("recipe") is not None
    assert state.llm_calls == 0


async def test_generators_filter_and_sort_the_list_as_the_task_asks(tmp_path, demo_site):
    state = await scrape(
        tmp_path,
        demo_site.url("filter"),
        "Extract 5 kitchen items sorted by price, lowest first",
        planner="offline",
    )
    assert state.status == "completed", [e.message for e in state.errors]
    assert [p.name for p in state.phases][:3] == ["load", "plan", "generators"]
    truth = demo_site.ground_truth("filter", category="kitchen", sort="price-asc")[:5]
    assert field_accuracy(state.items, truth) >= 0.95
    assert {item["category"] for item in state.items} == {"Kitchen"}


async def test_saved_recipe_runs_again_without_any_model(tmp_path, demo_site):
    recipe_path = tmp_path / "panel.json"
    state = await scrape(
        tmp_path,
        demo_site.url("panel"),
        "Extract 3 items",
        planner="offline",
        save_recipe=recipe_path,
    )
    assert state.status == "completed"
    recipe = load_recipe(recipe_path)
    assert json.loads(state.artifact("recipe").content) == recipe.to_json()
    env = {**os.environ, "TUI_AGENT_MODEL": "", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    command = [sys.executable, "-m", "tui_agent", "--db", str(tmp_path / "again.db")]
    command += ["recipe", "run", str(recipe_path), "--url", demo_site.url("panel"), "--json"]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    items = [i for e in events if e["type"] == "items_extracted" for i in e["items"]]
    assert [i["title"] for i in items] == [i["title"] for i in state.items]
    assert not [e for e in events if e["type"] == "llm_call"]


def test_a_scrape_title_names_the_page_path_first(tmp_path, demo_site):
    settings = Settings(db=tmp_path / "s.db", workspace=tmp_path / "w", model=None)
    task = "Extract 3 items"
    panel = launched(ScrapeRequest, settings, url=demo_site.url("panel"), task=task).started
    pages = launched(
        ScrapeRequest, settings, url=demo_site.url("pagination", page=2), task=task
    ).started
    host = demo_site.base_url.removeprefix("http://")
    assert panel.title == f"scrape /panel on {host}: Extract 3 items"
    assert pages.title == f"scrape /pagination?page=2 on {host}: Extract 3 items"


def test_bad_input_is_refused_before_anything_is_recorded(tmp_path, demo_site):
    settings = Settings(db=tmp_path / "sessions.db", model=None)
    url, task = demo_site.url("panel"), "Extract 3 items"
    with pytest.raises(RequestError, match="needs a model") as raised:
        launched(ScrapeRequest, settings, url=url, task=task, planner="llm")
    assert raised.value.field == "model"
    with pytest.raises(RequestError, match="task is empty") as raised:
        launched(ScrapeRequest, settings, url=url, task="  ")
    assert raised.value.field == "task"
    with pytest.raises(RequestError, match="not a loadable URL") as raised:
        launched(ScrapeRequest, settings, url="panel", task=task)
    assert raised.value.field == "url"
    with pytest.raises(RequestError, match="no such folder") as raised:
        launched(
            ScrapeRequest, settings, url=url, task=task, save_recipe=tmp_path / "missing" / "r.json"
        )
    assert raised.value.field == "save_recipe"
    assert not settings.db.exists()


async def test_events_of_a_scrape_are_the_spine(tmp_path, demo_site):
    """Tool calls are paired, items stream one by one, phases carry durations."""
    state = await scrape(tmp_path, demo_site.url("panel"), "Extract 2 items", planner="offline")
    async with await Store.open(tmp_path / "sessions.db") as store:
        recorded = await store.events(state.session_id)
    calls = [e for e in recorded if isinstance(e, ToolCall)]
    assert calls and all(entry.result is not None for entry in state.tool_calls.values())
    assert [len(e.items) for e in recorded if isinstance(e, ItemsExtracted)] == [1, 1]
    assert all(e.duration > 0 for e in recorded if isinstance(e, PhaseFinished))
    assert [e.name for e in recorded if isinstance(e, Artifact)] == ["strategy", "recipe"]
    assert not [e for e in recorded if isinstance(e, LLMCall)]
    assert set(FIELDS) <= set(state.items[0])


async def test_an_error_page_ends_the_session_with_its_status(tmp_path, demo_site):
    state = await scrape(tmp_path, f"{demo_site.base_url}/no-such-layout", "Extract 3 items")
    assert (state.status, state.stopped_reason) == ("failed", "error")
    assert "answered HTTP 404" in state.errors[-1].message
    assert [(p.name, p.finished.ok) for p in state.phases if p.finished] == [("load", False)]
    assert state.items == []
