"""Fields named and read in any language and markup style, in real Chromium.

Labels come as `dt`/`dd`, `th`/`td`, a "Label:" element before the value, or "Label: value"
in one element, in Latin, Cyrillic, Japanese and Arabic script; each is named by its own words
(never `categora`) and read without its label. An item spread over two table rows is read in
both, and a labelled field is found by its label when an item lacks the fields before it.
"""

import pytest
from support.requirements import in_chromium

from tui_agent.web.phase import collect
from tui_agent.web.plan.field_names import CANDIDATES_JS, Candidate, name_fields
from tui_agent.web.recipe import RecipeInterpreter, RunOutcome, parse_recipe

BLOCKS = {
    "spanish-inline": (
        "<div class=item><h2><a href='/p/1'>Libro uno</a></h2>"
        "<p><strong>Precio:</strong> 12,50 €</p><p><b>Categoría:</b> Cocina</p>"
        "<p><b>Año de publicación:</b> 2019</p><p>Vendedor: Ana López</p></div>",
        {
            "precio": "12,50 €",
            "categoría": "Cocina",
            "año_de_publicación": "2019",
            "vendedor": "Ana López",
        },
    ),
    "japanese-dl": (
        "<div class=item><h3>本の題名</h3><dl><dt>価格</dt><dd>¥1,200</dd>"
        "<dt>著者</dt><dd>山田太郎</dd></dl></div>",
        {"価格": "¥1,200", "著者": "山田太郎"},
    ),
    "japanese-fullwidth-colon": (
        "<div class=item><h3>本の題名</h3><span>価格\uff1a</span><span>¥1,200</span><br>"
        "<span>著者\uff1a</span><span>山田太郎</span></div>",
        {"価格": "¥1,200", "著者": "山田太郎"},
    ),
    "russian-table": (
        "<div class=item><h3>Книга</h3><table><tr><th>Цена</th><td>500 ₽</td></tr>"
        "<tr><th>Автор</th><td>Пушкин</td></tr></table></div>",
        {"цена": "500 ₽", "автор": "Пушкин"},
    ),
    "arabic-inline": (
        "<div class=item dir=rtl><h3>كتاب</h3><p>السعر: 30 ر.س</p><p>المؤلف: أحمد</p></div>",
        {"السعر": "30 ر.س", "المؤلف": "أحمد"},
    ),
    "german-spans": (
        "<li class=item><a href='/x'>Tisch</a><span>Preis: 49,00 €</span> "
        "<span>Kategorie: Möbel</span></li>",
        {"preis": "49,00 €", "kategorie": "Möbel"},
    ),
}

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


async def named(page, block: str, siblings=None) -> dict:
    arg = {"root": block, "index": 0, "inner": None, "item": True, "siblings": siblings}
    found = await page.evaluate(CANDIDATES_JS, arg)
    return name_fields([Candidate.from_page(raw) for raw in found])


async def read(page, bindings: dict) -> list[dict]:
    recipe = parse_recipe({**READ, "bindings": {**READ["bindings"], **bindings}})
    _, ran = await collect(RecipeInterpreter(page, recipe).run(), RunOutcome)
    return ran.items


@in_chromium
@pytest.mark.parametrize("style", list(BLOCKS))
async def test_labels_in_any_script_name_fields_read_without_their_label(shared_page, style):
    html, expected = BLOCKS[style]
    await shared_page.set_content(f"<main>{html}</main>")
    fields = await named(shared_page, ".item")
    assert set(expected) <= set(fields), fields
    bindings = {"ITEM_FIELDS": {name: fields[name].as_binding() for name in expected}}
    [item] = await read(shared_page, bindings)
    assert {name: item[name] for name in expected} == expected


@in_chromium
async def test_a_title_with_a_colon_stays_a_title(shared_page):
    await shared_page.set_content(
        "<main><div class=item><h3><a href='/m'>Star Wars: A New Hope</a></h3>"
        "<p>Director: George Lucas</p></div></main>"
    )
    fields = await named(shared_page, ".item")
    assert fields["title"].selector == "h3" and fields["director"].prefix == "Director:"


@in_chromium
async def test_a_labelled_field_is_found_by_its_label_when_others_are_missing(shared_page):
    """The second item has no "Precio:" line: the year is read from the line that says so,
    not from the one in the first item's position."""
    await shared_page.set_content(
        "<main><div class=item><h2>Uno</h2><p>Precio: 10 €</p><p>Año: 2019</p></div>"
        "<div class=item><h2>Dos</h2><p>Año: 2021</p></div>"
        "<div class=item><h2>Tres</h2><p>Precio: 30 €</p><p>Año: 2023</p></div></main>"
    )
    fields = await named(shared_page, ".item")
    assert fields["año"].prefix == "Año:" and "nth-of-type(2)" in fields["año"].selector
    bindings = {"ITEM_FIELDS": {name: spec.as_binding() for name, spec in fields.items()}}
    items = await read(shared_page, bindings)
    assert [(i["title"], i["precio"], i["año"]) for i in items] == [
        ("Uno", "10 €", "2019"),
        ("Dos", None, "2021"),
        ("Tres", "30 €", "2023"),
    ]


@in_chromium
async def test_an_item_spread_over_two_rows_is_named_and_read_in_both(shared_page):
    rows = "".join(
        f"<tr><td>{n}.</td><td><a href='/p/{n}'>Product {n}</a> <span class=price>${n}.00</span>"
        f"</td></tr><tr><td></td><td><span>Seller: Shop {n}</span> | "
        f"<span>Tags: <a href='/t/a'>a</a>, <a href='/t/{n}'>t{n}</a></span></td></tr>"
        for n in range(1, 5)
    )
    pager = "<tr><td></td><td><a href='?p=2'>Next →</a></td></tr>"
    await shared_page.set_content(f"<table><tbody>{rows}{pager}</tbody></table>")
    item, siblings = "tbody > tr:has(span.price)", 1
    fields = await named(shared_page, item, siblings)
    assert {"title", "url", "price", "seller", "tags"} <= set(fields)
    binding = {name: spec.as_binding() for name, spec in fields.items()}
    items = await read(
        shared_page,
        {"LIST_ITEM": item, "LIST_ITEM_SIBLINGS": siblings, "ITEM_FIELDS": binding},
    )
    assert [(i["title"], i["price"], i["seller"], i["tags"]) for i in items] == [
        (f"Product {n}", f"${n}.00", f"Shop {n}", f"a, t{n}") for n in range(1, 5)
    ]
    assert all(i["text"].endswith(f"Tags: a, t{n}") for n, i in enumerate(items, 1))
