"""Recipe files: the spec's example validates unchanged, bad files list every problem by path."""

import json
from pathlib import Path

import pytest

from tui_agent.web.recipe import (
    Bindings,
    Click,
    RecipeError,
    RecipeFile,
    WaitFor,
    load_recipe,
    parse_recipe,
    recipe_json_schema,
)
from tui_agent.web.recipe.format import (
    COMMAND_TYPES,
    ClickIfExists,
    Condition,
    ForEachItemInList,
    Repeat,
)

RECIPES = Path(__file__).resolve().parents[2] / "recipes"

# Seed 001, "Phase 3: RecipeWriter", Output: verbatim.
SPEC_EXAMPLE = """{
  "bindings": {
    "LIST": "body",
    "LIST_ITEM": "a[href*='/view/']",
    "DETAILS_PANEL": ".item-details",
    "DETAILS_CONTENT": [".item-details h1", ".item-details p"],
    "CLICK_BEHAVIOR": "shows_panel",
    "PAGE_LOADED": { "exists": "body" },
    "LIST_LOADED": { "exists": "a[href*='/view/']" },
    "DETAILS_LOADED": { "exists": ".item-details" }
  },
  "recipe": {
    "id": "unique-recipe-id",
    "name": "Extract Items",
    "commands": [
      { "type": "WAIT_FOR", "target": "page" },
      { "type": "WAIT_FOR", "target": "list" },
      { "type": "FOR_EACH_ITEM_IN_LIST", "body": [
        { "type": "CLICK" },
        { "type": "WAIT_FOR", "target": "details" },
        { "type": "EXTRACT_DETAILS" },
        { "type": "SAVE", "as": "item" },
        { "type": "MARK_DONE" }
      ]},
      { "type": "END" }
    ],
    "config": { "maxItems": 20 }
  }
}"""


def write(tmp_path, data, name="recipe.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def errors_of(exc: RecipeError) -> list[str]:
    return [line.strip() for line in str(exc).splitlines()[1:]]


def minimal(**bindings):
    return {
        "bindings": {"LIST_ITEM": "li", "DETAILS_PANEL": "#d", **bindings},
        "recipe": {"id": "r", "name": "R", "commands": [{"type": "END"}]},
    }


def test_the_spec_example_validates_and_round_trips(tmp_path):
    shipped = RECIPES / "spec-example.json"
    assert json.loads(shipped.read_text()) == json.loads(SPEC_EXAMPLE)
    recipe = load_recipe(write(tmp_path, SPEC_EXAMPLE))
    assert recipe.bindings.LIST_ITEM == "a[href*='/view/']"
    assert recipe.bindings.DETAILS_CONTENT == [".item-details h1", ".item-details p"]
    assert recipe.bindings.CLICK_BEHAVIOR == "shows_panel"
    assert recipe.recipe.config.max_items == 20
    wait, _, loop, _ = recipe.recipe.commands
    assert isinstance(wait, WaitFor) and wait.target == "page"
    assert isinstance(loop, ForEachItemInList)
    assert [c.type for c in loop.body] == [
        "CLICK",
        "WAIT_FOR",
        "EXTRACT_DETAILS",
        "SAVE",
        "MARK_DONE",
    ]
    assert loop.body[3].as_ == "item"
    assert recipe.to_json() == json.loads(SPEC_EXAMPLE)


def test_every_problem_is_listed_with_its_json_path(tmp_path):
    bad = {
        "bindings": {
            "LIST_ITEMS": "li",
            "CLICK_BEHAVIOR": "hover",
            "DETAILS_FIELDS": {"price": 3},
            "LIST_LOADED": {"exists": "a", "gone": "b"},
        },
        "recipe": {
            "id": "x",
            "name": "x",
            "commands": [
                {"type": "CLIK"},
                {"type": "WAIT_FOR"},
                {"type": "FOR_EACH_ITEM_IN_LIST", "body": [{"type": "SCROLL", "target": "up"}]},
                {"selector": ".next"},
            ],
            "config": {"maxItems": 0},
        },
    }
    path = write(tmp_path, bad)
    with pytest.raises(RecipeError) as caught:
        load_recipe(path)
    assert str(caught.value).splitlines()[0] == f"{path} is not a valid recipe (10 errors):"
    paths = [line.split(":")[0] for line in errors_of(caught.value)]
    assert paths == [
        "bindings.LIST_ITEM",
        "bindings.CLICK_BEHAVIOR",
        "bindings.LIST_LOADED",
        "bindings.DETAILS_FIELDS.price",
        "bindings.LIST_ITEMS",
        "recipe.commands[0]",
        "recipe.commands[1]",
        "recipe.commands[2].body[0].target",
        "recipe.commands[3]",
        "recipe.config.maxItems",
    ]
    lines = errors_of(caught.value)
    assert "Field required" in lines[0]
    assert "unknown command type 'CLIK'" in lines[5] and "FOR_EACH_ITEM_IN_LIST" in lines[5]
    assert 'exactly one of "target" or "condition"' in lines[6]
    assert 'needs "type"' in lines[8]


def test_commands_that_need_an_item_or_a_binding_are_rejected_by_path():
    data = minimal(DETAILS_PANEL=None)
    data["bindings"].pop("DETAILS_PANEL")
    data["recipe"]["commands"] = [
        {"type": "CLICK"},
        {"type": "CLICK_IF_EXISTS"},
        {
            "type": "REPEAT",
            "body": [
                {
                    "type": "FOR_EACH_ITEM_IN_LIST",
                    "body": [
                        {"type": "SAVE"},
                        {"type": "EXTRACT_DETAILS"},
                        {"type": "FOR_EACH_ITEM_IN_LIST", "body": [{"type": "END"}]},
                    ],
                }
            ],
        },
    ]
    with pytest.raises(RecipeError) as caught:
        parse_recipe(data, "r.json")
    assert errors_of(caught.value) == [
        "recipe.commands[0]: CLICK only works inside FOR_EACH_ITEM_IN_LIST",
        "recipe.commands[1]: CLICK_IF_EXISTS without a selector needs NEXT_PAGE_BUTTON",
        "recipe.commands[2].body[0].body[0]: SAVE needs an EXTRACT_DETAILS before it",
        'recipe.commands[2].body[0].body[1]: EXTRACT_DETAILS with "shows_panel" needs '
        "DETAILS_PANEL",
        "recipe.commands[2].body[0].body[2]: FOR_EACH_ITEM_IN_LIST cannot be nested in another",
    ]


def test_unreadable_files_say_why_in_one_line(tmp_path):
    with pytest.raises(RecipeError, match="no such recipe file"):
        load_recipe(tmp_path / "missing.json")
    with pytest.raises(RecipeError, match=r"not valid JSON: Expecting .* at line 1 column"):
        load_recipe(write(tmp_path, '{"bindings": {'))
    with pytest.raises(RecipeError, match=r"\(top level\): Input should be a valid dictionary"):
        load_recipe(write(tmp_path, "[1, 2]"))


def test_field_selectors_accept_a_string_or_an_attribute_and_write_back_as_given():
    data = minimal(
        DETAILS_FIELDS={"title": "h1", "url": {"selector": "a.more", "attribute": "href"}},
        PAGINATION_BUTTON="a.next",
    )
    recipe = parse_recipe(data)
    assert recipe.bindings.DETAILS_FIELDS["title"].selector == "h1"
    assert recipe.bindings.DETAILS_FIELDS["title"].attribute is None
    assert recipe.bindings.DETAILS_FIELDS["url"].attribute == "href"
    # The planner's name for the next-page button is accepted as NEXT_PAGE_BUTTON.
    assert recipe.bindings.NEXT_PAGE_BUTTON == "a.next"
    assert recipe.to_json()["bindings"]["DETAILS_FIELDS"] == data["bindings"]["DETAILS_FIELDS"]


def test_conditions_and_commands_validate_their_own_shape():
    assert Condition(gone=".spinner").describe() == "gone .spinner"
    for bad in ({}, {"exists": "a", "gone": "b"}):
        with pytest.raises(ValueError, match='exactly one of "exists" or "gone"'):
            Condition.model_validate(bad)
    with pytest.raises(ValueError, match="not both"):
        ClickIfExists.model_validate(
            {"type": "CLICK_IF_EXISTS", "target": "next_page", "selector": "a"}
        )
    repeat = Repeat.model_validate(
        {
            "type": "REPEAT",
            "maxIterations": 5,
            "until": {"gone": ".more"},
            "body": [{"type": "END"}],
        }
    )
    assert repeat.max_iterations == 5 and repeat.until == Condition(gone=".more")
    assert repeat.arguments() == {
        "type": "REPEAT",
        "maxIterations": 5,
        "until": {"gone": ".more"},
        "body": "1 command",
    }
    assert Click.model_validate({"type": "CLICK"}).arguments() == {"type": "CLICK"}


def test_binding_defaults_resolve_abstract_targets():
    bindings = Bindings(LIST_ITEM="li.card", DETAILS_PANEL="#panel")
    assert bindings.LIST == "body"
    assert bindings.page_loaded() == Condition(exists="body")
    assert bindings.list_loaded() == Condition(exists="li.card")
    assert bindings.details_loaded() == Condition(exists="#panel")
    assert Bindings(LIST_ITEM="li").details_loaded() is None


def test_the_json_schema_covers_every_command_and_the_file_shape():
    schema = recipe_json_schema()
    assert schema["title"] == "tui-agent recipe"
    assert set(schema["required"]) == {"bindings", "recipe"}
    mapping = schema["$defs"]["Recipe"]["properties"]["commands"]["items"]["discriminator"]
    assert set(mapping["mapping"]) == set(COMMAND_TYPES)
    bindings = schema["$defs"]["Bindings"]["properties"]
    assert {"LIST", "LIST_ITEM", "DETAILS_PANEL", "DETAILS_CONTENT", "CLICK_BEHAVIOR"} <= set(
        bindings
    )
    assert {"PAGE_LOADED", "LIST_LOADED", "DETAILS_LOADED", "NEXT_PAGE_BUTTON"} <= set(bindings)
    assert "DETAILS_FIELDS" in bindings
    json.dumps(schema)  # plain JSON


def test_the_example_recipes_in_the_repository_are_valid():
    files = sorted(RECIPES.glob("*.json"))
    assert len(files) == 11
    for path in files:
        assert isinstance(load_recipe(path), RecipeFile)


def test_the_bindings_for_real_sites_validate_and_write_back_as_given():
    data = minimal(
        LIST_ITEM_SIBLINGS="tr:has(span)",
        NEXT_PAGE_BUTTON="table.listing a",
        NEXT_PAGE_TEXT="Next →",
        CLOSE_DETAILS={"key": "Escape"},
        DETAILS_FIELDS={
            "año": {"selector": "p", "prefix": "Año:"},
            "tags": {"selector": ".tags a", "all": True},
        },
        DETAILS_SCHEMA={"price": "the price"},
    )
    recipe = parse_recipe(data)
    assert recipe.bindings.CLOSE_DETAILS is not None
    assert recipe.bindings.CLOSE_DETAILS.describe() == "PRESS Escape"
    assert recipe.bindings.DETAILS_FIELDS["año"].prefix == "Año:"
    assert recipe.bindings.DETAILS_FIELDS["tags"].all  # every match, read as a list
    field = recipe_json_schema()["$defs"]["Bindings"]["properties"]["DETAILS_FIELDS"]
    assert field["additionalProperties"]["anyOf"][1]["properties"]["all"] == {"type": "boolean"}
    assert recipe.to_json()["bindings"] == data["bindings"]
    counted = parse_recipe(minimal(LIST_ITEM_SIBLINGS=2, CLOSE_DETAILS=".close"))
    assert counted.bindings.LIST_ITEM_SIBLINGS == 2
    assert counted.to_json()["bindings"]["CLOSE_DETAILS"] == ".close"  # a plain selector
    for bad, message in (
        ({"LIST_ITEM_SIBLINGS": 0}, "LIST_ITEM_SIBLINGS"),
        ({"CLOSE_DETAILS": {"key": "Escape", "selector": ".x"}}, 'exactly one of "selector"'),
        ({"CLOSE_DETAILS": {}}, 'exactly one of "selector"'),
    ):
        with pytest.raises(RecipeError, match=message):
            parse_recipe(minimal(**bad))


def test_new_command_options_validate_their_shape():
    changed = WaitFor.model_validate({"type": "WAIT_FOR", "target": "list", "changed": True})
    assert changed.changed
    with pytest.raises(ValueError, match='"changed" only goes with target "list"'):
        WaitFor.model_validate({"type": "WAIT_FOR", "target": "page", "changed": True})
    with pytest.raises(ValueError, match='"text" needs a "selector"'):
        Click.model_validate({"type": "CLICK", "text": "Garden"})
    click = Click.model_validate({"type": "CLICK", "selector": ".chips a", "text": "Garden"})
    assert click.arguments() == {"type": "CLICK", "selector": ".chips a", "text": "Garden"}
