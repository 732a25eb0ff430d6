"""Fields of markup written by real web software (quotes, Pelican, Datasette, Django admin, Trac),
named and read in real Chromium.

Values come without their labels ("Tags:", "By", "In", "Priority:"); several values of one
kind (tags) come as a list; a link that only points ("(about)", "1", "#8", "read more") is never
a title; a table cell is named by its column's header and read in its own column; a field
the task names in its own words takes them.
"""

import pytest
from support.requirements import in_chromium

from tui_agent.web.phase import collect
from tui_agent.web.plan import Strategy, StrategyField, parse_strategy
from tui_agent.web.plan.asked_fields import asked_fields
from tui_agent.web.plan.field_names import CANDIDATES_JS, Candidate, merge_fields, name_fields
from tui_agent.web.recipe import RecipeInterpreter, RunOutcome, parse_recipe

QUOTE = (
    '<div class="quote" itemscope itemtype="http://schema.org/CreativeWork">'
    '<span class="text" itemprop="text">“{text}”</span>'
    '<span>by <small class="author" itemprop="author">{author}</small>'
    ' <a href="/author/{slug}">(about)</a></span>'
    '<div class="tags">Tags: <meta class="keywords" itemprop="keywords" content="{joined}">'
    "{links}</div></div>"
)
QUOTES = [
    ("The world as we have created it", "Albert Einstein", ["change", "deep-thoughts", "world"]),
    ("It is our choices", "J.K. Rowling", ["abilities", "choices"]),
    ("There are only two ways", "Albert Einstein", ["inspirational"]),
]

ARTICLE = (
    '<li><article class="hentry"><header><h1 class="entry-title"><a href="./post-{n}.html"'
    ' rel="bookmark" title="Permalink to Post {n}">Post number {n}</a></h1></header>'
    '<div class="entry-content"><footer class="post-info">'
    '<abbr class="published" title="2024-01-{n:02d}T00:00:00+00:00">Published: {date}</abbr>'
    '<address class="vcard author">By <a class="url fn" href="./author/{author_slug}.html">'
    "{author}</a></address>"
    '<p>In <a href="./category/{category_slug}.html">{category}</a>.</p>'
    "<p>tags: {tags} </p></footer>"
    "<p>Summary of post {n}.</p>"
    '<a class="readmore" href="./post-{n}.html">read more</a></div></article></li>'
)

READ = {
    "bindings": {"LIST_ITEM": ".item", "CLICK_BEHAVIOR": "inline"},
    "recipe": {
        "id": "read",
        "name": "read",
        "commands": [
            {"type": "WAIT_FOR", "target": "list"},
            {
                "type": "FOR_EACH_ITEM_IN_LIST",
                "body": [
                    {"type": "EXTRACT_DETAILS"},
                    {"type": "SAVE", "as": "item"},
                    {"type": "MARK_DONE"},
                ],
            },
        ],
    },
}


async def named(page, item: str, index: int = 0, wanted=()) -> dict:
    arg = {"root": item, "index": index, "inner": None, "item": True, "siblings": None}
    found = await page.evaluate(CANDIDATES_JS, arg)
    candidates = [Candidate.from_page(raw) for raw in found]
    return name_fields(candidates, wanted) if wanted else name_fields(candidates)


async def merged(page, item: str, count: int, wanted=()) -> dict:
    return merge_fields([await named(page, item, index, wanted) for index in range(count)])


async def read(page, item: str, fields: dict) -> list[dict]:
    bindings = {
        "LIST_ITEM": item,
        "CLICK_BEHAVIOR": "inline",
        "ITEM_FIELDS": {name: spec.as_binding() for name, spec in fields.items()},
    }
    recipe = parse_recipe({**READ, "bindings": bindings})
    _, ran = await collect(RecipeInterpreter(page, recipe).run(), RunOutcome)
    return ran.items


def quotes_page() -> str:
    blocks = []
    for text, author, tags in QUOTES:
        links = " ".join(f'<a class="tag" href="/tag/{t}/page/1/">{t}</a>' for t in tags)
        slug = author.replace(" ", "-").replace(".", "")
        blocks.append(
            QUOTE.format(text=text, author=author, slug=slug, joined=",".join(tags), links=links)
        )
    return f"<main class='col-md-8'>{''.join(blocks)}</main>"


@in_chromium
async def test_quotes_tags_are_a_list_without_their_label_and_about_is_no_title(shared_page):
    await shared_page.set_content(quotes_page())
    fields = await merged(shared_page, ".quote", len(QUOTES))
    assert fields["tags"].all and "title" not in fields
    assert fields["url"].attribute == "href"  # the "(about)" link may still be the url
    items = await read(shared_page, ".quote", fields)
    assert [(i["text"], i["author"], i["tags"]) for i in items] == [
        (f"“{text}”", author, tags) for text, author, tags in QUOTES
    ]
    assert items[0]["url"].endswith("/author/Albert-Einstein")


def pelican_page() -> str:
    posts = [
        ("Fri 26 January 2024", "Ada", "Code", ["maps", "stars"]),
        ("Thu 25 January 2024", "Bob", "Misc", ["rivers"]),
        ("Wed 24 January 2024", "Ada", "Code", ["glass", "maps", "stars"]),
    ]
    items = "".join(
        ARTICLE.format(
            n=24 - index,
            date=date,
            author=author,
            author_slug=author.lower(),
            category=category,
            category_slug=category.lower(),
            tags=" ".join(f'<a href="./tag/{t}.html">{t}</a>' for t in tags),
        )
        for index, (date, author, category, tags) in enumerate(posts)
    )
    return f'<section id="content"><ol id="posts-list" class="hfeed">{items}</ol></section>'


@in_chromium
async def test_pelican_labelled_values_come_without_their_labels(shared_page):
    await shared_page.set_content(pelican_page())
    fields = await merged(shared_page, "article.hentry", 3)
    assert {"title", "url", "date", "author", "category", "tags"} <= set(fields), fields
    items = await read(shared_page, "article.hentry", fields)
    got = [
        (i["title"], i["url"].rsplit("/", 1)[-1], i["date"], i["author"], i["category"], i["tags"])
        for i in items
    ]
    assert got == [
        ("Post number 24", "post-24.html", "Fri 26 January 2024", "Ada", "Code", ["maps", "stars"]),
        ("Post number 23", "post-23.html", "Thu 25 January 2024", "Bob", "Misc", ["rivers"]),
        ("Post number 22", "post-22.html", "Wed 24 January 2024", "Ada", "Code",
         ["glass", "maps", "stars"]),
    ]  # fmt: skip


DATASETTE = (
    '<table class="rows-and-columns"><thead><tr>'
    '<th class="col-id" scope="col" data-column="id"><a href="?_sort_desc=id">id&nbsp;▼</a></th>'
    '<th class="col-title" scope="col" data-column="title"><a href="?_sort=title">title</a></th>'
    '<th class="col-author" scope="col" data-column="author">author</th>'
    '<th class="col-genre" scope="col" data-column="genre">genre</th>'
    '<th class="col-year" scope="col" data-column="year">year</th>'
    '<th class="col-rating" scope="col" data-column="rating"><a href="?_sort=rating">rating</a>'
    "</th></tr></thead><tbody>{rows}</tbody></table>"
)
BOOKS = [
    (1, "Book number 1 about glass", "Ada Byron", "poetry", 1951, "4.7"),
    (2, "Book number 2 about maps", "Eve Moss", "fiction", 1987, "3.9"),
    (3, "Book number 3 about rivers", "Ada Byron", "history", 2003, "4.1"),
]


def datasette_page() -> str:
    rows = "".join(
        f'<tr><td class="col-id type-pk"><a href="/corpus/books/{pk}">{pk}</a></td>'
        f'<td class="col-title type-str">{title}</td><td class="col-author type-str">{author}</td>'
        f'<td class="col-genre type-str">{genre}</td><td class="col-year type-int">{year}</td>'
        f'<td class="col-rating type-float">{rating}</td></tr>'
        for pk, title, author, genre, year, rating in BOOKS
    )
    return DATASETTE.format(rows=rows)


@in_chromium
async def test_table_cells_take_their_column_header_and_their_own_value(shared_page):
    await shared_page.set_content(datasette_page())
    item = "table.rows-and-columns > tbody > tr"
    fields = await merged(shared_page, item, 3, wanted=["title", "author", "genre", "year"])
    assert {"title", "author", "genre", "year", "rating", "url"} <= set(fields), fields
    items = await read(shared_page, item, fields)
    assert [(i["title"], i["author"], i["genre"], i["year"], i["rating"]) for i in items] == [
        (title, author, genre, str(year), rating) for _, title, author, genre, year, rating in BOOKS
    ]
    assert [i["url"].rsplit("/", 1)[-1] for i in items] == ["1", "2", "3"]


@in_chromium
async def test_a_table_without_classes_is_named_by_headers_and_titled_by_its_first_text_cell(
    shared_page,
):
    rows = "".join(
        f"<tr><td><a href='/b/{pk}'>{pk}</a></td><td>{title}</td><td>{author}</td>"
        f"<td>{year}</td></tr>"
        for pk, title, author, _, year, _ in BOOKS
    )
    await shared_page.set_content(
        "<table><tr><th>#</th><th>Name of the book</th><th>Written by</th><th>Year</th></tr>"
        f"{rows}</table>"
    )
    item = "table tr:has(td)"
    fields = await merged(shared_page, item, 3)
    items = await read(shared_page, item, fields)
    assert [(i["title"], i["year"]) for i in items] == [(b[1], str(b[4])) for b in BOOKS]
    assert [i["author"] for i in items] == [b[2] for b in BOOKS]  # "Written by" means author


@in_chromium
async def test_django_changelist_and_trac_query_columns(shared_page):
    await shared_page.set_content(
        '<table id="result_list"><thead><tr>'
        '<th scope="col" class="sortable column-title sorted ascending"><div class="text">'
        '<a href="?o=-1">Title</a></div></th>'
        '<th scope="col" class="sortable column-genre"><div class="text"><a href="?o=2">Genre'
        "</a></div></th>"
        '<th scope="col" class="column-year"><div class="text"><span>Year</span></div></th>'
        "</tr></thead><tbody>"
        '<tr><th class="field-title"><a href="/admin/catalog/book/1/change/">Book 01 of stars'
        '</a></th><td class="field-genre">Poetry</td><td class="field-year">1951</td></tr>'
        '<tr><th class="field-title"><a href="/admin/catalog/book/2/change/">Book 02 of maps'
        '</a></th><td class="field-genre">Fiction</td><td class="field-year">1987</td></tr>'
        "</tbody></table>"
    )
    item = "#result_list tbody tr"
    fields = await merged(shared_page, item, 2, wanted=["title", "genre", "year"])
    items = await read(shared_page, item, fields)
    assert [(i["title"], i["genre"], i["year"]) for i in items] == [
        ("Book 01 of stars", "Poetry", "1951"),
        ("Book 02 of maps", "Fiction", "1987"),
    ]
    await shared_page.set_content(
        '<table class="listing tickets"><thead><tr class="trac-columns">'
        '<th class="id"><a href="/query?order=id">Ticket</a></th>'
        '<th class="summary"><a href="/query?order=summary">Summary</a></th>'
        '<th class="owner"><a href="/query?order=owner">Owner</a></th>'
        '<th class="priority"><a href="/query?order=priority">Priority</a></th></tr></thead>'
        '<tbody class="trac-query-results">'
        '<tr class="odd prio1"><td class="id"><a href="/ticket/8" title="View ticket">#8</a></td>'
        '<td class="summary"><a href="/ticket/8">Ticket 08: fix the search</a></td>'
        '<td class="owner"><span class="trac-author">eve</span></td>'
        '<td class="priority">blocker</td></tr>'
        '<tr class="even prio2"><td class="id"><a href="/ticket/3">#3</a></td>'
        '<td class="summary"><a href="/ticket/3">Ticket 03: add a pager</a></td>'
        '<td class="owner"><span class="trac-author">dan</span></td>'
        '<td class="priority">critical</td></tr></tbody></table>'
    )
    item = "tbody.trac-query-results > tr"
    fields = await merged(shared_page, item, 2, wanted=["id", "summary", "owner", "priority"])
    items = await read(shared_page, item, fields)
    assert [(i["id"], i["summary"], i["owner"], i["priority"]) for i in items] == [
        ("#8", "Ticket 08: fix the search", "eve", "blocker"),
        ("#3", "Ticket 03: add a pager", "dan", "critical"),
    ]
    assert items[0]["url"].endswith("/ticket/8")


@pytest.mark.parametrize(
    "block",
    [
        # Trac's ticket page: <th>Priority:</th><td headers=...>
        '<table class="properties"><tr><th id="h_reporter">Reported by:</th>'
        '<td headers="h_reporter" class="searchable">ada</td>'
        '<th id="h_priority">Priority:</th><td headers="h_priority"><a href="/q">blocker</a>'
        "</td></tr></table>",
        # Django's read-only change page: <label>Title:</label><div class=readonly>
        '<div class="form-row field-reporter"><div class="flex-container"><label>Reported by:'
        '</label><div class="readonly">ada</div></div></div><div class="form-row field-priority">'
        '<div class="flex-container"><label>Priority:</label><div class="readonly">blocker</div>'
        "</div></div>",
    ],
)
@in_chromium
async def test_item_page_labels_name_fields_and_stay_out_of_values(shared_page, block):
    await shared_page.set_content(f"<div id=content><h1>Book 07 of stars</h1>{block}</div>")
    arg = {"root": "#content", "index": 0, "inner": None, "item": False, "siblings": None}
    found = await shared_page.evaluate(CANDIDATES_JS, arg)
    fields = name_fields([Candidate.from_page(raw) for raw in found])
    [item] = await read(shared_page, "#content", fields)
    assert (item["title"], item["author"], item["priority"]) == (
        "Book 07 of stars",
        "ada",
        "blocker",
    )


@in_chromium
async def test_a_row_page_of_header_cells_names_no_header_by_another(shared_page):
    """Datasette's row page is a one-row table: each header names its own cell, never the
    header after it ("year" was read as "rating")."""
    await shared_page.set_content(
        f"<div id=content><h1>Book number 1 about glass</h1>{datasette_page()}</div>"
    )
    arg = {"root": "#content", "index": 0, "inner": None, "item": False, "siblings": None}
    found = await shared_page.evaluate(CANDIDATES_JS, arg)
    fields = name_fields([Candidate.from_page(raw) for raw in found])
    [item] = await read(shared_page, "#content", fields)
    assert (item["year"], item["rating"]) == ("1951", "4.7")


@in_chromium
async def test_details_read_every_match_as_a_list_and_none_when_there_is_none(shared_page):
    """EXTRACT_DETAILS reads a field with "all" as the list of its matches' values, each once
    and in page order; an item with no match gets null and the field is listed as missing."""
    await shared_page.set_content(
        "<ul><li class=item><h3>One</h3><p class=tags>Tags: <a>maps</a>, <a>stars</a>, "
        "<a>maps</a></p></li><li class=item><h3>Two</h3><p class=tags></p></li></ul>"
    )
    recipe = parse_recipe(
        {
            **READ,
            "bindings": {
                "LIST_ITEM": ".item",
                "CLICK_BEHAVIOR": "inline",
                "DETAILS_FIELDS": {"tags": {"selector": ".tags a", "all": True}, "title": "h3"},
            },
        }
    )
    _, ran = await collect(RecipeInterpreter(shared_page, recipe).run(), RunOutcome)
    assert [(i["title"], i["tags"]) for i in ran.items] == [
        ("One", ["maps", "stars"]),
        ("Two", None),
    ]


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        ("Extract 10 quotes with text, author and tags", ["text", "author", "tags"]),
        ("Extract 30 books: title, author, genre, year, rating",
         ["title", "author", "genre", "year", "rating"]),
        ("Extract 10 quotes with the text and the author's birth date from the author page",
         ["text", "birth date"]),
        ("Scrape http://127.0.0.1:8000/x with title and price", ["title", "price"]),
        ("Get the first 50 kitchen products sorted by price, cheapest first", []),
        ("Extract 5 items", []),
    ],
)  # fmt: skip
def test_the_fields_a_task_names_are_read_in_its_words(task, expected):
    assert asked_fields(task) == expected


def test_a_found_field_takes_the_name_the_task_gives_it():
    """ "genre" means category: the field found as category is called genre when the task
    says so; one the task does not name keeps its name."""
    genre = Candidate(
        index=0, selector=".col-genre", tag="td", text="poetry", classes=("col-genre",)
    )
    seller = Candidate(index=1, selector=".shop", tag="td", text="Ada", classes=("shop",))
    assert set(name_fields([genre, seller])) == {"category", "seller"}
    assert set(name_fields([genre, seller], ["title", "genre"])) == {"genre", "seller"}
    link = Candidate(index=2, selector="a", tag="a", text="Oak", href="/p/1", main_link=True)
    assert name_fields([link], ["link"])["url"].attribute == "href"  # the url keeps its name


def test_a_list_field_survives_the_strategy_text_and_the_recipe_binding():
    field = StrategyField(selector=".tags > a", all=True)
    strategy = Strategy(
        list_item=".quote", item_fields={"tags": field, "title": StrategyField(selector="h2")}
    )
    parsed = parse_strategy(strategy.to_markdown())
    assert parsed.item_fields == strategy.item_fields
    assert field.as_binding() == {"selector": ".tags > a", "all": True}
    merged = merge_fields([{"tags": field.model_copy(update={"all": False})}, {"tags": field}])
    assert merged["tags"].all  # several tags in any sampled item: all are read
