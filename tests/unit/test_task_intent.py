"""parse_intent reads counts, filters, sorts and searches from natural tasks; no model."""

import pytest

from tui_agent.web.plan import SORT_KEYS, TaskIntent, needed_generators, parse_intent, sort_field


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        ("Extract 20 items", TaskIntent(max_items=20)),
        ("Extract 20 items from this page", TaskIntent(max_items=20)),
        ("Scrape all products", TaskIntent()),
        ("Extract 20 product listings", TaskIntent(max_items=20)),
        ("Get top 10 products", TaskIntent(max_items=10)),
        ("Extract twenty items", TaskIntent(max_items=20)),
        ("Scrape up to 30 results", TaskIntent(max_items=30)),
        ("Extract 15", TaskIntent(max_items=15)),
        (
            "Get the first 50 kitchen products sorted by price, cheapest first",
            TaskIntent(max_items=50, filters=["kitchen"], sort="price_asc"),
        ),
        (
            "Extract 20 kitchen items sorted by price, lowest first, matching 'oak'",
            TaskIntent(max_items=20, filters=["kitchen"], sort="price_asc", search="oak"),
        ),
        ("items matching 'oak'", TaskIntent(search="oak")),
        ("items matching \u201cWalnut & Brass\u201d", TaskIntent(search="Walnut & Brass")),
        ("search for lamp", TaskIntent(search="lamp")),
        ("search for lamp products", TaskIntent(search="lamp")),
        (
            "search for oak lamp sorted by price",
            TaskIntent(sort="price_asc", search="oak lamp"),
        ),
        ("Extract 10 items, newest first", TaskIntent(max_items=10, sort="date_desc")),
        ("Extract the newest 20 items", TaskIntent(max_items=20, sort="date_desc")),
        ("top rated products", TaskIntent(sort="rating_desc")),
        (
            "Get 10 outdoor products, top rated",
            TaskIntent(max_items=10, filters=["outdoor"], sort="rating_desc"),
        ),
        ("Extract items in category Outdoor", TaskIntent(filters=["outdoor"])),
        (
            "Extract 30 products from the Office category, A-Z",
            TaskIntent(max_items=30, filters=["office"], sort="title_asc"),
        ),
        ("find lamps filtered by Home", TaskIntent(filters=["home"])),
        ("Extract items with category: Kitchen", TaskIntent(filters=["kitchen"])),
    ],
)
def test_parse_intent(task: str, expected: TaskIntent) -> None:
    assert parse_intent(task) == expected


@pytest.mark.parametrize(
    ("task", "sort"),
    [
        ("sorted by price", "price_asc"),
        ("sorted by price, highest first", "price_desc"),
        ("sort by price descending", "price_desc"),
        ("Price: high to low", "price_desc"),
        ("the most expensive ones", "price_desc"),
        ("ordered by rating", "rating_desc"),
        ("sorted by rating, lowest first", "rating_asc"),
        ("best rated", "rating_desc"),
        ("sort by date, oldest first", "date_asc"),
        ("sorted by date", "date_desc"),
        ("most recent first", "date_desc"),
        ("sorted by name", "title_asc"),
        ("sorted by title descending", "title_desc"),
        ("alphabetically", "title_asc"),
        ("Z-A", "title_desc"),
        ("sorted by price in category Outdoor, newest added", "price_asc"),
        ("Extract 20 items", None),
    ],
)
def test_sort_phrases(task: str, sort: str | None) -> None:
    assert parse_intent(task).sort == sort


def test_a_count_is_not_a_rating_or_a_search() -> None:
    intent = parse_intent("Extract 5 top rated products")
    assert intent == TaskIntent(max_items=5, sort="rating_desc")


def test_needed_generators_in_run_order() -> None:
    assert needed_generators(parse_intent("Extract 20 items")) == []
    both = parse_intent("search for lamp in category Home, cheapest first")
    assert needed_generators(both) == ["FilterGenerator", "SortGenerator", "SearchGenerator"]
    assert needed_generators(TaskIntent(sort="date_desc")) == ["SortGenerator"]


def test_sort_field_and_describe() -> None:
    assert sort_field("price_asc") == ("price", False)
    assert sort_field("rating_desc") == ("rating", True)
    assert all(sort_field(key)[0] in ("price", "rating", "date", "title") for key in SORT_KEYS)
    with pytest.raises(ValueError, match="unknown sort 'size_asc'"):
        sort_field("size_asc")
    text = parse_intent("Get 50 kitchen products sorted by price matching 'oak'").describe()
    assert text == "50 items; filter kitchen; sort price, lowest first; search 'oak'"
    assert TaskIntent().describe() == "all items"
