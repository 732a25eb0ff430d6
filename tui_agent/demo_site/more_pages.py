"""The layouts real sites use that the shop's cards do not: late, rows, es, facets, dropdown,
escape and prose. Each is written in its own markup style (tables without classes, Spanish
labels, data attributes, a native dialog, prose), so nothing is tuned to one way of writing.
"""

from __future__ import annotations

import json
from html import escape
from urllib.parse import urlencode

from tui_agent.demo_site import data
from tui_agent.demo_site.markup import api_record, full_card

HEADINGS = {
    "late": "Catalog (loads late)",
    "rows": "Board",
    "es": "Tienda — todos los productos",
    "facets": "Browse by facet",
    "dropdown": "Pick a category",
    "escape": "Quick look",
    "prose": "Stories",
}
SORT_BUTTONS = (("price-asc", "Price ↑"), ("price-desc", "Price ↓"), ("rating", "Top rated"))
SORT_RADIOS = (
    ("featured", "Featured"),
    ("price-asc", "Price: low to high"),
    ("price-desc", "Price: high to low"),
    ("rating", "Best rated"),
    ("newest", "Newest"),
)
SORT_LINKS_ES = (
    ("price-asc", "Precio: de menor a mayor"),
    ("price-desc", "Precio: de mayor a menor"),
    ("newest", "Más recientes"),
)


def _catalog(products: list[data.Product], layout: str) -> str:
    """The products' records as the page's embedded JSON (its script renders them), each with
    its place in every order the page can sort by."""
    places = {
        sort: {p.slug: n for n, p in enumerate(sorted(products, key=data.SORT_KEYS[sort]))}
        for sort in data.SORTS
    }
    records = [
        api_record(product, layout)
        | {
            "category_slug": product.category,
            "places": {s: places[s][product.slug] for s in places},
        }
        for product in products
    ]
    payload = json.dumps(records, ensure_ascii=False).replace("</", "<\\/")
    return f'<script type="application/json" id="catalog-data">{payload}</script>'


def late_page() -> str:
    """An empty list, no spinner: the script asks the server for it after a pause."""
    return (
        f"<h1>{HEADINGS['late']}</h1>"
        '<ul class="product-list" id="product-list"></ul>'
        f'<div id="late-config" data-wait="{data.LATE_WAIT_MS}"></div>'
    )


def rows_page(page: int) -> str:
    """Two rows per product in a classless table, a pager row, a sidebar cell."""
    products = data.listing("rows", {"p": page})
    first = (page - 1) * data.ROWS_PAGE_SIZE
    rows = []
    for rank, product in enumerate(products, first + 1):
        record = product.fields()
        tags = ", ".join(
            f'<a href="/rows?tag={escape(tag)}">{escape(tag)}</a>' for tag in product.tags
        )
        rows.append(
            f'<tr><td align="right" valign="top">{rank}.</td><td>'
            f'<a href="{record["url"]}">{escape(record["title"])}</a> '
            f'<span class="price">{escape(record["price"])}</span></td></tr>'
            f"<tr><td></td><td><span>Seller: {escape(record['seller'])}</span> | "
            f"<span>Tags: {tags}</span></td></tr>"
        )
    links = []
    if page > 1:
        links.append(f'<a href="/rows?p={page - 1}">← Previous</a>')
    if page < data.ROWS_PAGES:
        links.append(f'<a href="/rows?p={page + 1}">Next →</a>')
    rows.append(f"<tr><td></td><td>{' | '.join(links)}</td></tr>")
    popular = "".join(f'<li><a href="/rows?tag={tag}">{tag}</a></li>' for tag in data.TAGS[:6])
    return (
        f"<h1>{HEADINGS['rows']}</h1>"
        '<table id="layout" width="100%"><tr><td valign="top">'
        f'<table class="listing" cellspacing="0"><tbody>{"".join(rows)}</tbody></table></td>'
        f'<td class="sidebar" valign="top"><h3>Popular tags</h3><ul>{popular}</ul></td>'
        "</tr></table>"
    )


def _spanish_card(record: dict[str, str]) -> str:
    return (
        '<article class="producto">'
        f'<h2><a href="{record["url"]}">{escape(record["title"])}</a></h2>'
        f"<p><strong>Precio:</strong> {escape(record['precio'])}</p>"
        f"<p><strong>Categoría:</strong> {escape(record['categoría'])}</p>"
        f"<p>Año de publicación: {record['año_de_publicación']}</p></article>"
    )


def spanish_page(query: dict[str, str]) -> str:
    """The Spanish shop: a GET form with a category select, sort links, labelled cards."""
    category, order = query.get("categoria", ""), query.get("orden", "")
    records = [data.spanish_record(product) for product in data.listing("es", query)]
    options = "".join(
        f'<option value="{slug}"{" selected" if slug == category else ""}>{label}</option>'
        for slug, label in data.CATEGORIES_ES.items()
    )
    sorts = " · ".join(
        f'<a href="/es?{urlencode({"categoria": category, "orden": value})}">{label}</a>'
        for value, label in SORT_LINKS_ES
    )
    return (
        f"<h1>{HEADINGS['es']}</h1>"
        '<form class="filtros" method="get" action="/es">'
        '<label>Categoría <select name="categoria"><option value="">Todas las categorías'
        f'</option>{options}</select></label><input type="hidden" name="orden" value="{order}">'
        '<button type="submit">Filtrar</button></form>'
        f'<p class="ordenar">Ordenar: {sorts}</p>'
        f'<p class="total">{len(records)} productos</p>'
        f'<div class="productos">{"".join(_spanish_card(r) for r in records)}</div>'
    )


def spanish_product_page(product: data.Product) -> str:
    """A Spanish product's own page: dt/dd labels, and the description after a label."""
    record = data.spanish_record(product)
    return (
        f'<div class="ficha"><h1>{escape(record["title"])}</h1><dl>'
        f"<dt>Precio</dt><dd>{escape(record['precio'])}</dd>"
        f"<dt>Vendedor</dt><dd>{escape(record['vendedor'])}</dd>"
        f"<dt>Categoría</dt><dd>{escape(record['categoría'])}</dd></dl>"
        f"<p><b>Descripción:</b> {escape(record['descripción'])}</p>"
        '<p><a href="/es">Volver a la tienda</a></p></div>'
    )


def facets_page(query: dict[str, str]) -> str:
    """Category links (the server filters), tag checkboxes and sort buttons (the script)."""
    category = query.get("category", "")
    counts = {slug: sum(p.category == slug for p in data.PRODUCTS) for slug in data.CATEGORIES}
    links = "".join(
        f'<li><a href="/facets?category={slug}"'
        f"{' aria-current=true' if slug == category else ''}>{label} ({counts[slug]})</a></li>"
        for slug, label in data.CATEGORIES.items()
    )
    boxes = "".join(
        f'<label><input type="checkbox" name="tag" value="{tag}"> {tag}</label>'
        for tag in data.TAGS
    )
    buttons = "".join(
        f'<button type="button" data-sort="{value}">{label}</button>'
        for value, label in SORT_BUTTONS
    )
    products = data.listing("facets", {"category": category} if category else {})
    return (
        f'<h1>{HEADINGS["facets"]}</h1><div class="facet-layout">'
        f'<div class="facets"><h4>Category</h4><ul class="facet-links">{links}</ul>'
        f'<fieldset class="tag-boxes"><legend>Tags</legend>{boxes}</fieldset></div>'
        f'<div class="results"><div class="sort-bar">Sort: {buttons}</div>'
        '<ul class="product-list" id="product-list"></ul></div></div>'
        + _catalog(products, "facets")
    )


def dropdown_page() -> str:
    """A click-to-open category menu (no <select>) and a radio group that sorts."""
    entries = '<li role="option" data-value="">All categories</li>' + "".join(
        f'<li role="option" data-value="{slug}">{label}</li>'
        for slug, label in data.CATEGORIES.items()
    )
    radios = "".join(
        f'<label><input type="radio" name="order" value="{value}"'
        f"{' checked' if value == 'featured' else ''}> {label}</label>"
        for value, label in SORT_RADIOS
    )
    return (
        f"<h1>{HEADINGS['dropdown']}</h1>"
        '<div class="picker"><button type="button" class="picker-toggle" aria-haspopup="listbox"'
        ' aria-expanded="false" aria-controls="category-menu">Category: All ▾</button>'
        f'<ul id="category-menu" role="listbox" hidden>{entries}</ul></div>'
        f'<fieldset class="order"><legend>Sort by</legend>{radios}</fieldset>'
        '<ul class="product-list" id="product-list"></ul>'
        + _catalog(data.listing("dropdown"), "dropdown")
    )


def escape_page() -> str:
    """Summary cards; the script shows a clicked product in a native dialog (Escape only)."""
    cards = "".join(
        f'<li class="card" data-slug="{p.slug}"><h3 class="card-title">'
        f'<a class="details-link" href="{p.path}">{escape(p.title)}</a></h3>'
        f'<span class="price">{escape(p.fields()["price"])}</span></li>'
        for p in data.PRODUCTS
    )
    return f'<h1>{HEADINGS["escape"]}</h1><ul class="product-list" id="product-list">{cards}</ul>'


def prose_page() -> str:
    """A plain list of story links."""
    items = "".join(
        f'<li><a href="{data.prose_path(p)}">{escape(p.title)}</a></li>' for p in data.PRODUCTS
    )
    return f'<h1>{HEADINGS["prose"]}</h1><ul class="stories">{items}</ul>'


def prose_product_page(product: data.Product) -> str:
    """A product told in sentences: no labels, no classes on its facts."""
    facts = product.fields()
    return (
        f"<article><h1>{escape(product.title)}</h1>"
        f"<p>Offered by {escape(facts['seller'])} for {escape(facts['price'])}, this piece "
        f"went on sale on {facts['date']}. Buyers rate it {facts['rating']} out of 5.</p>"
        f"<p>{escape(facts['description'])}</p></article>"
    )


def full_cards(products: list[data.Product], layout: str) -> str:
    """Every product's full card (what the scripts of late, facets and dropdown render)."""
    return "".join(full_card(product, layout) for product in products)
