"""build_recipe: a strategy (and fragments) to a valid recipe, by rule; the dry-run verdict."""

import json
from typing import Any

import pytest

from tui_agent.web.generate.dry_run import DryRunOutcome, verdict
from tui_agent.web.generate.recipe_writer import (
    build_recipe,
    describe,
    recipe_identity,
    without_empty_fields,
)
from tui_agent.web.generate.writer_prompts import answer_json, repair_prompt, user_prompt
from tui_agent.web.plan import Fragment, Strategy, StrategyField
from tui_agent.web.recipe import CloseDetails, RecipeError, RecipeFile, parse_recipe

CLICKED = [
    {"type": "CLICK"},
    {"type": "WAIT_FOR", "target": "details"},
    {"type": "EXTRACT_DETAILS"},
    {"type": "SAVE", "as": "item"},
    {"type": "MARK_DONE"},
]
READ_ONLY = CLICKED[2:]
START = [{"type": "WAIT_FOR", "target": "page"}, {"type": "WAIT_FOR", "target": "list"}]
URL_FIELD = StrategyField(selector="a.more", attribute="href")


def fields(**selectors: str | StrategyField) -> dict[str, StrategyField]:
    return {
        name: spec if isinstance(spec, StrategyField) else StrategyField(selector=spec)
        for name, spec in selectors.items()
    }


def strategy(**changes: Any) -> Strategy:
    """A side-panel shop: cards show title and price, the panel shows everything."""
    base: dict[str, Any] = {
        "list_container": "#results",
        "list_item": "article.hit",
        "click_behavior": "shows_panel",
        "details_panel": "aside.detail",
        "details_loaded": "aside.detail h2",
        "details_fields": fields(title="aside.detail h2", price="aside.detail .cost"),
        "item_fields": fields(title="h3", url=URL_FIELD),
    }
    return Strategy(**(base | changes))


def build(plan: Strategy, fragments: list[Fragment] | None = None, **options: Any) -> RecipeFile:
    options = {"recipe_id": "shop", "name": "Shop items", "max_items": None} | options
    return build_recipe(plan, fragments or [], **options)


def commands(recipe: RecipeFile) -> list[dict[str, Any]]:
    return recipe.to_json()["recipe"]["commands"]


def loop_body(recipe: RecipeFile) -> list[dict[str, Any]]:
    found = [c for c in commands(recipe) if c["type"] in ("FOR_EACH_ITEM_IN_LIST", "REPEAT")]
    loop = found[0] if found[0]["type"] == "FOR_EACH_ITEM_IN_LIST" else found[0]["body"][0]
    assert loop["type"] == "FOR_EACH_ITEM_IN_LIST"
    return loop["body"]


def test_a_side_panel_is_clicked_open_for_each_item():
    recipe = build(strategy())
    assert recipe.to_json()["bindings"] == {
        "LIST": "#results",
        "LIST_ITEM": "article.hit",
        "PAGE_LOADED": {"exists": "body"},
        "LIST_LOADED": {"exists": "article.hit"},
        "CLICK_BEHAVIOR": "shows_panel",
        "DETAILS_PANEL": "aside.detail",
        "DETAILS_LOADED": {"exists": "aside.detail h2"},
        # The details name the title too: only the url is left to read from the card.
        "ITEM_FIELDS": {"url": {"selector": "a.more", "attribute": "href"}},
        "DETAILS_FIELDS": {"title": "aside.detail h2", "price": "aside.detail .cost"},
    }
    assert commands(recipe) == [
        *START,
        {"type": "FOR_EACH_ITEM_IN_LIST", "body": CLICKED},
        {"type": "END"},
    ]
    assert "maxItems" not in recipe.to_json()["recipe"]["config"]


def test_details_that_cover_the_list_are_closed_after_each_item():
    modal = strategy(close_details="aside.detail button.close")
    recipe = build(modal)
    assert CloseDetails(selector="aside.detail button.close") == recipe.bindings.CLOSE_DETAILS
    assert loop_body(recipe) == CLICKED  # the interpreter clicks it when it leaves each item
    assert "then closes its details (`aside.detail button.close`)" in describe(recipe)
    # Items read in place are never clicked open: nothing to close.
    in_place = build(modal.model_copy(update={"item_fields": modal.details_fields}))
    assert in_place.bindings.CLOSE_DETAILS is None and loop_body(in_place) == READ_ONLY
    assert build(strategy()).bindings.CLOSE_DETAILS is None


def test_a_navigating_list_waits_for_the_details_page():
    plan = strategy(
        click_behavior="navigates", details_panel=None, details_loaded="main h1", item_fields={}
    )
    recipe = build(plan)
    bindings = recipe.to_json()["bindings"]
    assert bindings["CLICK_BEHAVIOR"] == "navigates"
    assert "DETAILS_PANEL" not in bindings  # no panel: the whole details page is read
    assert bindings["DETAILS_LOADED"] == {"exists": "main h1"}
    assert loop_body(recipe) == CLICKED


def test_inline_details_keep_their_panel_only_when_every_field_is_inside_it():
    inside = strategy(
        click_behavior="inline",
        details_panel=".more",
        details_loaded=".more",
        details_fields=fields(price=".more .cost", stock=".more > .stock"),
        item_fields=fields(title="h3"),
    )
    bindings = build(inside).to_json()["bindings"]
    assert bindings["DETAILS_PANEL"] == ".more"
    assert bindings["ITEM_FIELDS"] == {"title": "h3"}
    # A field relative to the item but outside the panel: the panel must not scope reading.
    outside = inside.model_copy(
        update={"details_fields": fields(title="h3", price=".more .cost"), "item_fields": {}}
    )
    bindings = build(outside).to_json()["bindings"]
    assert "DETAILS_PANEL" not in bindings
    assert bindings["DETAILS_LOADED"] == {"exists": ".more"}
    assert bindings["DETAILS_FIELDS"] == {"title": "h3", "price": ".more .cost"}
    assert loop_body(build(outside)) == CLICKED


def test_items_that_show_every_field_are_read_without_a_click():
    plan = strategy(item_fields=fields(title="h3", price=".cost", url=URL_FIELD))
    recipe = build(plan)
    bindings = recipe.to_json()["bindings"]
    assert bindings["CLICK_BEHAVIOR"] == "inline"
    assert bindings["ITEM_FIELDS"] == {
        "title": "h3",
        "price": ".cost",
        "url": {"selector": "a.more", "attribute": "href"},
    }
    assert not {"DETAILS_PANEL", "DETAILS_LOADED", "DETAILS_FIELDS"} & set(bindings)
    assert loop_body(recipe) == READ_ONLY


@pytest.mark.parametrize(
    "changes",
    [{"click_behavior": None}, {"details_panel": None}],
    ids=["nothing-to-click", "panel-not-found"],
)
def test_without_details_to_open_the_items_are_read_in_place(changes):
    recipe = build(strategy(**changes))
    assert loop_body(recipe) == READ_ONLY
    assert recipe.bindings.ITEM_FIELDS.keys() == {"title", "url"}


@pytest.mark.parametrize(
    ("changes", "more", "next_page"),
    [
        ({"pagination_button": "a.next"}, {"type": "CLICK_IF_EXISTS", "target": "next_page"}, 1),
        (
            {"load_more_button": "button.more"},
            {"type": "CLICK_IF_EXISTS", "selector": "button.more"},
            0,
        ),
        ({"scroll_loads_more": True}, {"type": "SCROLL", "target": "page"}, 0),
    ],
    ids=["pagination", "loadmore", "infinite"],
)
def test_a_growing_list_repeats_the_loop_and_asks_for_more(changes, more, next_page):
    recipe = build(strategy(**changes))
    assert commands(recipe) == [
        *START,
        {"type": "REPEAT", "body": [{"type": "FOR_EACH_ITEM_IN_LIST", "body": CLICKED}, more]},
        {"type": "END"},
    ]
    assert (recipe.bindings.NEXT_PAGE_BUTTON == "a.next") == bool(next_page)


def test_fragments_run_before_the_loop_and_the_list_is_awaited_again():
    sort = [{"type": "SELECT", "selector": "select#sort", "value": "price-asc"}]
    search = [
        {"type": "TYPE", "selector": "input[name=q]", "text": "oak"},
        {"type": "PRESS", "selector": "input[name=q]", "key": "Enter"},
    ]
    fragments = [
        Fragment(generator="SortGenerator", description="cheapest first", commands=sort),
        Fragment(generator="SearchGenerator", description="oak", commands=search),
    ]
    recipe = build(strategy(pagination_button="a.next"), fragments)
    assert commands(recipe)[:6] == [
        *START,
        *sort,
        *search,
        {"type": "WAIT_FOR", "target": "list"},
    ]
    assert commands(recipe)[6]["type"] == "REPEAT"


def test_max_items_goes_into_the_config_and_the_result_parses_back():
    recipe = build(strategy(scroll_loads_more=True), max_items=7)
    data = recipe.to_json()
    assert data["recipe"]["config"] == {"maxItems": 7}
    assert (data["recipe"]["id"], data["recipe"]["name"]) == ("shop", "Shop items")
    assert parse_recipe(data) == recipe


def test_what_cannot_become_a_recipe_is_a_recipe_error():
    with pytest.raises(RecipeError, match="no LIST_ITEM"):
        build(strategy(list_item=None))
    broken = Fragment(generator="FilterGenerator", description="x", commands=[{"type": "CLICK"}])
    with pytest.raises(RecipeError, match=r"recipe\.commands\[2\]: CLICK only works inside"):
        build(strategy(), [broken])
    with pytest.raises(RecipeError, match="maxItems"):
        build(strategy(), max_items=0)


# --- the offline repair ---------------------------------------------------------------------


def test_an_empty_details_field_falls_back_to_the_cards_selector_or_is_dropped():
    plan = strategy(
        details_fields=fields(title="aside.detail h2", seller="aside.detail .who"),
    )
    recipe = build(plan)
    repaired = build(without_empty_fields(plan, recipe, {"title", "seller"}))
    assert repaired.bindings.DETAILS_FIELDS == {}
    assert set(repaired.bindings.ITEM_FIELDS) == {"title", "url"}  # the card's h3 now


def test_an_empty_card_field_makes_the_items_get_clicked():
    plan = strategy(item_fields=fields(title="h3", price=".nope", url=URL_FIELD))
    recipe = build(plan)
    assert loop_body(recipe) == READ_ONLY
    repaired = build(without_empty_fields(plan, recipe, {"price"}))
    assert loop_body(repaired) == CLICKED
    assert repaired.bindings.DETAILS_FIELDS["price"].selector == "aside.detail .cost"
    # Named by the cards only: nothing else reads it, so it is dropped.
    dropped = build(without_empty_fields(plan, recipe, {"url"}))
    assert "url" not in dropped.bindings.ITEM_FIELDS and loop_body(dropped) == READ_ONLY


# --- the dry-run verdict --------------------------------------------------------------------


def test_the_verdict_wants_enough_items_and_every_field_read_once():
    recipe = build(strategy())
    full = {"title": "A", "price": "$1", "url": "http://x/a"}
    assert verdict(recipe, DryRunOutcome(items=[full, full], present=24), 2).ok
    # A list of one item needs one.
    assert verdict(recipe, DryRunOutcome(items=[full], present=1), 2).ok
    few = verdict(recipe, DryRunOutcome(items=[full], present=24, skipped=["item 2 skipped"]), 2)
    assert few.error == "the dry run saved 1 of 2 items: item 2 skipped"
    assert not verdict(recipe, DryRunOutcome(items=[], present=0), 2).ok
    stopped = verdict(recipe, DryRunOutcome(failure='no list items: LIST_ITEM "x"'), 2)
    assert stopped.error == 'the dry run stopped after 0 items: no list items: LIST_ITEM "x"'
    # A field read in one item of two is fine; one read in none names its binding.
    items = [full | {"price": None}, full | {"price": "", "url": None}]
    judged = verdict(recipe, DryRunOutcome(items=items, present=24), 2)
    assert judged.empty == {"price": "DETAILS_FIELDS price (`aside.detail .cost`)"}
    assert (
        judged.error == "empty in all 2 dry-run items: DETAILS_FIELDS price (`aside.detail .cost`)"
    )


def test_items_that_cannot_be_clicked_after_the_first_point_at_close_details():
    full = {"title": "A", "price": "$1", "url": "http://x/a"}
    reasons = [
        f'item {n} skipped: LIST_ITEM "article.hit" item {n} could not be clicked'
        for n in (2, 3, 4)
    ]
    blocked = DryRunOutcome(items=[full], present=24, skipped=reasons, gave_up=True)
    judged = verdict(build(strategy()), blocked, 2)
    assert judged.error == (
        f"the dry run saved 1 of 2 items: {reasons[0]} (3 items skipped: stopped); the first "
        "item's details may still cover the list (a modal): name the control that closes them "
        "as CLOSE_DETAILS"
    )
    # With a close control named, or no item saved at all, the hint would mislead.
    closing = build(strategy(close_details="aside.detail button.close"))
    assert "CLOSE_DETAILS" not in verdict(closing, blocked, 2).error
    nothing = DryRunOutcome(items=[], present=24, skipped=reasons)
    assert "CLOSE_DETAILS" not in verdict(build(strategy()), nothing, 2).error


# --- the model's side -----------------------------------------------------------------------


def test_the_models_json_is_found_bare_fenced_or_after_prose():
    data = {"bindings": {"LIST_ITEM": "li"}, "recipe": {"commands": []}}
    text = json.dumps(data)
    assert answer_json(text) == data
    assert answer_json(f"Here it is:\n```json\n{text}\n```\nDone.") == data
    assert answer_json(f"Sure. {text} Hope it helps.") == data
    with pytest.raises(RecipeError, match="no JSON object"):
        answer_json("I cannot do that.")
    with pytest.raises(RecipeError, match="not valid JSON"):
        answer_json('{"bindings": {"LIST_ITEM": ')


def test_the_prompt_gives_strategy_fragments_task_and_max_items():
    fragment = Fragment(
        generator="SortGenerator",
        description="cheapest first",
        commands=[{"type": "SELECT", "selector": "select#sort", "value": "price-asc"}],
    )
    prompt = user_prompt(strategy(), [fragment], "Extract 5 items", 5)
    assert "TASK: Extract 5 items" in prompt and "maxItems: 5" in prompt
    assert "- LIST_ITEM: `article.hit`" in prompt and "select#sort" in prompt
    assert "maxItems: none" in user_prompt(strategy(), [], "all", None)
    assert '"LIST_ITEM": "li"' in repair_prompt("boom", {"bindings": {"LIST_ITEM": "li"}})


def test_a_recipe_is_named_after_its_page_and_task():
    assert recipe_identity("https://www.shop.example/catalog/lamps?x=1", " Lamps ") == (
        "shop-example-catalog-lamps",
        "Lamps",
    )
    assert recipe_identity("http://127.0.0.1:8000/", "")[0] == "127-0-0-1"


def test_items_over_siblings_a_text_bound_pager_a_key_and_a_link_to_click():
    plan = strategy(
        list_item="tbody > tr:has(span.price)",
        list_item_siblings=1,
        click_behavior="navigates",
        click_target="a.title",
        details_panel="#product",
        details_loaded="#product h1",
        close_key=None,
        pagination_button="table.listing a",
        pagination_text="Next →",
    )
    recipe = build(plan)
    bindings = recipe.to_json()["bindings"]
    assert bindings["LIST_ITEM_SIBLINGS"] == 1
    assert (bindings["NEXT_PAGE_BUTTON"], bindings["NEXT_PAGE_TEXT"]) == (
        "table.listing a",
        "Next →",
    )
    [repeat] = [c for c in commands(recipe) if c["type"] == "REPEAT"]
    loop = repeat["body"][0]
    assert loop["body"][0] == {"type": "CLICK", "selector": "a.title", "within": "item"}
    assert "each spread over sibling elements" in describe(recipe)
    escape = build(strategy(close_key="Escape"))
    assert escape.to_json()["bindings"]["CLOSE_DETAILS"] == {"key": "Escape"}
    assert "then closes its details (PRESS Escape)" in describe(escape)
    numbered = build(strategy(pagination_button="nav a", pagination_numbered=True))
    assert numbered.bindings.NEXT_PAGE_NUMBERED


def test_a_longer_wait_is_written_into_the_list_waits():
    assert commands(build(strategy()))[1] == {"type": "WAIT_FOR", "target": "list"}
    longer = build(strategy(), wait=40)
    assert commands(longer)[1] == {"type": "WAIT_FOR", "target": "list", "timeout": 40000}


def test_a_click_can_be_asked_for_when_the_items_show_every_field():
    plan = strategy(item_fields=fields(title="h3", price=".cost", url=URL_FIELD))
    assert "CLICK" not in json.dumps(commands(build(plan)))
    forced = build(plan, click=True)
    assert commands(forced)[2]["body"][0] == {"type": "CLICK"}
