"""Reading a list's items in the page and checking them against what a fragment promised.

READ_LIST_JS reads each item's text and its likely price, rating, date and title; the checks
say whether the list after a fragment is filtered, searched or sorted as asked.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from tui_agent.web.page_js import MEMBERS_JS
from tui_agent.web.plan import SORT_KEYS, sort_field

# arg: {item: LIST_ITEM, siblings: LIST_ITEM_SIBLINGS}
READ_LIST_JS = (
    "(arg) => {\n"
    + MEMBERS_JS
    + r"""
return [...document.querySelectorAll(arg.item)].map((el) => {
  const members = membersOf(el, arg.siblings, arg.item);
  const clean = (text) => (text || "").replace(/\s+/g, " ").trim();
  const pick = (css, attributes) => {
    const found = allInMembers(members, css)[0];
    if (!found) return null;
    for (const name of attributes) {
      const value = found.getAttribute(name);
      if (value) return value;
    }
    return clean(found.innerText) || null;
  };
  return {
    text: clean(membersText(members)),
    price: pick('[itemprop=price], [data-price], [class*="price" i]', ["content", "data-price"]),
    rating: pick(
      '[itemprop=ratingValue], [data-rating], [class*="rating" i], [class*="stars" i]',
      ["content", "data-rating"]),
    date: pick(
      'time[datetime], [itemprop=datePublished], [itemprop=dateCreated], [class*="date" i], time',
      ["datetime", "content"]),
    title: pick(
      '[itemprop=name], h1, h2, h3, h4, h5, h6, [class*="title" i], [class*="name" i], a[href]',
      ["content"]),
  };
});
}"""
)


# -- reading values off the items -------------------------------------------------------------

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_PRICE_IN_TEXT = re.compile(
    r"[$€£¥₹]\s?\d[\d,.]*|\d[\d.,]*\s?(?:[$€£¥₹]|USD|EUR|GBP|zł|kr)|(?:R\$|CHF|USD|EUR)\s?\d[\d.,]*"
)
_PRICE_LABEL = re.compile(
    r"\b(?:price|precio|prix|preis|pre[çc]o|prezzo|prijs)\s*[:\uff1a]\s*([^\n|·]{1,30})", re.I
)
_RATING_IN_TEXT = re.compile(r"(\d+(?:\.\d+)?)\s*(?:/\s*(?:5|10)\b|out of\b|stars?\b|★)", re.I)
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_DATE_FORMATS = ("%b %d, %Y", "%B %d, %Y", "%d %b %Y", "%d %B %Y", "%Y/%m/%d")


def _number(text: str | None) -> float | None:
    match = _NUMBER.search(text or "")
    if not match:
        return None
    raw = match.group(0).rstrip(".,")
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", raw):
        raw = raw.replace(",", "")
    elif re.fullmatch(r"\d{1,3}(?:\.\d{3})+(?:,\d+)?", raw):  # 1.234,56 (European)
        raw = raw.replace(".", "").replace(",", ".")
    elif re.fullmatch(r"\d+,\d{1,2}", raw):
        raw = raw.replace(",", ".")
    try:
        return float(raw)
    except ValueError:
        return None


def _price(item: dict[str, Any]) -> float | None:
    if item["price"]:
        return _number(item["price"])
    labelled = _PRICE_LABEL.search(item["text"])
    if labelled and _number(labelled.group(1)) is not None:
        return _number(labelled.group(1))
    match = _PRICE_IN_TEXT.search(item["text"])
    return _number(match.group(0)) if match else None


def _rating(item: dict[str, Any]) -> float | None:
    for text in (item["rating"], item["text"]):
        if not text:
            continue
        match = _RATING_IN_TEXT.search(text)
        value = _number(match.group(1)) if match else None
        if value is None and text is item["rating"]:
            value = _number(text)
            if value is None and "★" in text:
                value = float(text.count("★"))
        if value is not None and value <= 10:
            return value
    return None


def _date(item: dict[str, Any]) -> date | None:
    for text in (item["date"], item["text"]):
        if not text:
            continue
        iso = _ISO_DATE.search(text)
        if iso:
            return date(*map(int, iso.groups()))
        for layout in _DATE_FORMATS:
            try:
                return datetime.strptime(text.strip(), layout).date()
            except ValueError:
                continue
    return None


def _title(item: dict[str, Any]) -> str | None:
    return item["title"] or item["text"] or None


_READERS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "price": _price,
    "rating": _rating,
    "date": _date,
    "title": _title,
}


# -- the checks ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Check:
    """Whether the list after a fragment is what was asked, and the evidence either way."""

    ok: bool
    evidence: str


def _shows(text: str, wanted: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(wanted.casefold())}(?!\w)", text.casefold()) is not None


def check_filter(label: str, before: list[dict[str, Any]], after: list[dict[str, Any]]) -> Check:
    """Every item shows `label`, and the list is not the one before (the filter did work)."""
    if not after:
        return Check(False, f"{len(before)} -> 0 items: the filter emptied the list")
    missing = [item for item in after if not _shows(item["text"], label)]
    if missing:
        example = missing[0]["text"][:80]
        return Check(False, f"{len(missing)} of {len(after)} items do not show {label!r} "
                            f"(e.g. {example!r})")  # fmt: skip
    already = bool(before) and all(_shows(item["text"], label) for item in before)
    if already and len(before) == len(after):
        return Check(False, f"the list already showed only {label!r}: nothing to prove")
    return Check(True, f"{len(before)} -> {len(after)} items, all {label}")


def check_search(term: str, before: list[dict[str, Any]], after: list[dict[str, Any]]) -> Check:
    """Every item contains every word of `term`, and the list narrowed."""
    words = term.casefold().split()
    if not after:
        return Check(False, f"{len(before)} -> 0 items: the search found nothing")
    missing = [item for item in after if not all(w in item["text"].casefold() for w in words)]
    if missing:
        example = missing[0]["text"][:80]
        return Check(False, f"{len(missing)} of {len(after)} items do not contain {term!r} "
                            f"(e.g. {example!r})")  # fmt: skip
    if len(after) >= len(before) and all(
        all(w in item["text"].casefold() for w in words) for item in before
    ):
        return Check(False, f"every item contained {term!r} before the search: nothing to prove")
    return Check(True, f"{len(before)} -> {len(after)} items, all containing {term!r}")


def check_sort(sort: str, after: list[dict[str, Any]]) -> Check:
    """The items' values of the sort's field (read from each item) are in its order."""
    field, descending = sort_field(sort)
    read = _READERS[field]
    read_all = [(index, read(item)) for index, item in enumerate(after)]
    present = [(index, value) for index, value in read_all if value is not None]
    if len(present) < 2 or len(present) < 0.8 * len(after):
        return Check(False, f"could read the {field} of only {len(present)} of {len(after)} items")
    values = [value for _, value in present]
    keys = [value.casefold() for value in values] if field == "title" else values
    # Titles may be sorted with or without regard to case: either order is the asked one.
    if _ordered(keys, descending) or (field == "title" and _ordered(values, descending)):
        return Check(True, f"{len(after)} items by {SORT_KEYS[sort]}: {values[0]} ... {values[-1]}")
    wrong = next(
        position
        for position, (a, b) in enumerate(itertools.pairwise(keys), 1)
        if (b > a if descending else b < a)
    )
    (before, first), (index, second) = present[wrong - 1], present[wrong]
    return Check(
        False,
        f"item {index + 1} ({second}) comes after item {before + 1} ({first}): "
        f"not {SORT_KEYS[sort]}",
    )


def _ordered(values: list[Any], descending: bool) -> bool:
    return all((a >= b) if descending else (a <= b) for a, b in itertools.pairwise(values))
