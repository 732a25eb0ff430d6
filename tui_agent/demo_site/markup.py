"""HTML for one product: list cards and detail fields (site.js renders the same markup)."""

from __future__ import annotations

from html import escape
from typing import Any

from tui_agent.demo_site.data import Product

DETAIL_LABELS = (
    ("price", "Price"),
    ("currency", "Currency"),
    ("rating", "Rating"),
    ("date", "Listed"),
    ("seller", "Seller"),
    ("category", "Category"),
    ("tags", "Tags"),
)


def api_record(product: Product, layout: str) -> dict[str, Any]:
    """The JSON the site's script renders: the visible fields plus presentation hints."""
    record: dict[str, Any] = {"slug": product.slug, **product.fields(layout)}
    if "rating" in record:
        record["stars"] = product.stars
    if "tags" in record:
        record["tags"] = list(product.tags)
    record["hue"] = product.number * 47 % 360
    words = product.title.split()
    record["initials"] = words[0][0] + words[-1][0]
    return record


def _stars(count: int) -> str:
    return f'<span class="stars" aria-hidden="true">{"★" * count}{"☆" * (5 - count)}</span>'


def _tags(tags: list[str]) -> str:
    return ", ".join(f'<span class="tag">{escape(tag)}</span>' for tag in tags)


def _thumb(record: dict[str, Any]) -> str:
    return (
        f'<div class="thumb" style="--hue: {record["hue"]}" '
        f'data-initials="{escape(record["initials"])}" aria-hidden="true"></div>'
    )


def _title(record: dict[str, Any]) -> str:
    return (
        f'<h3 class="card-title"><a class="details-link" href="{escape(record["url"])}">'
        f"{escape(record['title'])}</a></h3>"
    )


def summary_card(product: Product, layout: str, toggle: bool = False) -> str:
    """A compact card (thumb, title link, price); details need the layout's click."""
    record = api_record(product, layout)
    button = (
        '<button class="toggle-details" type="button" aria-expanded="false">Show details</button>'
        if toggle
        else ""
    )
    return (
        f'<li class="card" data-slug="{product.slug}">{_thumb(record)}'
        f'<div class="card-body">{_title(record)}'
        f'<p class="card-price"><span class="price">{escape(record["price"])}</span></p>'
        f"{button}</div></li>"
    )


def full_card(product: Product, layout: str) -> str:
    """A card showing every field the layout has (absent fields leave no element)."""
    record = api_record(product, layout)
    parts = [_title(record)]
    if "price" in record:
        parts.append(
            f'<p class="card-price"><span class="price">{escape(record["price"])}</span> '
            f'<span class="currency">{escape(record["currency"])}</span></p>'
        )
    if "rating" in record:
        parts.append(
            f'<p class="card-rating">{_stars(record["stars"])} '
            f'<span class="rating">{record["rating"]}</span></p>'
        )
    if "description" in record:
        parts.append(f'<p class="description">{escape(record["description"])}</p>')
    meta = []
    if "seller" in record:
        meta.append(f'<span class="seller">{escape(record["seller"])}</span>')
    meta.append(f'<span class="category">{escape(record["category"])}</span>')
    if "date" in record:
        meta.append(f'<time class="date" datetime="{record["date"]}">{record["date"]}</time>')
    parts.append(f'<p class="card-meta">{" · ".join(meta)}</p>')
    if "tags" in record:
        parts.append(f'<p class="tags">{_tags(record["tags"])}</p>')
    return (
        f'<li class="card card-full" data-slug="{product.slug}">{_thumb(record)}'
        f'<div class="card-body">{"".join(parts)}</div></li>'
    )


def _value(field: str, record: dict[str, Any]) -> str:
    if field == "rating":
        rating = f'<span class="field-rating">{record["rating"]}</span>'
        return f"<dd>{_stars(record['stars'])} {rating}</dd>"
    if field == "date":
        return (
            f'<dd><time class="field-date" datetime="{record["date"]}">{record["date"]}</time></dd>'
        )
    if field == "tags":
        return f'<dd class="field-tags">{_tags(record["tags"])}</dd>'
    return f'<dd class="field-{field}">{escape(record[field])}</dd>'


def detail_fields(product: Product, layout: str) -> str:
    """The labelled `.field-*` values and the description (the detail page's body)."""
    record = api_record(product, layout)
    rows = "".join(
        f"<dt>{label}</dt>{_value(field, record)}"
        for field, label in DETAIL_LABELS
        if field in record
    )
    description = (
        f'<p class="field-description">{escape(record["description"])}</p>'
        if "description" in record
        else ""
    )
    return f'<dl class="fields">{rows}</dl>{description}'
