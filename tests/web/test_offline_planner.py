"""The offline planner in real Chromium: every demo layout, a generic shop, a page with no list.

Each strategy is checked the way the interpreter uses it: its bindings run in RecipeInterpreter on
the first items (clicking as the strategy says, reading DETAILS_FIELDS and ITEM_FIELDS) and
the values are compared with the demo site's ground truth; the list controls are compared
with the layout's anatomy (tests may read it; the planner may not).
"""

import json
from typing import Any

import pytest

from tui_agent.demo_site import FIELDS
from tui_agent.demo_site.anatomy import ANATOMY, CARD_LAYOUTS, ITEM, LIST
from tui_agent.events import Event, Log, ToolCall, ToolResult
from tui_agent.web.browser import Browser
from tui_agent.web.generate.recipe_writer import build_recipe
from tui_agent.web.phase import collect
from tui_agent.web.plan import OfflinePlanner, PlanOutcome, Strategy
from tui_agent.web.plan.field_names import scoped
from tui_agent.web.probe import Probes
from tui_agent.web.recipe import RecipeInterpreter, RunOutcome, parse_recipe

pytestmark = [pytest.mark.chromium, pytest.mark.asyncio(loop_scope="module")]

READ = 3
"""Items read per layout to compare with the ground truth."""
SAME_ELEMENTS = """([found, truth]) => {
  const a = [...document.querySelectorAll(found)], b = [...document.querySelectorAll(truth)];
  return a.length > 0 && a.length === b.length && a.every((el, i) => el === b[i]);
}"""


@pytest.fixture(scope="module")
def plans() -> dict[str, "Planned"]:
    """Each demo layout planned once per module (layout -> its run)."""
    return {}


class Planned:
    """One planner run: its events, its outcome, the planner and the probes it used."""

    def __init__(self, planner: OfflinePlanner, events: list[Event], outcome: PlanOutcome) -> None:
        self.planner = planner
        self.events = events
        self.outcome = outcome

    @property
    def strategy(self) -> Strategy:
        assert self.outcome.strategy is not None, self.outcome.failure
        return self.outcome.strategy

    def verified(self, selector: str) -> bool:
        return selector in self.planner.probes.verified


async def plan(browser: Browser, url: str, task: str = "Extract 20 items", route=None) -> Planned:
    page = await browser.page()
    try:
        if route is not None:
            await page.route("http://shop.test/**", route)
        await page.goto(url)
        planner = OfflinePlanner(Probes(page), task, url)
        events, outcome = await collect(planner.run(), PlanOutcome)
        return Planned(planner, events, outcome)
    finally:
        await page.context.close()


TASKS = {"filter": "Extract 10 kitchen items sorted by price, lowest first"}
"""The task each layout is planned for (else "Extract 20 items")."""


async def demo_plan(browser: Browser, demo_site, plans: dict[str, Planned], layout: str) -> Planned:
    if layout not in plans:
        task = TASKS.get(layout, "Extract 20 items")
        plans[layout] = await plan(browser, demo_site.url(layout), task)
    return plans[layout]


def bindings(strategy: Strategy, click: bool = True) -> dict[str, Any]:
    """The strategy as recipe bindings, as the contract says they are read (no click: the
    items' own fields only)."""
    data: dict[str, Any] = {"LIST": strategy.list_container, "LIST_ITEM": strategy.list_item}
    data["ITEM_FIELDS"] = {n: f.as_binding() for n, f in strategy.item_fields.items()}
    if not click:
        return data | {"CLICK_BEHAVIOR": "inline"}
    data |= {
        "CLICK_BEHAVIOR": strategy.click_behavior,
        "DETAILS_FIELDS": {n: f.as_binding() for n, f in strategy.details_fields.items()},
        "DETAILS_LOADED": {"exists": strategy.details_loaded},
    }
    if strategy.details_panel:
        data["DETAILS_PANEL"] = strategy.details_panel
    if strategy.close_details:
        data["CLOSE_DETAILS"] = strategy.close_details
    return data


async def read(browser: Browser, url: str, strategy: Strategy, click: bool, route=None) -> list:
    """The first READ items as RecipeInterpreter reads them with the strategy's selectors."""
    target = {"type": "CLICK", "selector": strategy.click_target, "within": "item"}
    first = target if strategy.click_target else {"type": "CLICK"}
    body = [first, {"type": "WAIT_FOR", "target": "details"}] if click else []
    body += [{"type": "EXTRACT_DETAILS"}, {"type": "SAVE", "as": "item"}, {"type": "MARK_DONE"}]
    recipe = parse_recipe(
        {
            "bindings": bindings(strategy, click),
            "recipe": {
                "id": "offline-check",
                "name": "offline check",
                "commands": [
                    {"type": "WAIT_FOR", "target": "list"},
                    {"type": "FOR_EACH_ITEM_IN_LIST", "body": body},
                ],
            },
        }
    )
    page = await browser.page()
    try:
        if route is not None:
            await page.route("http://shop.test/**", route)
        await page.goto(url)
        _, ran = await collect(RecipeInterpreter(page, recipe, max_items=READ).run(), RunOutcome)
        return ran.items
    finally:
        await page.context.close()


def accuracy(items: list[dict], truth: list[dict], names: set[str]) -> float:
    """Share of the truth's values (of `names`) read exactly; a value read where the truth
    has none counts as a miss too."""
    right = total = 0
    for item, record in zip(items, truth, strict=True):
        for name in names:
            if name in record:
                total += 1
                right += item.get(name) == record[name]
            elif item.get(name) is not None:
                total += 1
    return right / total


def well_formed(events: list[Event]) -> None:
    """Every tool call answered, with offline-N ids in order, and findings logged."""
    calls = [e for e in events if isinstance(e, ToolCall)]
    results = {e.call_id: e for e in events if isinstance(e, ToolResult)}
    assert [c.call_id for c in calls] == [f"offline-{n}" for n in range(1, len(calls) + 1)]
    assert set(results) == {c.call_id for c in calls}
    names = {c.name for c in calls}
    assert {"find_lists", "read_fields", "probe_click", "scroll_and_observe"} <= names
    assert any(isinstance(e, Log) for e in events)


# --- every demo layout ---------------------------------------------------------------------


@pytest.mark.parametrize("layout", CARD_LAYOUTS)
async def test_each_layouts_strategy_reads_the_ground_truth(browser, demo_site, plans, layout):
    url = demo_site.url(layout)
    planned = await demo_plan(browser, demo_site, plans, layout)
    strategy, anatomy = planned.strategy, ANATOMY[layout]
    assert planned.outcome.failure is None
    assert planned.outcome.output == strategy.to_markdown()
    well_formed(planned.events)

    # The list, the click and the list's controls are the layout's own.
    assert strategy.click_behavior == anatomy.click_behavior
    page = await browser.page()
    try:
        await page.goto(url)
        await page.wait_for_selector(strategy.list_item)
        assert await page.evaluate(SAME_ELEMENTS, [strategy.list_item, f"{LIST} > {ITEM}"])
        assert await page.evaluate(SAME_ELEMENTS, [strategy.list_container, LIST])
        for found, truth in (
            (strategy.pagination_button, anatomy.next_page),
            (strategy.load_more_button, anatomy.load_more),
        ):
            assert (found is None) == (truth is None)
            if found is not None:
                assert await page.evaluate(SAME_ELEMENTS, [found, truth])
        if anatomy.click_behavior != "inline":  # shown only once an item's details are
            assert await page.locator(strategy.details_loaded).count() == 0
        if anatomy.close is None:  # only details that block the list need closing
            assert strategy.close_details is None
        else:  # the dialog's own close button (in the page while the dialog is open)
            await page.locator(strategy.list_item).first.click()
            await page.wait_for_selector(strategy.details_loaded)
            assert await page.evaluate(SAME_ELEMENTS, [strategy.close_details, anatomy.close])
    finally:
        await page.context.close()
    assert strategy.scroll_loads_more == (layout == "infinite")

    # Every selector was matched by a tool call of this session, relative ones also inside
    # the item they are read in.
    item = strategy.list_item
    assert [s for s in strategy.selectors() if not planned.verified(s)] == []
    for spec in strategy.item_fields.values():
        assert planned.verified(scoped(spec.selector, item))
    if strategy.click_behavior == "inline":
        for selector in (
            strategy.details_panel,
            *(f.selector for f in strategy.details_fields.values()),
        ):
            assert planned.verified(f"{item} {selector}")

    # Named as the ground truth names its fields; read as the interpreter reads them.
    assert set(strategy.details_fields) | set(strategy.item_fields) == set(FIELDS)
    truth = demo_site.ground_truth(layout)[:READ]
    clicked = await read(browser, url, strategy, click=True)
    assert len(clicked) == READ
    assert accuracy(clicked, truth, set(FIELDS)) >= 0.95
    if set(strategy.item_fields) >= set(FIELDS):  # the cards show every field
        in_place = await read(browser, url, strategy, click=False)
        assert accuracy(in_place, truth, set(FIELDS)) >= 0.95


async def test_the_task_decides_the_needed_generators(browser, demo_site, plans):
    filtered = (await demo_plan(browser, demo_site, plans, "filter")).strategy
    assert filtered.needed_generators == ["FilterGenerator", "SortGenerator"]
    assert filtered.plan[-1] == "Stop after 10 items."
    assert any("kitchen" in line for line in filtered.understanding)
    plain = (await demo_plan(browser, demo_site, plans, "panel")).strategy
    assert plain.needed_generators == []
    assert plain.plan[-1] == "Stop after 20 items."


# --- through the recipe generator and the interpreter ------------------------------------------


@pytest.mark.parametrize(("layout", "limit"), [("inline", 5), ("pagination", 30)])
async def test_the_built_recipe_extracts_the_ground_truth(browser, demo_site, plans, layout, limit):
    url = demo_site.url(layout)
    strategy = (await demo_plan(browser, demo_site, plans, layout)).strategy
    recipe = build_recipe(strategy, [], recipe_id=f"offline-{layout}", name="x", max_items=limit)
    page = await browser.page()
    try:
        await page.goto(url)
        _, ran = await collect(RecipeInterpreter(page, recipe).run(), RunOutcome)
    finally:
        await page.context.close()
    truth = demo_site.ground_truth(layout)[:limit]
    assert len(ran.items) == limit
    assert accuracy(ran.items, truth, set(FIELDS)) >= 0.95


# --- a generic shop: schema.org markup, table labels, only the title links ------------------

SHOP = [
    ("Blue Teapot", "€12.00", "Ann's Attic", "12 March 2024", "Used"),
    ("Brass Candle Holder", "€8.50", "Old Town Finds", "3 April 2024", "Good"),
    ("Wool Throw Blanket", "€24.00", "Ann's Attic", "28 April 2024", "New"),
    ("Enamel Jug", "€15.75", "Harbour Antiques", "2 May 2024", "Worn"),
]


def _listing() -> str:
    cards = "".join(
        f'<article class="result" itemscope itemtype="https://schema.org/Product">'
        f'<h2><a href="/item/{n}">{title}</a></h2><span itemprop="price">{price}</span>'
        f"<table><tr><th>Sold by</th><td>{seller}</td></tr></table>"
        f'<p style="height: 120px">A second-hand find, photographed in daylight.</p></article>'
        for n, (title, price, seller, _, _) in enumerate(SHOP, 1)
    )
    return (
        "<html><body><header><nav><a href='/'>Home</a> <a href='/about'>About</a> "
        "<a href='/help'>Help</a></nav></header><main><h1>Listings</h1>"
        f'<div class="results">{cards}</div></main></body></html>'
    )


def _detail(n: int) -> str:
    title, price, seller, posted, condition = SHOP[n - 1]
    return (
        "<html><body><main><p><a href='/listings'>All listings</a></p>"
        f'<div class="product"><h1 itemprop="name">{title}</h1><dl>'
        f"<dt>Price</dt><dd>{price}</dd><dt>Sold by</dt><dd>{seller}</dd>"
        f"<dt>Posted</dt><dd>{posted}</dd><dt>Condition</dt><dd>{condition}</dd></dl>"
        f'<p class="summary">{title}, {condition.lower()}, from {seller}.</p></div>'
        "</main></body></html>"
    )


HTML = "text/html; charset=utf-8"


async def shop(route) -> None:
    path = route.request.url.removeprefix("http://shop.test")
    if path == "/listings":
        await route.fulfill(body=_listing(), content_type="text/html; charset=utf-8")
    elif path.startswith("/item/"):
        await route.fulfill(
            body=_detail(int(path.rsplit("/", 1)[1])), content_type="text/html; charset=utf-8"
        )
    else:
        await route.fulfill(status=404, body="not here", content_type="text/plain")


async def test_a_generic_shop_whose_items_only_link_is_planned_by_its_link(browser):
    url = "http://shop.test/listings"
    planned = await plan(browser, url, route=shop)
    strategy = planned.strategy
    well_formed(planned.events)
    assert strategy.click_behavior == "navigates"
    # The card itself does not respond to a click: its link is clicked, the card stays the item.
    assert (strategy.list_item, strategy.click_target) == ("article.result", "a")
    assert set(strategy.details_fields) == {
        "title", "price", "date", "seller", "description", "condition"
    }  # fmt: skip
    items = await read(browser, url, strategy, click=True, route=shop)
    truth = [
        {
            "title": title,
            "price": price,
            "seller": seller,
            "date": posted,
            "condition": condition,
            "description": f"{title}, {condition.lower()}, from {seller}.",
            "url": f"http://shop.test/item/{n}",
        }
        for n, (title, price, seller, posted, condition) in enumerate(SHOP, 1)
    ][:READ]
    assert accuracy(items, truth, set(truth[0])) == 1.0


# --- a sheet over the whole page, closed by an icon button or by nothing ------------------

SHEET_PAGE = """<html><body><main><h1>Open positions</h1><ul class="jobs">{rows}</ul></main>
<script>
document.addEventListener("click", (event) => {{
  const row = event.target.closest("li.job");
  if (!row) return;
  event.preventDefault();
  const sheet = document.createElement("div");
  sheet.className = "sheet";
  sheet.style.cssText = "position: fixed; inset: 0; background: white";
  sheet.innerHTML = `<h2 class="job-title">${{row.dataset.title}}</h2>`
    + `<p class="job-pay">Pay: ${{row.dataset.pay}}</p>` + {close};
  document.body.append(sheet);
  const close = sheet.querySelector("[aria-label]");
  if (close) close.addEventListener("click", () => sheet.remove());
}});
</script></body></html>"""
JOBS = [("Baker", "€14/h"), ("Cook", "€16/h"), ("Waiter", "€12/h"), ("Porter", "€11/h")]


def sheet_site(close: str) -> Any:
    """A route handler serving the job list whose sheets end with `close` (a JS string)."""
    rows = "".join(
        f'<li class="job" data-title="{title}" data-pay="{pay}"><a href="/job/{n}">{title}</a> '
        f"<span>Lyon</span></li>"
        for n, (title, pay) in enumerate(JOBS, 1)
    )
    html = SHEET_PAGE.format(rows=rows, close=close)

    async def serve(route) -> None:
        await route.fulfill(body=html, content_type="text/html; charset=utf-8")

    return serve


@pytest.mark.parametrize("closable", [True, False], ids=["icon-button", "nothing-closes"])
async def test_a_sheet_over_the_list_is_closed_by_what_closes_it(browser, closable):
    button = "<button class='icon' aria-label='Close'><svg width='12' height='12'></svg></button>"
    route = sheet_site(json.dumps(button) if closable else '""')
    planned = await plan(browser, "http://shop.test/jobs", route=route)
    strategy = planned.strategy
    assert strategy.click_behavior == "shows_panel"
    assert set(strategy.details_fields) == {"title", "salary"}  # "Pay: ..." is a salary
    warned = [e.message for e in planned.events if isinstance(e, Log) and e.level == "warning"]
    if closable:
        assert strategy.close_details is not None and planned.verified(strategy.close_details)
        assert warned == []
        items = await read(browser, "http://shop.test/jobs", strategy, click=True, route=route)
        assert (
            [(i["title"], i["salary"]) for i in items]
            == [  # the label "Pay:" left out
                (title, pay) for title, pay in JOBS[:READ]
            ]
        )
    else:  # planned all the same (the list loaded again), and said why a recipe will stall
        assert strategy.close_details is None
        assert warned == [
            "the details cover the list and neither a close control nor Escape closes them: "
            "items after the first may not be reachable"
        ]


# --- no list --------------------------------------------------------------------------------


async def test_a_page_without_a_list_is_a_clear_error(browser):
    page = await browser.page()
    try:
        await page.set_content("<main><h1>About us</h1><p>We sell nothing.</p></main>")
        planner = OfflinePlanner(Probes(page), "Extract 20 items", "about:blank")
        events, planned = await collect(planner.run(), PlanOutcome)
    finally:
        await page.context.close()
    assert planned.strategy is None
    assert planned.failure is not None
    assert planned.failure.startswith("no repeated list of items found on about:blank (waited ")
    assert isinstance(events[-1], Log) and events[-1].message == planned.failure
    assert [e.ok for e in events if isinstance(e, ToolResult)] == [False]


# --- a pager read with the wrong charset; a next page that fails is said so ----------------

BROKEN_PAGER = """<html><body><main><ul class="offers">{rows}</ul>
<nav class="pager"><a class="next" href="/offers?page=2">Next »</a></nav></main></body></html>"""


async def broken_pager(route) -> None:
    """Page 1 lists three offers and links page 2, which is an error page with no list. Served
    with no charset, as a plain static server does: Chromium reads "Next »" as "Next Â»"."""
    if route.request.url.endswith("page=2"):
        body = "<html><body><h1>Internal error</h1><p>Try again later.</p></body></html>"
    else:
        rows = "".join(
            f'<li class="offer"><h3>Offer {n}</h3><span class="price">${n}.00</span></li>'
            for n in (1, 2, 3)
        )
        body = BROKEN_PAGER.format(rows=rows)
    await route.fulfill(status=200, content_type="text/html", body=body)


async def test_a_next_page_that_fails_is_said_to_have_failed(browser):
    planned = await plan(browser, "http://shop.test/offers", route=broken_pager)
    strategy = planned.strategy
    assert strategy.pagination_button is None
    understanding = " ".join(strategy.understanding)
    assert "A next-page control (`a.next`) was found but going to the next page failed" in (
        understanding
    )
    assert "there is no pagination" not in understanding
    warnings = [e.message for e in planned.events if isinstance(e, Log) and e.level == "warning"]
    assert any(w.startswith("pagination dropped: ") for w in warnings), warnings
