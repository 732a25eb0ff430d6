"""The recipe generator in real Chromium: every demo layout, the offline repair, a scripted model.

Strategies are written here from the demo site's anatomy (the truth about its selectors), as a
planner that did its job would hand them over.
"""

import json
from pathlib import Path
from typing import Any

import pytest
from support.scripted_model import ScriptedModel, text

from tui_agent.demo_site import FIELDS
from tui_agent.demo_site.anatomy import ANATOMY, CARD_LAYOUTS, ITEM, ITEM_LINK, LIST, PANEL
from tui_agent.events import Event, ItemsExtracted, LLMCall, Log, ToolCall, ToolResult
from tui_agent.llm.client import LLM, RetryPolicy
from tui_agent.web.browser import Browser
from tui_agent.web.generate import RecipeOutcome, RecipeWriter
from tui_agent.web.generate.recipe_writer import build_recipe
from tui_agent.web.phase import collect
from tui_agent.web.plan import Fragment, Strategy, StrategyField
from tui_agent.web.recipe import RecipeInterpreter, RunOutcome

pytestmark = [pytest.mark.chromium, pytest.mark.asyncio(loop_scope="module")]

RECIPES = Path(__file__).resolve().parents[2] / "recipes"

FILTER_QUERY = {"category": "kitchen", "sort": "price-asc", "q": "oak"}
FILTER_FRAGMENTS = [
    Fragment(
        generator="FilterGenerator",
        description="Kitchen only",
        target="select[name=category]",
        option="kitchen",
        commands=[{"type": "SELECT", "selector": "select[name=category]", "value": "kitchen"}],
        verified=True,
    ),
    Fragment(
        generator="SortGenerator",
        description="cheapest first",
        commands=[{"type": "SELECT", "selector": "select[name=sort]", "value": "price-asc"}],
        verified=True,
    ),
    Fragment(
        generator="SearchGenerator",
        description="matching oak",
        commands=[
            {"type": "TYPE", "selector": "input[name=q]", "text": "oak"},
            {"type": "CLICK", "selector": "button.apply-filters"},
        ],
        verified=True,
    ),
]
LIMITS = {
    "panel": 10,
    "navigate": 6,
    "inline": 10,
    "pagination": 30,
    "infinite": 30,
    "loadmore": 30,
    "slow": 10,
    "missing": 30,
    "modal": 10,
}
"""Items checked per layout (past the first page or batch where the list grows); the filter's
9 matches are read to the end."""


def field(selector: str, attribute: str | None = None) -> StrategyField:
    return StrategyField(selector=selector, attribute=attribute)


def named_field(name: str, selector: str) -> StrategyField:
    """The anatomy's field as a planner names it: the tags, each tag of the list, as a list."""
    if name == "tags":
        return StrategyField(selector=f"{selector} .tag", all=True)
    return field(selector)


def strategy_for(layout: str, **changes: Any) -> Strategy:
    anatomy = ANATOMY[layout]
    plan = Strategy(
        understanding=[f"The demo shop's {layout} layout."],
        list_container=LIST,
        list_item=ITEM,
        click_behavior=anatomy.click_behavior,
        details_panel=anatomy.details,
        details_loaded=anatomy.details_loaded,
        close_details=anatomy.close,
        details_fields={n: named_field(n, css) for n, css in anatomy.details_fields.items()},
        item_fields={n: named_field(n, css) for n, css in anatomy.card_fields.items()}
        | {"url": field(ITEM_LINK, "href")},
        pagination_button=anatomy.next_page,
        load_more_button=anatomy.load_more,
        scroll_loads_more=layout == "infinite",
    )
    return plan.model_copy(update=changes)


def accuracy(items: list[dict[str, Any]], truth: list[dict[str, str]]) -> float:
    """Share of the truth's field values extracted exactly (absent ones must be absent)."""
    right = total = 0
    for item, record in zip(items, truth, strict=True):
        for name in FIELDS:
            total += 1
            right += item.get(name) == record.get(name)
    return right / total


def call_ids(events: list[Event]) -> list[str]:
    return [e.call_id for e in events if isinstance(e, ToolCall | ToolResult)]


def warnings(events: list[Event]) -> list[str]:
    return [e.message for e in events if isinstance(e, Log) and e.level == "warning"]


async def generate(generator: RecipeWriter) -> tuple[list[Event], RecipeOutcome]:
    events, written = await collect(generator.run(), RecipeOutcome)
    # Dry-run items never reach the session's table.
    assert not any(isinstance(e, ItemsExtracted) for e in events)
    return events, written


async def extract(browser: Browser, url: str, written: RecipeOutcome) -> list[dict]:
    assert written.recipe is not None, written.failure
    page = await browser.page()
    try:
        await page.goto(url)
        _, ran = await collect(RecipeInterpreter(page, written.recipe).run(), RunOutcome)
        return ran.items
    finally:
        await page.context.close()


# --- offline, every layout -----------------------------------------------------------------


@pytest.mark.parametrize("layout", CARD_LAYOUTS)
async def test_the_offline_recipe_is_dry_run_accepted_and_extracts_the_ground_truth(
    browser, demo_site, layout
):
    limit = LIMITS.get(layout)
    fragments = FILTER_FRAGMENTS if layout == "filter" else []
    plan = strategy_for(layout)
    generator = RecipeWriter(
        browser,
        demo_site.url(layout),
        plan,
        "Extract products",
        fragments=fragments,
        max_items=limit,
    )
    events, written = await generate(generator)
    assert written.failure is None
    assert written.recipe == build_recipe(
        plan, fragments, recipe_id=generator.recipe_id, name="Extract products", max_items=limit
    )
    assert len(written.dry_run_items) == 2
    assert call_ids(events) and all(i.startswith("dry1-") for i in call_ids(events))
    assert warnings(events) == []

    items = await extract(browser, demo_site.url(layout), written)
    truth = demo_site.ground_truth(layout, **(FILTER_QUERY if layout == "filter" else {}))
    truth = truth[:limit]
    assert len(items) == len(truth)
    assert accuracy(items, truth) >= 0.95
    assert written.dry_run_items == items[:2]


# --- the offline repair --------------------------------------------------------------------


async def test_a_details_field_read_empty_everywhere_is_dropped_and_said(browser, demo_site):
    plan = strategy_for("panel")
    plan.details_fields["seller"] = field(f"{PANEL} .field-vendor")
    generator = RecipeWriter(browser, demo_site.url("panel"), plan, "Extract products")
    events, written = await generate(generator)
    assert written.failure is None and written.recipe is not None
    assert "seller" not in written.recipe.bindings.DETAILS_FIELDS
    assert warnings(events)[0] == (
        "dry run 1 failed: empty in all 2 dry-run items: "
        "DETAILS_FIELDS seller (`#details-panel .field-vendor`)"
    )
    assert warnings(events)[1] == (
        "DETAILS_FIELDS seller (`#details-panel .field-vendor`) was empty in every dry-run "
        "item: dropped it from the recipe"
    )
    assert {i.split("-")[0] for i in call_ids(events)} == {"dry1", "dry2"}
    assert [item["title"] for item in written.dry_run_items] == [
        r["title"] for r in demo_site.ground_truth("panel")[:2]
    ]


async def test_a_card_field_read_empty_makes_the_items_get_clicked(browser, demo_site):
    plan = strategy_for("pagination")
    plan.item_fields["seller"] = field(".vendor")
    generator = RecipeWriter(browser, demo_site.url("pagination"), plan, "Extract products")
    events, written = await generate(generator)
    assert written.recipe is not None, written.failure
    assert written.recipe.bindings.CLICK_BEHAVIOR == "shows_panel"
    assert written.recipe.bindings.DETAILS_FIELDS["seller"].selector == f"{PANEL} .field-seller"
    assert warnings(events)[1] == (
        "ITEM_FIELDS seller (`.vendor`) was empty in every dry-run item: now read by "
        "DETAILS_FIELDS seller (`#details-panel .field-seller`)"
    )
    truth = demo_site.ground_truth("pagination")[:2]
    assert [item["seller"] for item in written.dry_run_items] == [r["seller"] for r in truth]


async def test_a_list_item_selector_that_cannot_work_is_a_clear_error(browser, demo_site):
    generator = RecipeWriter(
        browser, demo_site.url("panel"), strategy_for("panel", list_item="li.card["), "x"
    )
    events, written = await generate(generator)
    assert written.recipe is None
    assert written.failure is not None and "\n" not in written.failure
    assert written.failure.startswith("the dry run stopped after 0 items: ")
    assert "li.card[" in written.failure
    assert warnings(events) == [f"dry run 1 failed: {written.failure}"]  # no repair for this


# --- with a (scripted) model ---------------------------------------------------------------


def panel_recipe(**field_changes: str) -> dict[str, Any]:
    """A recipe for the panel layout as a model would answer it."""
    details = {
        n: named_field(n, css).as_binding() for n, css in ANATOMY["panel"].details_fields.items()
    }
    return {
        "bindings": {
            "LIST": LIST,
            "LIST_ITEM": ITEM,
            "CLICK_BEHAVIOR": "shows_panel",
            "DETAILS_PANEL": PANEL,
            "DETAILS_LOADED": {"exists": ANATOMY["panel"].details_loaded},
            "ITEM_FIELDS": {"url": {"selector": ITEM_LINK, "attribute": "href"}},
            "DETAILS_FIELDS": details | field_changes,
        },
        "recipe": {
            "commands": [
                {"type": "WAIT_FOR", "target": "page"},
                {"type": "WAIT_FOR", "target": "list"},
                {
                    "type": "FOR_EACH_ITEM_IN_LIST",
                    "body": [
                        {"type": "CLICK"},
                        {"type": "WAIT_FOR", "target": "details"},
                        {"type": "EXTRACT_DETAILS"},
                        {"type": "SAVE", "as": "item"},
                        {"type": "MARK_DONE"},
                    ],
                },
                {"type": "END"},
            ],
            "config": {"maxItems": 20},
        },
    }


INVALID = {"bindings": {"LIST_ITEM": ITEM}, "recipe": {"commands": [{"type": "GRAB"}]}}


async def with_model(
    browser: Browser, site: Any, answers: list[str]
) -> tuple[RecipeOutcome, list[Event], ScriptedModel]:
    with ScriptedModel([text(answer) for answer in answers]) as server:
        llm = LLM(server.model(), api_base=server.api_base, retry=RetryPolicy(attempts=1))
        generator = RecipeWriter(
            browser,
            site.url("panel"),
            strategy_for("panel"),
            "Extract 5 products",
            max_items=5,
            llm=llm,
        )
        events, written = await generate(generator)
    assert server.remaining == 0
    return written, events, server


async def test_a_valid_model_recipe_is_accepted_after_its_dry_run(browser, demo_site):
    answer = f"```json\n{json.dumps(panel_recipe())}\n```"
    written, events, server = await with_model(browser, demo_site, [answer])
    assert written.failure is None and written.recipe is not None
    # The user's limit replaces the model's 20; a generated id and name complete the answer.
    assert written.recipe.recipe.config.max_items == 5
    assert written.recipe.recipe.name == "Extract 5 products"
    assert len([e for e in events if isinstance(e, LLMCall)]) == 1
    truth = demo_site.ground_truth("panel")[:2]
    assert accuracy(written.dry_run_items, truth) == 1.0
    [request] = server.requests
    system, user = request.messages
    assert '"title":"tui-agent recipe"' in system["content"]  # the recipe's JSON Schema
    assert "TASK: Extract 5 products" in user["content"] and "maxItems: 5" in user["content"]
    assert "- LIST_ITEM: `li.card`" in user["content"]


@pytest.mark.parametrize(
    ("first", "error_part"),
    [
        (json.dumps(INVALID), "unknown command type 'GRAB'"),
        (
            json.dumps(panel_recipe(price=f"{PANEL} .field-cost")),
            "DETAILS_FIELDS price (`#details-panel .field-cost`)",
        ),
    ],
    ids=["invalid-schema", "dry-run-fails"],
)
async def test_a_failed_first_answer_is_repaired_on_the_second(
    browser, demo_site, first, error_part
):
    written, events, server = await with_model(
        browser, demo_site, [first, json.dumps(panel_recipe())]
    )
    assert written.failure is None and written.recipe is not None
    assert written.recipe.bindings.DETAILS_FIELDS["price"].selector == f"{PANEL} .field-price"
    assert len([e for e in events if isinstance(e, LLMCall)]) == 2
    assert any(error_part in message for message in warnings(events))
    repair = server.requests[1].messages
    assert [m["role"] for m in repair] == ["system", "user", "assistant", "user"]
    assert repair[2]["content"] == first
    assert error_part in repair[3]["content"]
    if "GRAB" not in first:  # a recipe that parsed is sent back with the error
        assert ".field-cost" in repair[3]["content"].split("The recipe was:")[1]


async def test_a_model_recipe_blocked_by_a_modal_is_repaired_with_close_details(browser, demo_site):
    """The dry run of a modal recipe without CLOSE_DETAILS stops early and says why; the
    model's repair names the close button and is accepted."""
    recipe = json.loads((RECIPES / "demo-modal.json").read_text())
    blocked = json.loads(json.dumps(recipe))
    del blocked["bindings"]["CLOSE_DETAILS"]
    [loop] = [c for c in blocked["recipe"]["commands"] if c["type"] == "FOR_EACH_ITEM_IN_LIST"]
    loop["body"][0]["timeout"] = 1000
    with ScriptedModel([text(json.dumps(blocked)), text(json.dumps(recipe))]) as server:
        llm = LLM(server.model(), api_base=server.api_base, retry=RetryPolicy(attempts=1))
        generator = RecipeWriter(
            browser,
            demo_site.url("modal"),
            strategy_for("modal"),
            "Extract 5 products",
            max_items=5,
            llm=llm,
        )
        events, written = await generate(generator)
    assert server.remaining == 0
    assert written.failure is None and written.recipe is not None
    close = ANATOMY["modal"].close
    assert written.recipe.bindings.CLOSE_DETAILS is not None
    assert close == written.recipe.bindings.CLOSE_DETAILS.selector
    [first] = [w for w in warnings(events) if w.startswith("dry run 1 failed")]
    assert "could not be clicked within 1 s" in first
    assert "items skipped: stopped" in first  # not one click timeout per item of 240
    assert "name the control that closes them as CLOSE_DETAILS" in first
    assert "as CLOSE_DETAILS" in server.requests[1].messages[-1]["content"]
    assert f"- CLOSE_DETAILS: `{close}`" in server.requests[0].messages[1]["content"]
    truth = demo_site.ground_truth("modal")[:2]
    assert accuracy(written.dry_run_items, truth) == 1.0


async def test_two_invalid_answers_leave_no_recipe_and_one_clear_error(browser, demo_site):
    written, events, _ = await with_model(
        browser, demo_site, [json.dumps(INVALID), "Sorry, I cannot write recipes."]
    )
    assert written.recipe is None and written.dry_run_items == []
    assert written.failure == (
        "the model's recipe failed twice: the answer holds no JSON object "
        '{"bindings": ..., "recipe": ...}'
    )
    assert not any(isinstance(e, ToolCall) for e in events)  # nothing was worth a dry run
