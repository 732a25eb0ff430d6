"""Details told in prose: the schema a model proposes, its answers read and cached on disk,
the recipe that asks for parsing; and dry-run items that read like page controls."""

import json

from tui_agent.web.generate.details_schema import read_schema, schema_prompt, with_parsing
from tui_agent.web.generate.dry_run import looks_like_control
from tui_agent.web.recipe import DetailsCache, parse_recipe
from tui_agent.web.recipe.details_parser import cache_key, prompt, read_answer

SCHEMA = {"price": "the price", "seller": "who sells it"}


def test_answers_keep_the_schemas_fields_as_text():
    answer = 'Sure: {"price": "$4.99", "seller": "Northwind", "colour": "red", "rating": 4.5}'
    assert read_answer(answer, SCHEMA) == {"price": "$4.99", "seller": "Northwind"}
    assert read_answer('{"price": 12, "seller": ""}', SCHEMA) == {"price": "12", "seller": None}
    assert read_answer("no idea", SCHEMA) is None
    assert read_answer("[1]", SCHEMA) is None
    messages = prompt(SCHEMA, "Sold by Northwind for $4.99.")
    assert '"price": the price' in messages[-1]["content"]
    assert messages[-1]["content"].endswith("Sold by Northwind for $4.99.")


def test_the_cache_is_per_recipe_and_text_and_survives_a_new_process(tmp_path):
    cache = DetailsCache(tmp_path / "cache")
    key = cache_key(SCHEMA, "Sold by Northwind for $4.99.")
    assert key != cache_key(SCHEMA, "Sold by Granite for $5.00.")
    assert key != cache_key({"price": "the price"}, "Sold by Northwind for $4.99.")
    assert cache.get("shop/list", key) is None
    cache.put("shop/list", key, {"price": "$4.99", "seller": "Northwind"})
    again = DetailsCache(tmp_path / "cache")
    assert again.get("shop/list", key) == {"price": "$4.99", "seller": "Northwind"}
    assert again.get("another-recipe", key) is None
    [file] = (tmp_path / "cache").iterdir()
    assert file.name == "shop-list.json" and json.loads(file.read_text())[key]["price"] == "$4.99"


def test_an_unwritable_cache_is_only_a_cache(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    cache = DetailsCache(blocked / "cache")
    cache.put("r", "k", {"price": "1"})  # nothing raised
    assert cache.get("r", "k") == {"price": "1"}  # kept for this run


def test_the_proposed_schema_is_made_safe_and_written_into_the_recipe():
    answer = '{"Price (EUR)": "its price", "text": "x", "seller": "", "title": "t"}'
    assert read_schema(answer, known=["title"]) == {"price_eur": "its price", "seller": "seller"}
    assert read_schema("nothing") is None
    messages = schema_prompt("Extract 5 items", ["Offered by A for $1."], ["title"])
    assert "Offered by A for $1." in messages[-1]["content"]
    assert "Fields already read by selectors: title" in messages[-1]["content"]
    recipe = parse_recipe(
        {
            "bindings": {"LIST_ITEM": "li", "CLICK_BEHAVIOR": "navigates"},
            "recipe": {
                "id": "r",
                "name": "r",
                "commands": [
                    {
                        "type": "FOR_EACH_ITEM_IN_LIST",
                        "body": [
                            {"type": "CLICK"},
                            {"type": "EXTRACT_DETAILS"},
                            {"type": "SAVE", "as": "item"},
                        ],
                    }
                ],
            },
        }
    )
    parsing = with_parsing(recipe, SCHEMA).to_json()
    assert parsing["bindings"]["DETAILS_SCHEMA"] == SCHEMA
    body = parsing["recipe"]["commands"][0]["body"]
    assert body[1] == {"type": "EXTRACT_DETAILS", "parse": True}


def test_items_that_read_like_page_controls_are_flagged():
    for text in (
        "← Previous | Next →",
        "1 2 3 … 10 Next",
        "Load more",
        "Siguiente \u203a",
        "Weiter",
    ):
        assert looks_like_control({"text": text}) == text
    for text in ("Classic Oak Kettle", "Next generation kettle, in oak", ""):
        assert looks_like_control({"text": text}) is None
