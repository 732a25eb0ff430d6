"""`tui-agent scrape --planner llm|auto` with the scripted model: its tool calls really run.

The model's part is scripted (an OpenAI-compatible server on loopback reached through litellm);
the probes it asks for run in real Chromium on the demo shop, a selector it never verified is
refused, and the recipe it writes is dry-run and then extracts the ground truth.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.requirements import require_chromium
from support.scripted_model import ScriptedModel, ToolCallReply, text, tool_calls
from support.sessions import launched

from tui_agent.agents.requests import RecipeRunRequest, ScrapeRequest
from tui_agent.config import Settings
from tui_agent.demo_site import PRODUCTS, PROSE_FACTS, DemoSite, prose_facts
from tui_agent.events import LLMCall, Log
from tui_agent.recorder import SessionRecorder
from tui_agent.session import SessionState
from tui_agent.store import Store
from tui_agent.web.recipe import load_recipe

pytestmark = pytest.mark.chromium

RECIPES = Path(__file__).resolve().parents[2] / "recipes"
STRATEGIES = {
    "panel": """
- LIST_ITEM: `li.card`
- CLICK_BEHAVIOR: shows_panel
- DETAILS_PANEL: `#details-panel`
- DETAILS_FIELDS:
  - title: `#details-panel .field-title`
  - price: `#details-panel .field-price`
  - seller: `#details-panel .seller-name-guess`
""",
    "navigate": """
- LIST_ITEM: `li.card`
- CLICK_BEHAVIOR: navigates
- DETAILS_PANEL: `#product`
- DETAILS_FIELDS:
  - title: `#product .field-title`
  - price: `#product .field-price`
  - seller: `#product .seller-name-guess`
""",
    "inline": """
- LIST_ITEM: `li.card`
- CLICK_BEHAVIOR: inline
- DETAILS_PANEL: `.card-details`
- DETAILS_FIELDS:
  - price: `li.card .card-details .field-price`
  - seller: `li.card .card-details .seller-name-guess`
""",
}
"""Per layout: the selectors the scripted model reports; `.seller-name-guess` it never verified."""


def answer_for(layout: str) -> str:
    """The scripted model's final answer for `layout`, in the spec's format."""
    return (
        "I know enough now.\n\n## PAGE UNDERSTANDING\n- A shop listing products as cards\n\n"
        f"## STRATEGY\n\n### VERIFIED SELECTORS\n{STRATEGIES[layout].strip()}\n"
        "- PAGINATION_BUTTON: none\n\n### AUTOMATION PLAN\n1. Click each card and read it\n"
        "2. NEEDED GENERATORS: None\n"
    )


@pytest.fixture(scope="module")
def demo_site():
    with DemoSite() as site:
        yield site


async def scrape(tmp_path: Path, model: ScriptedModel, url: str, **options: Any) -> SessionState:
    require_chromium()
    settings = Settings(
        db=tmp_path / "sessions.db", model=ScriptedModel.model(), api_base=model.api_base
    )
    launch = launched(ScrapeRequest, settings, url=url, task="Extract 3 items", **options)
    async with await Store.open(settings.db) as store:
        return await SessionRecorder(store).run(launch.started, launch.events)


@pytest.mark.parametrize(
    ("layout", "behavior"),
    [("panel", "shows_panel"), ("navigate", "navigates"), ("inline", "inline")],
)
async def test_llm_planner_probes_the_page_and_its_unverified_selector_is_refused(
    tmp_path, demo_site, layout, behavior
):
    recipe = json.loads((RECIPES / f"demo-{layout}.json").read_text())
    replies = [
        tool_calls(ToolCallReply("probe_click", {"selector": "li.card"})),
        tool_calls(ToolCallReply("scroll_and_observe", {"target": "page"})),
        text(answer_for(layout)),
        text(answer_for(layout)),  # sent back to verify `.seller-name-guess`; it insists: dropped
        text(json.dumps(recipe)),
    ]
    with ScriptedModel(replies) as model:
        state = await scrape(tmp_path, model, demo_site.url(layout), planner="llm")
        assert model.remaining == 0
        first = model.requests[0]
    assert state.status == "completed", [e.message for e in state.errors]
    assert first.tools  # the probes are offered as tools
    names = [entry.call.name for entry in state.tool_calls.values()]
    assert names[:2] == ["probe_click", "scroll_and_observe"]
    clicked = next(iter(state.tool_calls.values())).result
    assert clicked is not None and clicked.facts["behavior"] == behavior
    warnings = [e.message for e in state.timeline if isinstance(e, Log) and e.level == "warning"]
    assert any("refused unverified selector" in w and "seller-name-guess" in w for w in warnings)
    strategy = state.artifact("strategy")
    assert strategy is not None and "seller-name-guess" not in strategy.content
    assert strategy.origin.startswith("model planner")
    assert [item["title"] for item in state.items] == [
        record["title"] for record in demo_site.ground_truth(layout)[:3]
    ]
    assert state.llm_calls == len(replies) and state.total_tokens > 0


async def test_auto_planner_gives_the_model_the_offline_findings(tmp_path, demo_site):
    recipe = json.loads((RECIPES / "demo-panel.json").read_text())
    answer = answer_for("panel")
    with ScriptedModel([text(answer), text(answer), text(json.dumps(recipe))]) as model:
        state = await scrape(tmp_path, model, demo_site.url("panel"), planner="auto")
        planner_prompt = model.requests[0].messages[-1]["content"]
    assert state.status == "completed", [e.message for e in state.errors]
    # The offline planner ran first and its verified selectors count for the model too.
    assert any(call.startswith("offline-") for call in state.tool_calls)
    assert "li.card" in planner_prompt and "hint" in planner_prompt.lower()
    assert len(state.items) == 3


# --- details told in prose: the model reads their fields, priced, cached ----------------------

PROSE_STRATEGY = """I know enough now.

## PAGE UNDERSTANDING
- A list of stories; each links to a page that tells the product in sentences.

## STRATEGY

### VERIFIED SELECTORS
- LIST: `ul.stories`
- LIST_ITEM: `ul.stories > li`
- CLICK_BEHAVIOR: navigates
- CLICK_TARGET: `a`
- DETAILS_PANEL: `#catalog`
- DETAILS_LOADED: `#catalog h1`
- DETAILS_FIELDS:
  - title: `#catalog h1`
- ITEM_FIELDS:
  - url: `a` @href
- PAGINATION_BUTTON: none

### AUTOMATION PLAN
1. Click each story's link and read its page
2. NEEDED GENERATORS: None
"""
PROSE_RECIPE = {
    "bindings": {
        "LIST": "ul.stories",
        "LIST_ITEM": "ul.stories > li",
        "CLICK_BEHAVIOR": "navigates",
        "DETAILS_PANEL": "#catalog",
        "DETAILS_LOADED": {"exists": "#catalog h1"},
        "DETAILS_FIELDS": {"title": "#catalog h1"},
        "ITEM_FIELDS": {"url": {"selector": "a", "attribute": "href"}},
    },
    "recipe": {
        "commands": [
            {"type": "WAIT_FOR", "target": "page"},
            {"type": "WAIT_FOR", "target": "list"},
            {
                "type": "FOR_EACH_ITEM_IN_LIST",
                "body": [
                    {"type": "CLICK", "selector": "a", "within": "item"},
                    {"type": "WAIT_FOR", "target": "details"},
                    {"type": "EXTRACT_DETAILS"},
                    {"type": "SAVE", "as": "item"},
                    {"type": "MARK_DONE"},
                ],
            },
            {"type": "END"},
        ]
    },
}
SCHEMA = {
    "price": "the price with its currency sign",
    "seller": "who offers it",
    "date": "when it went on sale",
    "rating": "its rating out of 5",
}


async def test_prose_details_are_parsed_by_the_model_priced_and_cached(tmp_path, demo_site):
    require_chromium()
    facts = [prose_facts(product) for product in PRODUCTS[:4]]
    replies = [text(PROSE_STRATEGY), text(json.dumps(PROSE_RECIPE)), text(json.dumps(SCHEMA))]
    replies += [text(json.dumps(fact)) for fact in facts]  # dry run: 2 items; the run: 2 more
    recipe_path = tmp_path / "prose.json"
    url = demo_site.url("prose")
    with ScriptedModel(replies) as model:
        settings = Settings(
            db=tmp_path / "sessions.db", model=ScriptedModel.model("gpt-4o-mini"),
            api_base=model.api_base,
        )  # fmt: skip
        launch = launched(
            ScrapeRequest, settings, url=url, task="Extract 4 items", planner="auto",
            save_recipe=recipe_path,
        )  # fmt: skip
        async with await Store.open(settings.db) as store:
            state = await SessionRecorder(store).run(launch.started, launch.events)
            recorded = await store.events(state.session_id)
        assert model.remaining == 0
        schema_prompt = model.requests[2].messages[-1]["content"]
    assert state.status == "completed", [e.message for e in state.errors]
    truth = demo_site.ground_truth("prose")[:4]
    assert [{k: item[k] for k in ("title", "url")} for item in state.items] == truth
    assert [{k: item[k] for k in PROSE_FACTS} for item in state.items] == facts
    assert "Offered by Northwind Goods for $4.99" in schema_prompt  # the details' own text
    calls = [e for e in recorded if isinstance(e, LLMCall)]
    parsed = [call for call in calls if call.purpose == "details fields"]
    assert [call.cached for call in parsed] == [False, False, True, True, False, False]
    assert all(call.cost and call.cost > 0 for call in parsed if not call.cached)
    assert all(call.cost == 0 and call.prompt_tokens == 0 for call in parsed if call.cached)
    saved = load_recipe(recipe_path)
    assert saved.bindings.DETAILS_SCHEMA == SCHEMA
    # Run again: every details text was parsed before, so the model is not asked at all.
    with ScriptedModel([]) as model:
        again_settings = settings.model_copy(update={"api_base": model.api_base})
        launch = launched(
            RecipeRunRequest, again_settings, recipe=str(recipe_path), url=url, max_items=4
        )
        async with await Store.open(settings.db) as store:
            again = await SessionRecorder(store).run(launch.started, launch.events)
        assert model.requests == []
    assert again.status == "completed"
    assert [{k: item[k] for k in PROSE_FACTS} for item in again.items] == facts
    # Without a model the same recipe keeps each item's text, unparsed, and says so.
    offline = settings.model_copy(update={"model": None})
    launch = launched(RecipeRunRequest, offline, recipe=str(recipe_path), url=url, max_items=2)
    async with await Store.open(settings.db) as store:
        plain = await SessionRecorder(store).run(launch.started, launch.events)
    assert plain.status == "completed" and plain.llm_calls == 0
    assert all(item.get("price") is None and item["text"] for item in plain.items)
    said = [e.message for e in plain.timeline if isinstance(e, Log)]
    assert any("no model is configured: the text is kept unparsed" in m for m in said)


async def test_offline_scrapes_of_prose_never_parse(tmp_path, demo_site):
    require_chromium()
    settings = Settings(db=tmp_path / "sessions.db", model=None)
    launch = launched(
        ScrapeRequest, settings, url=demo_site.url("prose"), task="Extract 3 items",
        planner="offline",
    )  # fmt: skip
    async with await Store.open(settings.db) as store:
        state = await SessionRecorder(store).run(launch.started, launch.events)
    assert state.status == "completed" and state.llm_calls == 0
    assert [{k: i[k] for k in ("title", "url")} for i in state.items] == (
        demo_site.ground_truth("prose")[:3]
    )
    recipe = json.loads(state.artifact("recipe").content)
    assert "DETAILS_SCHEMA" not in recipe["bindings"]
