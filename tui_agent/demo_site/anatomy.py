"""Where each layout keeps its items and fields: CSS selectors known to work on the demo site.

Field selectors give exactly the ground-truth text (`element.innerText`, whitespace collapsed
and trimmed; `textContent` gives the same). The item's `url` is the `href` of ITEM_LINK inside
the item. Card selectors are relative to the item; detail selectors to the details container.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from tui_agent.demo_site.data import FIELDS

LIST = "ul.product-list"
ITEM = "li.card"
ITEM_LINK = "a.details-link"
"""Inside ITEM: the product link (its href is the record's url); also the card title's text."""
PANEL = "#details-panel"
PRODUCT_PAGE = "#product"
MODAL = "#details-modal"
"""The modal layout's dialog (inside a full-page backdrop); in the page only while open."""
MODAL_CLOSE = f"{MODAL} button.modal-close"
"""The dialog's close button: the only way to reach the list again."""
INLINE_DETAILS = ".card-details"
"""Inside ITEM on the inline layout, present only while the item is expanded."""

DETAIL_FIELDS = {name: f".field-{name}" for name in FIELDS if name != "url"}
"""Inside PANEL or PRODUCT_PAGE (INLINE_DETAILS has all but title): name -> selector."""
SUMMARY_CARD_FIELDS = {"title": ".card-title", "price": ".price"}
FULL_CARD_FIELDS = {name: f".{name}" for name in FIELDS if name != "url"} | {"title": ".card-title"}
"""Inside ITEM on layouts whose cards show every field."""

ClickBehavior = Literal["shows_panel", "navigates", "inline"]


@dataclass(frozen=True)
class Anatomy:
    """One layout's page: what a click does, where details appear, and its list controls."""

    click_behavior: ClickBehavior | None
    """None: the items show every field, nothing to click."""
    details: str
    """The details container: PANEL, PRODUCT_PAGE, MODAL, or INLINE_DETAILS (inside the item)."""
    details_loaded: str
    """Exists once the clicked item's details are shown (inside the item for inline)."""
    details_fields: dict[str, str]
    card_fields: dict[str, str]
    next_page: str | None = None
    load_more: str | None = None
    end_marker: str | None = None
    """Appears once every batch is in (infinite, loadmore)."""
    spinner: str | None = None
    """Shown until the list is there (slow)."""
    close: str | None = None
    """Closes the details, which block the list until it is clicked (modal)."""
    close_key: str | None = None
    """The key that closes the details when no control does (escape)."""
    list: str = LIST
    item: str = ITEM
    """The list and its items (an item's first element when it spans several)."""
    extra: dict[str, str] = field(default_factory=dict)


def _panel(card_fields: dict[str, str], **controls: Any) -> Anatomy:
    return Anatomy(
        click_behavior="shows_panel",
        details=PANEL,
        details_loaded=f"{PANEL} .field-title",
        details_fields={name: f"{PANEL} {css}" for name, css in DETAIL_FIELDS.items()},
        card_fields=card_fields,
        **controls,
    )


ANATOMY: dict[str, Anatomy] = {
    "panel": _panel(SUMMARY_CARD_FIELDS),
    "navigate": Anatomy(
        click_behavior="navigates",
        details=PRODUCT_PAGE,
        details_loaded=f"{PRODUCT_PAGE} .field-title",
        details_fields={name: f"{PRODUCT_PAGE} {css}" for name, css in DETAIL_FIELDS.items()},
        card_fields=SUMMARY_CARD_FIELDS,
        extra={"back_link": "a.back-link"},
    ),
    "inline": Anatomy(
        click_behavior="inline",
        details=INLINE_DETAILS,
        details_loaded=INLINE_DETAILS,
        details_fields={"title": ".card-title"}
        | {
            name: f"{INLINE_DETAILS} {css}"
            for name, css in DETAIL_FIELDS.items()
            if name != "title"
        },
        card_fields=SUMMARY_CARD_FIELDS,
        extra={"toggle": "button.toggle-details"},
    ),
    "pagination": _panel(
        FULL_CARD_FIELDS,
        next_page="a.page-next",
        extra={"page_number": "nav.pagination a.page-number", "last_page": ".page-next-disabled"},
    ),
    "infinite": _panel(
        FULL_CARD_FIELDS,
        end_marker=".end-of-list",
        extra={"loading": ".loading-more", "sentinel": "#list-sentinel"},
    ),
    "loadmore": _panel(FULL_CARD_FIELDS, load_more="button.load-more", end_marker=".end-of-list"),
    "filter": _panel(
        FULL_CARD_FIELDS,
        extra={
            "form": "form#filters",
            "category": "select[name=category]",
            "sort": "select[name=sort]",
            "search": "input[name=q]",
            "submit": "button.apply-filters",
            "no_results": ".no-results",
        },
    ),
    "slow": _panel(FULL_CARD_FIELDS, spinner=".loading-spinner"),
    "missing": _panel(FULL_CARD_FIELDS),
    "modal": Anatomy(
        click_behavior="shows_panel",
        details=MODAL,
        details_loaded=f"{MODAL} .field-title",
        details_fields={name: f"{MODAL} {css}" for name, css in DETAIL_FIELDS.items()},
        card_fields=SUMMARY_CARD_FIELDS,
        close=MODAL_CLOSE,
        extra={"backdrop": "div.modal-backdrop"},
    ),
}
"""Layout -> its anatomy; details_fields of inline are relative to the item."""

CARD_LAYOUTS = tuple(ANATOMY)
"""The shop's layouts of product cards (`ul.product-list > li.card`), one behaviour each."""
ROWS_ITEM = "table.listing tbody > tr:has(span.price)"
"""The `rows` layout's items: each title row, followed by its seller-and-tags row."""

ANATOMY |= {
    "late": Anatomy(
        click_behavior=None,
        details="",
        details_loaded="",
        details_fields={},
        card_fields=FULL_CARD_FIELDS,
    ),
    "rows": Anatomy(
        click_behavior="navigates",
        details=PRODUCT_PAGE,
        details_loaded=f"{PRODUCT_PAGE} .field-title",
        details_fields={name: f"{PRODUCT_PAGE} {css}" for name, css in DETAIL_FIELDS.items()},
        card_fields={"title": "td > a", "price": "span.price"},
        list="table.listing tbody",
        item=ROWS_ITEM,
        extra={"pager_row": "table.listing tbody > tr:last-child", "sidebar": "td.sidebar"},
    ),
    "es": Anatomy(
        click_behavior="navigates",
        details="div.ficha",
        details_loaded="div.ficha h1",
        details_fields={"title": "div.ficha h1"},
        card_fields={"title": "h2 > a"},
        list="div.productos",
        item="article.producto",
        extra={"category": "select[name=categoria]", "sort_links": "p.ordenar a"},
    ),
    "facets": Anatomy(
        click_behavior=None,
        details="",
        details_loaded="",
        details_fields={},
        card_fields=FULL_CARD_FIELDS,
        extra={
            "category_links": "ul.facet-links a",
            "tags": "input[name=tag]",
            "sort_buttons": "button[data-sort]",
        },
    ),
    "dropdown": Anatomy(
        click_behavior=None,
        details="",
        details_loaded="",
        details_fields={},
        card_fields=FULL_CARD_FIELDS,
        extra={
            "toggle": "button.picker-toggle",
            "menu": "#category-menu",
            "radios": "input[name=order]",
        },
    ),
    "escape": Anatomy(
        click_behavior="shows_panel",
        details="dialog.quick-look",
        details_loaded="dialog.quick-look .field-title",
        details_fields={name: f"dialog.quick-look {css}" for name, css in DETAIL_FIELDS.items()},
        card_fields=SUMMARY_CARD_FIELDS,
        close_key="Escape",
    ),
    "prose": Anatomy(
        click_behavior="navigates",
        details="article",
        details_loaded="article h1",
        details_fields={"title": "article h1"},
        card_fields={"title": "a"},
        list="ul.stories",
        item="ul.stories > li",
    ),
}
