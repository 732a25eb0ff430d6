"""Filter / sort / search fragments found on a page, verified in Chromium, and run for real.

The demo site's `filter` layout is the truth: the list a fragment leaves must equal
`ground_truth("filter", category=..., sort=..., q=...)`. A small client-side shop (no form,
no submit button, a filter option that does nothing) shows the generators are generic and that
an option which does not filter is refused.
"""

import json
from pathlib import Path
from typing import Any

import pytest
from support.requirements import in_chromium
from support.scripted_model import ScriptedModel, text

from tui_agent.demo_site.anatomy import ANATOMY, ITEM, LIST
from tui_agent.events import Event, LLMCall, Log, ToolCall, ToolResult
from tui_agent.llm.client import LLM, RetryPolicy
from tui_agent.web.generate import FragmentsOutcome, FragmentsPhase
from tui_agent.web.generate.controls import (
    Control,
    Option,
    filter_matches,
    search_inputs,
    sort_matches,
)
from tui_agent.web.generate.list_checks import check_filter, check_search, check_sort
from tui_agent.web.phase import collect
from tui_agent.web.plan import Fragment, needed_generators, parse_intent
from tui_agent.web.recipe import RecipeInterpreter, RunOutcome, parse_recipe

FILTER = ANATOMY["filter"].extra
TITLES = f"{LIST} > {ITEM} .card-title"


async def generate(page, url: str, task: str, llm: LLM | None = None, item: str = ITEM):
    """Run the phase for `task` on `url`; every ToolCall must get its ToolResult."""
    needed = needed_generators(parse_intent(task))
    phase = FragmentsPhase(page, url, task, needed, item_selector=item, llm=llm)
    events, made = await collect(phase.run(), FragmentsOutcome)
    calls = [e.call_id for e in events if isinstance(e, ToolCall)]
    assert calls == [e.call_id for e in events if isinstance(e, ToolResult)]
    assert len(set(calls)) == len(calls)
    assert all(fragment.verified for fragment in made.fragments)
    return made, events


async def run_fragments(page, url: str, fragments: list[Fragment], item: str = ITEM) -> None:
    """Load `url` and run the fragments' commands through the real recipe interpreter."""
    commands = [command for fragment in fragments for command in fragment.commands]
    recipe = parse_recipe(
        {
            "bindings": {"LIST_ITEM": item},
            "recipe": {
                "id": "fragments",
                "name": "fragments",
                "commands": [{"type": "WAIT_FOR", "target": "page"}, *commands],
            },
        }
    )
    await page.goto(url)
    events, _ = await collect(RecipeInterpreter(page, recipe).run(), RunOutcome)
    assert all(event.ok for event in events if isinstance(event, ToolResult))


def truth_titles(site, **query: str) -> list[str]:
    return [record["title"] for record in site.ground_truth("filter", **query)]


async def same_element(page, first: str, second: str) -> bool:
    script = "([a, b]) => document.querySelector(a) === document.querySelector(b)"
    return await page.evaluate(script, [first, second])


def warnings(events: list[Event]) -> list[str]:
    return [e.message for e in events if isinstance(e, Log) and e.level == "warning"]


# --- the demo site's filter layout ----------------------------------------------------------


@in_chromium
@pytest.mark.parametrize(
    ("task", "value"),
    [
        ("Extract the top rated products", "rating"),
        ("Extract 10 items, newest first", "newest"),
        ("Extract items sorted by name", "title"),
    ],
)
async def test_a_sort_fragment_orders_the_list_as_asked(page, demo_site, task, value):
    url = demo_site.url("filter")
    made, _ = await generate(page, url, task)
    assert made.failure is None
    [fragment] = made.fragments
    assert (fragment.generator, fragment.option) == ("SortGenerator", value)
    assert await same_element(page, fragment.target, FILTER["sort"])
    await run_fragments(page, url, [fragment])
    assert await page.locator(TITLES).all_inner_texts() == truth_titles(demo_site, sort=value)


@in_chromium
async def test_filter_sort_and_search_fragments_each_and_together_give_the_ground_truth(
    page, demo_site
):
    url = demo_site.url("filter")
    task = "Get the first 50 kitchen products sorted by price, cheapest first, matching 'oak'"
    made, events = await generate(page, url, task)
    assert made.failure is None
    assert not any(isinstance(e, LLMCall) for e in events)
    assert page.url == url  # the page is left as it was found
    filter_, sort, search = made.fragments
    assert [filter_.generator, sort.generator, search.generator] == [
        "FilterGenerator",
        "SortGenerator",
        "SearchGenerator",
    ]
    everything = truth_titles(demo_site)
    kitchen = truth_titles(demo_site, category="kitchen")
    oak = truth_titles(demo_site, q="oak")
    assert filter_.option == "kitchen"
    assert filter_.evidence == f"{len(everything)} -> {len(kitchen)} items, all Kitchen"
    assert [c["type"] for c in filter_.commands] == ["SELECT", "CLICK", "WAIT_FOR"]
    assert filter_.commands[2] == {"type": "WAIT_FOR", "condition": {"exists": ITEM}}
    assert filter_.to_spec_json()["filterTarget"] == filter_.target
    assert sort.option == "price-asc"
    assert search.commands[0] == {"type": "TYPE", "selector": search.target, "text": "oak"}
    assert search.evidence == f"{len(everything)} -> {len(oak)} items, all containing 'oak'"
    [together] = [e for e in events if isinstance(e, ToolResult) and e.name == "check_together"]
    assert together.ok
    for fragment, control, query in [
        (filter_, "category", {"category": "kitchen"}),
        (sort, "sort", {"sort": "price-asc"}),
        (search, "search", {"q": "oak"}),
    ]:
        await run_fragments(page, url, [fragment])
        assert await same_element(page, fragment.target, FILTER[control])
        assert await page.locator(TITLES).all_inner_texts() == truth_titles(demo_site, **query)
    assert await same_element(page, filter_.commands[1]["selector"], FILTER["submit"])
    await run_fragments(page, url, made.fragments)
    expected = truth_titles(demo_site, category="kitchen", sort="price-asc", q="oak")
    assert 1 < len(expected) < len(kitchen)
    assert await page.locator(TITLES).all_inner_texts() == expected


@in_chromium
async def test_an_option_the_page_lacks_gives_no_fragment_and_says_why(page, demo_site):
    made, events = await generate(page, demo_site.url("filter"), "Extract garden items")
    assert made.fragments == []
    assert made.failure is not None
    assert made.failure.startswith("FilterGenerator could not filter the list to 'garden'")
    assert "(All categories, Kitchen, Home, Outdoor, Office)" in made.failure
    assert made.failure in warnings(events)
    assert not any(isinstance(e, ToolCall) and e.name == "SELECT" for e in events)


@in_chromium
async def test_a_page_whose_only_controls_are_links_filters_by_a_link(page, demo_site):
    """The panel layout has no form: its sidebar's category links lead to that category's
    products, so they filter; nothing there sorts or searches."""
    task = "Get 10 kitchen products sorted by price matching 'oak'"
    made, _ = await generate(page, demo_site.url("panel"), task)
    [link] = made.fragments
    assert link.commands == [
        {"type": "CLICK", "selector": "nav.sidebar a", "text": "Kitchen"},
        {"type": "WAIT_FOR", "target": "list", "changed": True},
    ]
    kitchen = truth_titles(demo_site, category="kitchen")
    assert link.evidence == f"240 -> {len(kitchen)} items, all Kitchen"
    assert made.failure is not None
    sort = "SortGenerator could not sort the list by price, lowest first: nothing on the page "
    assert sort + "matches (found " in made.failure
    assert "SearchGenerator could not search for 'oak': the page has no text inputs" in (
        made.failure
    )
    await run_fragments(page, demo_site.url("panel"), [link])
    assert await page.locator(TITLES).all_inner_texts() == kitchen


@in_chromium
async def test_a_needed_generator_the_task_gives_nothing_to_do_is_reported(page, demo_site):
    needed = ["FilterGenerator", "SortGenerator", "SearchGenerator"]
    phase = FragmentsPhase(
        page, demo_site.url("filter"), "Extract 20 items", needed, item_selector=ITEM
    )
    events, made = await collect(phase.run(), FragmentsOutcome)
    assert made.fragments == []
    assert made.failure == (
        "FilterGenerator is needed but the task names no value to filter by; "
        "SortGenerator is needed but the task names no order to sort by; "
        "SearchGenerator is needed but the task names nothing to search for"
    )
    # The page is only loaded, to see that its list shows without a form to fill first.
    assert [e.name for e in events if isinstance(e, ToolCall)] == ["load_page"]


@in_chromium
async def test_the_model_picks_an_option_the_heuristic_cannot_and_it_is_verified(page, demo_site):
    url = demo_site.url("filter")
    answer = json.dumps({"selector": "select[name=category]", "value": "kitchen"})
    with ScriptedModel([text(answer)]) as server:
        llm = LLM(server.model(), api_base=server.api_base, retry=RetryPolicy(attempts=1))
        made, events = await generate(page, url, "Extract 30 cookware items", llm=llm)
    assert made.failure is None
    [fragment] = made.fragments
    assert fragment.option == "kitchen"
    kitchen = truth_titles(demo_site, category="kitchen")
    assert fragment.evidence == f"240 -> {len(kitchen)} items, all Kitchen"
    assert len([e for e in events if isinstance(e, LLMCall)]) == 1
    prompt = server.requests[0].messages[-1]["content"]
    assert "filter the list to 'cookware'" in prompt and "'kitchen'='Kitchen'" in prompt


@in_chromium
async def test_a_model_answer_naming_no_real_option_is_refused(page, demo_site):
    answer = json.dumps({"selector": "select[name=category]", "value": "garden"})
    with ScriptedModel([text(answer)]) as server:
        llm = LLM(server.model(), api_base=server.api_base, retry=RetryPolicy(attempts=1))
        made, events = await generate(page, demo_site.url("filter"), "Extract garden items", llm)
    assert made.fragments == []
    assert made.failure == (
        "FilterGenerator could not filter the list to 'garden': the model chose option "
        "'garden', which 'select[name=category]' does not have"
    )
    assert not any(isinstance(e, ToolCall) and e.name == "SELECT" for e in events)


# --- a client-side shop: no form, no submit, an option that filters nothing ----------------

SHOP_ITEMS = [
    {"name": "Claw Hammer", "kind": "Tools", "price": 12.5},
    {"name": "Hand Saw", "kind": "Tools", "price": 21.0},
    {"name": "Saw Blade Set", "kind": "Tools", "price": 34.9},
    {"name": "Sawing for Beginners", "kind": "Books", "price": 9.99},
    {"name": "Screwdriver Kit", "kind": "Tools", "price": 18.25},
    {"name": "Rose Pruner", "kind": "Garden", "price": 15.0},
    {"name": "Joinery Handbook", "kind": "Books", "price": 27.4},
]
SHOP = """<!doctype html><html><body>
<div class="toolbar">
  <select id="kind" aria-label="Department"><option value="">Everything</option>
    <option value="t">Tools</option><option value="b">Books</option>
    <option value="g">Garden</option></select>
  <select id="order" aria-label="Order"><option value="">Suggested</option>
    <option value="c">Cheapest</option><option value="p">Priciest</option></select>
  <input id="find" placeholder="Search the shop">
</div>
<div id="rows"></div>
<script>
const DATA = %s;
const KINDS = {t: "Tools", b: "Books"};  // "g" is offered but filters nothing
let term = "";
function render() {
  const kind = KINDS[document.getElementById("kind").value];
  const order = document.getElementById("order").value;
  let rows = DATA.filter((r) => (!kind || r.kind === kind)
    && r.name.toLowerCase().includes(term.toLowerCase()));
  if (order) rows = [...rows].sort((a, b) => order === "c" ? a.price - b.price : b.price - a.price);
  document.getElementById("rows").innerHTML = rows.map((r) => `<div class="row">`
    + `<b>${r.name}</b> <span>${r.kind}</span> <span>€${r.price.toFixed(2)}</span></div>`
  ).join("");
}
document.getElementById("kind").addEventListener("change", render);
document.getElementById("order").addEventListener("change", render);
document.getElementById("find").addEventListener("keydown", (e) => {
  if (e.key === "Enter") { term = e.target.value; render(); }
});
render();
</script></body></html>"""


@pytest.fixture
def shop_url(tmp_path: Path) -> str:
    path = tmp_path / "shop.html"
    path.write_text(SHOP % json.dumps(SHOP_ITEMS), encoding="utf-8")
    return path.as_uri()


@in_chromium
async def test_client_side_controls_without_a_submit_are_found_and_verified(page, shop_url):
    task = "Extract 10 items in category Tools, most expensive first, search for saw"
    made, _ = await generate(page, shop_url, task, item=".row")
    assert made.failure is None
    filter_, sort, search = made.fragments
    assert filter_.commands == [
        {"type": "SELECT", "selector": "#kind", "value": "t"},
        {"type": "WAIT_FOR", "condition": {"exists": ".row"}},
    ]
    assert (sort.target, sort.option) == ("#order", "p")
    assert search.commands[1] == {"type": "PRESS", "selector": "#find", "key": "Enter"}
    await run_fragments(page, shop_url, made.fragments, item=".row")
    expected = sorted(
        (r for r in SHOP_ITEMS if r["kind"] == "Tools" and "saw" in r["name"].lower()),
        key=lambda r: -r["price"],
    )
    names = await page.locator(".row b").all_inner_texts()
    assert names == [r["name"] for r in expected] == ["Saw Blade Set", "Hand Saw"]


@in_chromium
async def test_an_option_that_does_not_filter_is_not_verified(page, shop_url):
    made, events = await generate(page, shop_url, "Extract the garden items", item=".row")
    assert made.fragments == []
    assert made.failure == (
        "FilterGenerator could not filter the list to 'garden': "
        "6 of 7 items do not show 'Garden' (e.g. 'Claw Hammer Tools €12.50')"
    )
    selects = [e for e in events if isinstance(e, ToolCall) and e.name == "SELECT"]
    assert [call.arguments["value"] for call in selects] == ["g"]


# --- matching and checking, without a browser ------------------------------------------------


def select(selector: str, *labels: str, name: str = "") -> Control:
    options = tuple(Option(value=label.lower()[:6], label=label) for label in labels)
    return Control(kind="select", selector=selector, label="", name=name, options=options)


@pytest.mark.parametrize(
    ("sort", "expected"),
    [
        ("price_asc", "Lowest price"),
        ("price_desc", "Price (High - Low)"),
        ("rating_desc", "Top rated"),
        ("rating_asc", None),
        ("date_desc", "Most recent"),
        ("date_asc", "Date: old to new"),
        ("title_asc", "Title A to Z"),
        ("title_desc", None),
    ],
)
def test_sort_options_are_matched_by_meaning(sort: str, expected: str | None) -> None:
    control = select(
        "#sort", "Relevance", "Price (High - Low)", "Lowest price", "Top rated",
        "Most recent", "Date: old to new", "Title A to Z", name="sortBy",
    )  # fmt: skip
    matches = sort_matches([control], sort)
    assert (matches[0][1].label if matches else None) == expected


def test_a_field_without_direction_matches_its_usual_order_only_as_a_fallback() -> None:
    control = select("#s", "Price", "Price: high to low")
    assert [o.label for _, o in sort_matches([control], "price_desc")] == [
        "Price: high to low",
        "Price",
    ]
    assert [o.label for _, o in sort_matches([control], "price_asc")] == ["Price"]


def test_filter_options_skip_placeholders_and_sort_controls() -> None:
    sort = select("#order", "Newest", "Oldest", name="order")
    kinds = select("#cat", "All kitchens", "Kitchens & Dining", "Kitchen", "Office")
    assert [o.label for _, o in filter_matches([sort, kinds], "kitchen")] == [
        "Kitchen",
        "Kitchens & Dining",
    ]
    assert filter_matches([sort, kinds], "newest") == []
    assert filter_matches([kinds], "Ofice") == [(kinds, kinds.options[3])]  # a typo


def test_search_inputs_are_ranked_by_how_search_like_they_are() -> None:
    email = Control(kind="input", selector="#email", label="Email", name="email")
    box = Control(kind="input", selector="#q", label="", name="q", input_type="search")
    hint = Control(kind="input", selector="#f", label="", name="f", placeholder="Find a product")
    assert search_inputs([email, hint, box]) == [box, hint]


def item(text: str, **fields: str) -> dict[str, Any]:
    return {"text": text, "price": None, "rating": None, "date": None, "title": None, **fields}


def test_checks_say_what_is_wrong() -> None:
    before = [item("Oak Lamp Home"), item("Steel Kettle Kitchen"), item("Oak Kettle Kitchen")]
    kitchen = before[1:]
    assert check_filter("Kitchen", before, kitchen).evidence == "3 -> 2 items, all Kitchen"
    assert check_filter("Kitchen", before, before).evidence == (
        "1 of 3 items do not show 'Kitchen' (e.g. 'Oak Lamp Home')"
    )
    assert not check_filter("Kitchen", kitchen, kitchen).ok  # nothing changed: no proof
    assert not check_filter("Kitchen", before, []).ok
    assert check_search("oak", before, [before[0], before[2]]).ok
    assert not check_search("oak", before, before).ok
    prices = [item("a", price="$5.00"), item("b", price="$1,250.00"), item("c", price="$40")]
    assert check_sort("price_asc", prices).evidence == (
        "item 3 (40.0) comes after item 2 (1250.0): not price, lowest first"
    )
    assert check_sort("price_asc", [prices[0], prices[2], prices[1]]).ok
    dated = [item("x 2024-05-01"), item("y", date="2024-03-15"), item("z", date="Jan 2, 2024")]
    assert check_sort("date_desc", dated).ok
    stars = [item("a", rating="★★★★☆"), item("b", rating="4.5 out of 5")]
    assert check_sort("rating_asc", stars).ok
    assert not check_sort("rating_desc", stars).ok
    assert not check_sort("price_asc", [item("no price here")] * 3).ok


def test_sort_and_filter_options_are_read_in_other_languages_and_with_arrows() -> None:
    def buttons(*labels: str) -> Control:
        options = tuple(Option(value=label, label=label, selector=f"b{n}") for n, label in
                        enumerate(labels))  # fmt: skip
        return Control(kind="buttons", selector="div.bar", label="", name="", options=options)

    bar = buttons("Precio: de menor a mayor", "Precio: de mayor a menor", "Más recientes")
    assert [o.label for _, o in sort_matches([bar], "price_asc")] == ["Precio: de menor a mayor"]
    assert [o.label for _, o in sort_matches([bar], "price_desc")] == ["Precio: de mayor a menor"]
    assert [o.label for _, o in sort_matches([bar], "date_desc")] == ["Más recientes"]
    arrows = buttons("Price ↑", "Price ↓", "Top rated")
    assert [o.label for _, o in sort_matches([arrows], "price_desc")] == ["Price ↓"]
    assert [o.label for _, o in sort_matches([arrows], "rating_desc")] == ["Top rated"]
    links = Control(
        kind="links", selector="ul.facets", label="Category", name="",
        options=(Option("/c/k", "Kitchen (60)", selector="ul.facets a", text="Kitchen (60)"),
                 Option("/c/j", "Jardín (12)", selector="ul.facets a", text="Jardín (12)")),
    )  # fmt: skip
    assert [o.value for _, o in filter_matches([links], "jardín")] == ["/c/j"]
    assert [o.value for _, o in filter_matches([links], "kitchen")] == ["/c/k"]
    assert filter_matches([links, bar], "precio") == []  # a sort bar never filters


@in_chromium
async def test_the_dry_run_flags_an_item_that_reads_like_a_pager(browser, tmp_path):
    from tui_agent.web.generate.dry_run import DryRun, DryRunOutcome

    rows = "".join(f"<tr><td><a href='/p/{n}'>Product {n}</a></td></tr>" for n in range(1, 3))
    page = tmp_path / "rows.html"
    page.write_text(
        f"<meta charset='utf-8'><table><tbody>{rows}"
        "<tr><td><a href='?p=0'>← Previous</a> | <a href='?p=2'>Next →</a></td></tr>"
        "</tbody></table>"
    )
    recipe = parse_recipe(
        {
            "bindings": {"LIST_ITEM": "tbody > tr", "CLICK_BEHAVIOR": "inline"},
            "recipe": {
                "id": "rows",
                "name": "rows",
                "commands": [
                    {
                        "type": "FOR_EACH_ITEM_IN_LIST",
                        "body": [
                            {"type": "EXTRACT_DETAILS"},
                            {"type": "SAVE", "as": "item"},
                            {"type": "MARK_DONE"},
                        ],
                    }
                ],
            },
        }
    )
    trial = DryRun(browser, page.as_uri(), recipe, items=5)
    events, tried = await collect(trial.run(), DryRunOutcome)
    assert tried.control_like == ["← Previous | Next →"]
    assert warnings(events) == [
        "dry run: an item looks like a page control, not an item: '← Previous | Next →' "
        "(LIST_ITEM may match a pager or a menu)"
    ]
