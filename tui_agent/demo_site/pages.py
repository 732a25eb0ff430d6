"""Whole HTML pages: the shared shell (header, sidebar, footer) and each layout's list."""

from __future__ import annotations

import json
from html import escape
from urllib.parse import urlencode

from tui_agent.demo_site import data, more_pages
from tui_agent.demo_site.markup import api_record, detail_fields, full_card, summary_card

SITE_NAME = "Demo Market"
SORT_LABELS = {
    "featured": "Featured",
    "price-asc": "Price: low to high",
    "price-desc": "Price: high to low",
    "rating": "Best rated",
    "newest": "Newest",
    "title": "Name A-Z",
}
HEADINGS = {
    "panel": "All products — quick view",
    "navigate": "All products",
    "inline": "All products — expandable",
    "pagination": "Catalog",
    "infinite": "Endless catalog",
    "loadmore": "Catalog",
    "filter": "Find products",
    "slow": "Catalog (slow connection)",
    "missing": "Marketplace listings",
    "modal": "All products — details in a dialog",
}
PANEL_LAYOUTS = ("panel", "pagination", "infinite", "loadmore", "filter", "slow", "missing")
"""Layouts whose cards open the side panel on click."""
HELP_TOPICS = ("Shipping", "Returns", "Contact")


def _shell(title: str, main: str, layout: str = "", panel: bool = False, lang: str = "en") -> str:
    nav = "".join(f'<a href="/{name}">{name}</a>' for name in data.LAYOUTS)
    categories = "".join(
        f'<li><a href="/filter?{urlencode({"category": slug})}">{label}</a></li>'
        for slug, label in data.CATEGORIES.items()
    )
    help_links = "".join(
        f'<li><a href="/help#{topic.lower()}">{topic}</a></li>' for topic in HELP_TOPICS
    )
    aside = (
        '<aside id="details-panel" class="details-panel" aria-live="polite">'
        '<p class="panel-empty">Select a product to see its details.</p></aside>'
        if panel
        else ""
    )
    return (
        f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)} · {SITE_NAME}</title>"
        '<link rel="icon" href="data:,"><link rel="stylesheet" href="/static/site.css">'
        '<script src="/static/site.js" defer></script></head>'
        f'<body data-layout="{layout}" data-batch-size="{data.BATCH_SIZE}" '
        f'data-batch-delay="{data.BATCH_DELAY_MS}" data-slow-delay="{data.SLOW_DELAY_MS}">'
        f'<header class="site-header"><a class="brand" href="/">{SITE_NAME}</a>'
        f'<nav class="site-nav" aria-label="Layouts">{nav}</nav></header>'
        f'<div class="page{" with-panel" if panel else ""}">'
        '<nav class="sidebar" aria-label="Shop">'
        f"<h2>Categories</h2><ul>{categories}</ul><h2>Help</h2><ul>{help_links}</ul></nav>"
        f'<main id="catalog">{main}</main>{aside}</div>'
        '<footer class="site-footer"><p>© 2024 Demo Market — a local demo shop.</p>'
        '<p><a href="/help#about">About</a> · <a href="/help#terms">Terms</a> · '
        '<a href="/help#privacy">Privacy</a></p></footer></body></html>'
    )


def _list(cards: list[str]) -> str:
    return f'<ul class="product-list" id="product-list">{"".join(cards)}</ul>'


def _page_url(page: int) -> str:
    return f"/pagination?page={page}"


def _pagination(page: int) -> str:
    links = []
    if page > 1:
        links.append(f'<a class="page-prev" rel="prev" href="{_page_url(page - 1)}">← Prev</a>')
    for number in range(1, data.PAGE_COUNT + 1):
        if number == page:
            links.append(f'<span class="page-number current" aria-current="page">{number}</span>')
        else:
            links.append(f'<a class="page-number" href="{_page_url(number)}">{number}</a>')
    if page < data.PAGE_COUNT:
        links.append(f'<a class="page-next" rel="next" href="{_page_url(page + 1)}">Next →</a>')
    else:
        links.append('<span class="page-next-disabled" aria-disabled="true">Next →</span>')
    return f'<nav class="pagination" aria-label="Pages">{"".join(links)}</nav>'


def _filters(category: str, sort: str, q: str) -> str:
    categories = "".join(
        f'<option value="{slug}"{" selected" if slug == category else ""}>{label}</option>'
        for slug, label in data.CATEGORIES.items()
    )
    sorts = "".join(
        f'<option value="{value}"{" selected" if value == (sort or "featured") else ""}>'
        f"{SORT_LABELS[value]}</option>"
        for value in data.SORTS
    )
    return (
        '<form id="filters" class="filters" method="get" action="/filter" role="search">'
        '<label>Category <select name="category"><option value="">All categories</option>'
        f"{categories}</select></label>"
        f'<label>Sort by <select name="sort">{sorts}</select></label>'
        '<label>Search <input type="search" name="q" placeholder="Search products" '
        f'value="{escape(q)}"></label>'
        '<button class="apply-filters" type="submit">Apply</button></form>'
    )


MORE_LAYOUTS = {
    "late": lambda query: more_pages.late_page(),
    "rows": lambda query: more_pages.rows_page(data.rows_page(query.get("p"))),
    "es": more_pages.spanish_page,
    "facets": more_pages.facets_page,
    "dropdown": lambda query: more_pages.dropdown_page(),
    "escape": lambda query: more_pages.escape_page(),
    "prose": lambda query: more_pages.prose_page(),
}
"""Layouts written in their own markup (more_pages), by name."""


def layout_page(layout: str, query: dict[str, str]) -> str:
    """The page for `layout` (query: the parameters it understands); DemoSiteError if bad."""
    if layout in MORE_LAYOUTS:
        data.listing(layout, query)  # a bad query is refused here
        title = more_pages.HEADINGS[layout]
        lang = "es" if layout == "es" else "en"
        return _shell(title, MORE_LAYOUTS[layout](query), layout, lang=lang)
    if layout == "pagination":
        query = {"page": str(data.page_number(query.get("page")))}
    products = data.listing(layout, query)
    count = len(products)
    main = f"<h1>{HEADINGS[layout]}</h1>"
    if layout in ("panel", "navigate", "inline", "modal"):
        toggle = layout == "inline"
        main += f'<p class="result-count">{count} products</p>'
        main += _list([summary_card(p, layout, toggle) for p in products])
        if toggle:
            catalog = {p.slug: api_record(p, layout) for p in products}
            payload = json.dumps(catalog, ensure_ascii=False).replace("</", "<\\/")
            main += f'<script type="application/json" id="catalog-data">{payload}</script>'
    elif layout == "pagination":
        page = data.page_number(query.get("page"))
        first = (page - 1) * data.PAGE_SIZE + 1
        last = first + count - 1
        main += f'<p class="result-count">Showing {first}-{last} of {data.PRODUCT_COUNT}</p>'
        main += _list([full_card(p, layout) for p in products]) + _pagination(page)
    elif layout == "filter":
        main += _filters(query.get("category", ""), query.get("sort", ""), query.get("q", ""))
        main += f'<p class="result-count">{count} results</p>'
        if products:
            main += _list([full_card(p, layout) for p in products])
        else:
            main += '<p class="no-results">No products match your search.</p>'
    elif layout == "loadmore":
        batch = products[: data.BATCH_SIZE]
        main += f'<p class="result-count">{count} products</p>'
        main += _list([full_card(p, layout) for p in batch])
        main += f'<button class="load-more" type="button" data-next-offset="{len(batch)}">'
        main += "Load more</button>"
    elif layout == "infinite":
        main += f'<p class="result-count">{count} products</p>' + _list([])
        main += '<div id="list-sentinel" class="list-sentinel"></div>'
    elif layout == "slow":
        main += (
            '<div class="loading-spinner" role="status"><span class="spinner-ring" '
            'aria-hidden="true"></span> Loading products…</div>' + _list([])
        )
    else:  # missing
        main += f'<p class="result-count">{count} listings</p>'
        main += _list([full_card(p, layout) for p in products])
    return _shell(HEADINGS[layout], main, layout, panel=layout in PANEL_LAYOUTS)


def product_page(product: data.Product) -> str:
    """A product's own page (the `navigate` layout's detail page; every card links here)."""
    main = (
        f'<article id="product" class="product-detail" data-slug="{product.slug}">'
        '<p><a class="back-link" href="/navigate" '
        'onclick="if (history.length > 1) { history.back(); return false; }">'
        "← Back to the list</a></p>"
        f'<h1 class="field-title">{escape(product.title)}</h1>'
        f"{detail_fields(product, 'navigate')}</article>"
    )
    return _shell(product.title, main)


def spanish_product_page(product: data.Product) -> str:
    """A product's page in the Spanish shop."""
    return _shell(product.title, more_pages.spanish_product_page(product), "es", lang="es")


def prose_product_page(product: data.Product) -> str:
    """A product's page told in sentences (the `prose` layout's detail page)."""
    return _shell(product.title, more_pages.prose_product_page(product))


def home_page() -> str:
    """An index of the layouts (not itself a list of products)."""
    rows = "".join(
        f'<li><a href="/{name}">{name}</a> — {escape(blurb)}</li>'
        for name, blurb in data.LAYOUTS.items()
    )
    main = (
        f"<h1>Welcome to {SITE_NAME}</h1><p>The same {data.PRODUCT_COUNT} products, "
        f'shown in different ways:</p><ul class="layout-index">{rows}</ul>'
    )
    return _shell("Home", main)


def help_page() -> str:
    sections = "".join(
        f'<section id="{topic.lower()}"><h2>{topic}</h2><p>Nothing to see here: this is a demo '
        "shop and nothing is for sale.</p></section>"
        for topic in (*HELP_TOPICS, "About", "Terms", "Privacy")
    )
    return _shell("Help", f"<h1>Help</h1>{sections}")


def error_page(status: int, message: str) -> str:
    return _shell(str(status), f'<h1>{status}</h1><p class="error-message">{escape(message)}</p>')
