"""Forms filled from the task before any list shows, and fields read on a page each item links to.

The unit tests read tasks and options; the Chromium tests scrape a loopback site
(`forms_site.py`): a POST search form whose author select reloads the page with the tag
select filled, a GET search box, and quotes whose "(about)" link leads to the author's page.
"""

from __future__ import annotations

from typing import Any

import pytest
from forms_site import AUTHORS, BOOKS, QUOTES, FormsSite, find_matches, search_matches
from support.requirements import require_chromium

from tui_agent.agents.scrape import ScrapeAgent
from tui_agent.events import Artifact, Event, ItemsExtracted, SessionEnded
from tui_agent.web.browser import Browser
from tui_agent.web.generate.recipe_writer import build_recipe
from tui_agent.web.phase import collect
from tui_agent.web.plan import OfflinePlanner, PlanOutcome, Strategy, parse_intent, parse_strategy
from tui_agent.web.plan.item_links import link_selectors
from tui_agent.web.plan.labelled_fields import labelled_fields
from tui_agent.web.plan.page_forms import FormFill, FormStep, choose_option
from tui_agent.web.plan.strategy import Fragment, StrategyField
from tui_agent.web.probe import Probes

# -- reading the task ----------------------------------------------------------------------------


def test_fields_on_the_author_page_are_read_there_never_as_a_filter() -> None:
    task = "Extract 10 quotes with the text and the author's birth date from the author page"
    intent = parse_intent(task)
    assert (intent.item_page, intent.page_fields) == ("author", ["birth date"])
    assert (intent.filters, intent.max_items) == ([], 10)
    assert "birth date from the author page" in intent.describe()


@pytest.mark.parametrize(
    ("task", "page"),
    [
        ("Get 20 books with the publisher on each book's page", ""),
        ("Get 10 jobs with the salary from the detail page", ""),
        ("Extract 9 books with title and publisher (the publisher is on each book's page)", ""),
        ("Scrape 5 posts and the bio from the author's profile page", "author"),
        ("Get the products on the first page", None),
        ("Extract 30 products from page 2", None),
        ("Extract the items on this page", None),
    ],
)
def test_which_page_a_task_reads_fields_on(task: str, page: str | None) -> None:
    assert parse_intent(task).item_page == page


@pytest.mark.parametrize(
    ("task", "filters"),
    [
        ("Extract 15 poetry books with title, author, year and rating", ["poetry"]),
        ("Extract 12 history books with title, author and year", ["history"]),
        ("Extract 25 tickets with id, summary and owner", []),
        ("Extract 30 most recent books", []),
        ("Extract 10 quotes by Albert Einstein", []),
    ],
)
def test_words_between_a_count_and_what_it_counts_filter(task: str, filters: list[str]) -> None:
    assert parse_intent(task).filters == filters


def test_select_options_are_chosen_by_the_tasks_words() -> None:
    authors = [
        {"value": "", "label": "----------"},
        {"value": "Albert Einstein", "label": "Albert Einstein"},
        {"value": "Jane Austen", "label": "Jane Austen"},
    ]
    chosen = choose_option(authors, "Extract quotes by albert einstein tagged changes")
    assert chosen is not None and chosen["value"] == "Albert Einstein"  # case does not matter
    tags = [{"value": "x", "label": "----------"}, {"value": "change", "label": "change"}]
    assert choose_option(tags, "quotes tagged changes")["value"] == "change"  # plural
    assert choose_option(tags, "quotes that changed the world")["value"] == "change"
    assert choose_option(tags, "quotes about love") is None
    placeholders = [{"value": "all", "label": "All"}, {"value": "", "label": "Any genre"}]
    assert choose_option(placeholders, "all books of any genre") is None
    years = [{"value": "10", "label": "10"}, {"value": "the", "label": "The"}]
    assert choose_option(years, "Extract 10 of the books") is None  # counts and stop words


def test_the_link_to_the_page_the_task_names_is_chosen_by_meaning() -> None:
    links = [
        {"href": "/tag/change", "text": "change", "names": "tag", "classes": ["tag"],
         "before": "", "before_tag": "", "parent": "tags"},
        {"href": "/author/albert-einstein", "text": "(about)", "names": "", "classes": [],
         "before": "author", "before_tag": "small", "parent": ""},
    ]  # fmt: skip
    assert link_selectors(links, "author") == ['a[href*="author/"]', "small.author + a"]
    assert link_selectors(links, "publisher") == []


def _form_fragments() -> list[Fragment]:
    filled = FormFill(
        steps=[FormStep("select", "#author", {"type": "SELECT", "selector": "#author",
                                              "value": "Ada"}, "Ada")],
        submit={"type": "CLICK", "selector": "#go"},
    )  # fmt: skip
    return filled.fragments()


def test_a_recipe_fills_the_form_before_it_waits_for_the_list() -> None:
    strategy = Strategy(list_container="div.results", list_item="div.quote")
    formed = build_recipe(strategy, _form_fragments(), recipe_id="r", name="r", max_items=None)
    kinds = [(c.type, getattr(c, "target", None)) for c in formed.recipe.commands]
    assert kinds[:5] == [
        ("WAIT_FOR", "page"), ("WAIT_FOR", None), ("SELECT", None), ("CLICK", None),
        ("WAIT_FOR", "list"),
    ]  # fmt: skip
    other = Fragment(
        generator="SortGenerator", description="sort", commands=[{"type": "SELECT",
                                                                   "selector": "#s", "value": "p"}]
    )  # fmt: skip
    sorted_first = build_recipe(strategy, [other], recipe_id="r", name="r", max_items=None)
    assert [c.type for c in sorted_first.recipe.commands][:3] == ["WAIT_FOR", "WAIT_FOR", "SELECT"]
    assert sorted_first.recipe.commands[1].target == "list"  # a list is there before a sort


# -- in Chromium, on a loopback site -------------------------------------------------------------


@pytest.fixture(scope="module")
def site():
    with FormsSite() as running:
        yield running


async def scrape(
    url: str, task: str, max_items: int | None = None
) -> tuple[list[Any], list[Event]]:
    """Run the offline scrape on `url`: the items saved and every event."""
    require_chromium()
    agent = ScrapeAgent(url, task, llm=None, max_items=max_items, wait=2.0)
    events = [event async for event in agent.run(Browser())]
    ended = events[-1]
    assert isinstance(ended, SessionEnded) and ended.status == "completed", ended
    items = [item for e in events if isinstance(e, ItemsExtracted) for item in e.items]
    return items, events


def _strategy(events: list[Event]) -> Strategy:
    artifact = next(e for e in events if isinstance(e, Artifact) and e.name == "strategy")
    return parse_strategy(artifact.content)


@pytest.mark.chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_a_dependent_select_form_is_filled_and_its_results_scraped(site) -> None:
    task = "Extract quotes by Albert Einstein tagged change"
    items, events = await scrape(site.url("/search"), task)
    expected = [QUOTES[i][0] for i in search_matches("Albert Einstein", "change")]
    assert len(expected) == 3
    assert [item["text"].split(".by ")[0] + "." for item in items] == expected
    strategy = _strategy(events)
    assert strategy.list_item and "quote" in strategy.list_item
    assert strategy.needed_generators == ["FilterGenerator"]
    recipe = next(e for e in events if isinstance(e, Artifact) and e.name == "recipe").content
    assert '"Albert Einstein"' in recipe and '"change"' in recipe  # the form's steps, replayed


@pytest.mark.chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_a_search_box_is_filled_and_each_result_opened(site) -> None:
    task = "Search for river and get 3 books with the year, and the publisher from each book's page"
    items, events = await scrape(site.url("/find"), task)
    books = [BOOKS[i] for i in find_matches("river")]
    assert [(i["title"], i["publisher"]) for i in items] == [(b[0], b[2]) for b in books]
    strategy = _strategy(events)
    assert strategy.needed_generators == ["SearchGenerator"]
    assert "publisher" in strategy.details_fields and strategy.click_behavior == "navigates"


@pytest.mark.chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_fields_the_task_puts_on_the_author_page_are_read_there(site) -> None:
    task = "Extract 4 quotes with the text and the author's birth date from the author page"
    items, events = await scrape(site.url("/quotes"), task, max_items=4)
    born = [AUTHORS[QUOTES[i][1]][1] for i in range(4)]
    assert [item["author_born"] for item in items] == born
    assert [item["author"] for item in items] == [AUTHORS[QUOTES[i][1]][0] for i in range(4)]
    assert all(item["text"].startswith(QUOTES[i][0]) for i, item in enumerate(items))
    strategy = _strategy(events)
    assert strategy.click_behavior == "navigates"
    assert strategy.click_target == 'a[href*="author/"]'
    assert strategy.needed_generators == []  # "author" is not a filter


@pytest.mark.chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_a_page_with_a_form_the_task_does_not_name_still_has_no_list(site) -> None:
    require_chromium()
    async with Browser() as browser:
        page = await browser.page()
        await page.goto(site.url("/search"))
        planner = OfflinePlanner(Probes(page, wait=1.0), "Extract 10 items", page.url, wait=1.0)
        _, outcome = await collect(planner.run(), PlanOutcome)
    assert outcome.strategy is None and "no repeated list" in str(outcome.failure)


LABELLED = """<main id="details"><h1>View book</h1>
<div class="form-row field-publisher"><div><label>Publisher:</label>
<div class="readonly">Harbor House</div></div></div>
<div class="form-row field-year"><div><label>Year:</label>
<div class="readonly">1999</div></div></div>
<table class="properties"><tr><th id="h_priority">Priority:</th><td>major</td></tr>
<tr><th id="h_owner">Owner:</th><td>dan</td></tr></table></main>"""


@pytest.mark.chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_fields_the_task_names_are_found_by_their_labels(page) -> None:
    await page.set_content(LABELLED)
    found = await labelled_fields(page, "#details", ["publisher", "priority", "birth date"])
    assert found == {
        "publisher": StrategyField(selector="#details .field-publisher", prefix="Publisher"),
        "priority": StrategyField(selector="#details #h_priority + td"),
    }
