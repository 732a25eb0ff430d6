"""parse_intent reads counts, filters, sorts and searches from natural tasks; no model."""

import pytest

from tui_agent.web.plan import (
    SORT_KEYS,
    TaskIntent,
    intent_prompt,
    known_language,
    needed_generators,
    parse_intent,
    read_intent,
    sort_field,
)


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


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        (
            "Extrae 12 productos de la categoría Cocina, ordenados por precio de menor a mayor",
            TaskIntent(max_items=12, filters=["cocina"], sort="price_asc"),
        ),
        ("Extrae doce productos", TaskIntent(max_items=12)),
        ("Extrae los primeros 20 productos, los más baratos", TaskIntent(20, sort="price_asc")),
        ("Extrae 12 productos, solo Jardín", TaskIntent(max_items=12, filters=["jardín"])),
        ("Busca 'roble' y extrae 5 productos", TaskIntent(max_items=5, search="roble")),
        (
            "Extraire 15 produits de la catégorie Bureau triés par prix décroissant",
            TaskIntent(max_items=15, filters=["bureau"], sort="price_desc"),
        ),
        ("Récupère les 10 produits les mieux notés", TaskIntent(10, sort="rating_desc")),
        (
            "Extrahiere 8 Produkte aus der Kategorie Küche, sortiert nach Preis aufsteigend",
            TaskIntent(max_items=8, filters=["küche"], sort="price_asc"),
        ),
        ("Extrahiere zehn Artikel, neueste zuerst", TaskIntent(10, sort="date_desc")),
        (
            "Extraia 12 produtos da categoria Escritório, ordenados por preço do maior para o "
            "menor",
            TaskIntent(max_items=12, filters=["escritório"], sort="price_desc"),
        ),
        ("Extraia 5 produtos que contenham 'carvalho'", TaskIntent(5, search="carvalho")),
        ("Extract 5 items, only Garden tools", TaskIntent(5, filters=["garden tools"])),
    ],
)
def test_tasks_in_spanish_french_german_and_portuguese(task: str, expected: TaskIntent) -> None:
    assert parse_intent(task) == expected
    assert known_language(task)


@pytest.mark.parametrize("task", ["Estrai 12 prodotti", "12個の商品を抽出", "Haal 12 producten op"])
def test_tasks_in_other_languages_are_left_to_the_model(task: str) -> None:
    assert not known_language(task)
    assert parse_intent(task) == TaskIntent()


def test_the_models_reading_of_a_task_is_checked() -> None:
    answer = '{"max_items": "7", "filters": ["Cucina"], "sort": "price_asc", "search": null}'
    assert read_intent("Here:\n" + answer) == TaskIntent(7, ["cucina"], "price_asc")
    wrong = '{"max_items": -2, "filters": "x", "sort": "cheapest", "search": "  "}'
    assert read_intent(wrong) == TaskIntent(filters=["x"])
    assert read_intent("no JSON here") is None
    assert read_intent("[1, 2]") is None
    messages = intent_prompt("Estrai 7 prodotti")
    assert (
        "Estrai 7 prodotti" in messages[-1]["content"] and '"price_asc"' in messages[-1]["content"]
    )
