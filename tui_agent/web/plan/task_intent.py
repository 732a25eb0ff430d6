"""What a scraping task asks of the list: how many items, which filters, which order, which search.

`parse_intent("Get the first 50 kitchen products sorted by price, cheapest first")` gives
`TaskIntent(max_items=50, filters=["kitchen"], sort="price_asc", search=None)`. The reading is
deterministic (patterns, no model); `needed_generators` says which filter / sort / search
generators the intent calls for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tui_agent.web.plan.intent_words import (
    ARTICLES,
    ASCENDING,
    BY,
    CATEGORY,
    DESCENDING,
    FIRST,
    IN,
    KNOWN_WORDS,
    NOUNS,
    NUMBER_WORDS,
    ONLY,
    SEARCH,
    SORT_FIELDS,
    SORT_PHRASES,
    SORTED,
    STOP_WORDS,
    TERM_STOP,
    VERBS,
)
from tui_agent.web.plan.item_page_phrase import item_page_phrase
from tui_agent.web.plan.strategy import GeneratorName

SORT_KEYS: dict[str, str] = {
    "price_asc": "price, lowest first",
    "price_desc": "price, highest first",
    "rating_desc": "rating, best first",
    "rating_asc": "rating, worst first",
    "date_desc": "date, newest first",
    "date_asc": "date, oldest first",
    "title_asc": "name, A to Z",
    "title_desc": "name, Z to A",
}
"""The orders an intent can ask for (`<field>_<asc|desc>`) and how to say them."""


@dataclass(frozen=True)
class TaskIntent:
    """The list operations a task asks for; None / [] where it asks for none."""

    max_items: int | None = None
    filters: list[str] = field(default_factory=list)
    """Values to narrow the list to (lower case), e.g. ["kitchen"]."""
    sort: str | None = None
    """One of SORT_KEYS, e.g. "price_asc"."""
    search: str | None = None
    """The text to search for, as written."""
    item_page: str | None = None
    """The page the task reads some fields on, reached by a link in each item: the thing it
    names ("author" for "from the author page"), "" for the item's own page; None: no such page."""
    page_fields: list[str] = field(default_factory=list)
    """The fields the task says are on that page, as written ("birth date")."""

    def describe(self) -> str:
        """One line for logs: "50 items; filter kitchen; sort price, lowest first"."""
        parts = [f"{self.max_items} items" if self.max_items else "all items"]
        parts += [f"filter {value}" for value in self.filters]
        if self.sort:
            parts.append(f"sort {SORT_KEYS[self.sort]}")
        if self.search:
            parts.append(f"search {self.search!r}")
        if self.item_page is not None:
            where = f"the {self.item_page} page" if self.item_page else "each item's own page"
            fields = ", ".join(self.page_fields) or "its fields"
            parts.append(f"{fields} from {where}")
        return "; ".join(parts)


def sort_field(sort: str) -> tuple[str, bool]:
    """("price", False) for "price_asc": the field sorted on and whether it is descending."""
    if sort not in SORT_KEYS:
        raise ValueError(f"unknown sort {sort!r} (one of: {', '.join(SORT_KEYS)})")
    name, direction = sort.rsplit("_", 1)
    return name, direction == "desc"


def needed_generators(intent: TaskIntent) -> list[GeneratorName]:
    """The generators the intent needs, in the order they run: filter, sort, search."""
    needed: list[GeneratorName] = []
    if intent.filters:
        needed.append("FilterGenerator")
    if intent.sort:
        needed.append("SortGenerator")
    if intent.search:
        needed.append("SearchGenerator")
    return needed


_NUMBER = r"(\d+|" + "|".join(NUMBER_WORDS) + r")"
_NOUNS_RE = re.compile(rf"(?:{NOUNS})", re.IGNORECASE)
_QUOTES = "\"'\u201c\u201d\u2018\u2019\u00ab\u00bb"
_QUOTED = f"[{_QUOTES}]([^{_QUOTES}]+)[{_QUOTES}]"
_STOP = STOP_WORDS
_TERM_STOP = rf"(?:,|;|\.|!|\?|$|\s+(?:{TERM_STOP})\b)"


_COUNTED = (
    rf"\b(?:{_NUMBER[1:]}\s+((?:(?!\d)[\w&'-]+\s+){{1,2}})(?:[\w'-]+[^\Ws])s"
    r"(?=\s+(?:with|from|on|in|of|that|which|sorted|ordered|and|by)\b|\s*[,.;:]|\s*$)"
)
"""A count, one or two words, then the plural it counts: the words may be a filter."""


def _number(text: str) -> int | None:
    value = int(text) if text.isdigit() else NUMBER_WORDS.get(text.lower())
    return value if value and value > 0 else None


def _max_items(task: str) -> int | None:
    patterns = (
        rf"\b(?:{FIRST})\s+{_NUMBER}\b(?!\s*(?:%|percent|stars?|\$|€))",
        rf"\b{_NUMBER}\s+(?:[\w&'-]+\s+){{0,3}}?(?:{NOUNS})\b",
        rf"\b(?:{VERBS})\s+(?:me\s+)?(?:(?:{ARTICLES})\s+)?{_NUMBER}\b"
        r"(?!\s*(?:%|percent|stars?|€))",
    )
    for pattern in patterns:
        match = re.search(pattern, task, re.IGNORECASE)
        if match:
            return _number(match.group(1))
    return None


def _search(task: str) -> tuple[str | None, str]:
    """The search term and the task with that phrase removed (so it is not read twice)."""
    trigger = rf"\b(?:{SEARCH})\s*:?\s*"
    quoted = re.search(trigger + _QUOTED, task, re.IGNORECASE)
    if quoted:
        return quoted.group(1).strip(), task[: quoted.start()] + task[quoted.end() :]
    bare = re.search(trigger + r"([\w][\w&'-]*(?:\s+[\w][\w&'-]*){0,2}?)" + _TERM_STOP, task,
                     re.IGNORECASE)  # fmt: skip
    if bare:
        words = bare.group(1).split()
        while len(words) > 1 and _NOUNS_RE.fullmatch(words[-1]):
            words.pop()
        term = " ".join(words)
        if term.lower() not in _STOP and not _NOUNS_RE.fullmatch(term):
            return term, task[: bare.start()] + " " + task[bare.end(1) :]
    return None, task


def _sort(task: str) -> str | None:
    """ "sorted by <field>[, <direction>]" first, then phrases like "cheapest first"."""
    fields = "|".join(pattern for pattern, _, _ in SORT_FIELDS)
    explicit = re.search(
        rf"\b(?:{SORTED})\s+(?:them\s+|it\s+)?(?:{BY})\s+"
        rf"(?:(?:{ARTICLES}|their|its|su|sus|leur|ihrem|ihren|seu|sua)\s+)?({fields})\b(.*)",
        task,
        re.IGNORECASE,
    )
    if explicit:
        word, rest = explicit.group(1).lower(), explicit.group(2)
        name, descending = next(
            (name, desc)
            for pattern, name, desc in SORT_FIELDS
            if re.fullmatch(pattern, word, re.IGNORECASE)
        )
        tail = re.split(
            r"\b(?:and|then|in|from|matching|search|y|et|und|dans|nach|en)\b|;", rest, maxsplit=1
        )[0]
        if re.search(rf"\b(?:{DESCENDING})\b", tail, re.IGNORECASE):
            descending = True
        elif re.search(rf"\b(?:{ASCENDING})\b", tail, re.IGNORECASE):
            descending = False
        return f"{name}_{'desc' if descending else 'asc'}"
    for pattern, key in SORT_PHRASES:
        if re.search(pattern, task, re.IGNORECASE):
            return key
    return None


def _filters(task: str) -> list[str]:
    value = r"(?:" + _QUOTED + r"|([\w&'-]+(?:\s+[\w&'-]+)?))"
    explicit = (
        rf"\b(?:{IN})\s+(?:(?:{ARTICLES})\s+)?(?:{CATEGORY})\s*:?\s*" + value,
        rf"\b(?:{CATEGORY})\s*(?::|=|\b(?:is|of|es|est|ist|é)\b)\s*" + r"(?:" + _QUOTED
        + r"|([\w&'-]+))",
        r"\b(?:in|from|within)\s+(?:the\s+)?" + r"(?:" + _QUOTED + r"|([\w&'-]+))"
        + r"\s+(?:category|section|department|aisle)\b",
        r"\b(?:filter(?:ed)?|narrow(?:ed)?|restrict(?:ed)?|limit(?:ed)?)\s+(?:it\s+|them\s+)?"
        r"(?:by|to|on)\s+(?:category\s+)?" + r"(?:" + _QUOTED + r"|([\w&'-]+))",
        rf"\b(?:{ONLY})\s+(?:(?:{ARTICLES})\s+)?" + r"(?:" + _QUOTED
        + r"|((?!\d)[\w&'-]+(?:\s+(?!\d)[\w&'-]+){0,2}))",
    )  # fmt: skip
    found: list[str] = []
    for pattern in explicit:
        for match in re.finditer(pattern, task, re.IGNORECASE):
            value = next(group for group in match.groups() if group)
            words = _value_words(value)
            if words:
                found.append(" ".join(words).lower())
    if not found:
        found += _adjective_filters(task)
    return list(dict.fromkeys(found))


def _value_words(value: str) -> list[str]:
    """A filter value's words: up to the first word that is not part of it (a stop word, a
    count, an item noun, a sort word)."""
    words: list[str] = []
    for word in value.split():
        lowered = word.lower()
        if lowered in _STOP or word.isdigit() or _number(word) or _NOUNS_RE.fullmatch(word):
            break
        if re.fullmatch(rf"(?:{SORTED}|{TERM_STOP})", lowered, re.IGNORECASE):
            break
        words.append(word)
    return words


def _adjective_filters(task: str) -> list[str]:
    """Words right before the item noun ("50 kitchen products" -> "kitchen"), or between a
    count and the plural it counts ("15 poetry books" -> "poetry")."""
    found = []
    matches = [
        *re.finditer(rf"((?:[\w&'-]+\s+){{1,3}})(?:{NOUNS})\b", task, re.IGNORECASE),
        *re.finditer(_COUNTED, task, re.IGNORECASE),
    ]
    for match in matches:
        words = match.group(1).split()
        kept: list[str] = []
        for word in reversed(words):
            if word.lower() in _STOP or _number(word) or re.fullmatch(VERBS, word, re.I):
                break
            kept.insert(0, word)
        if kept:
            found.append(" ".join(kept).lower())
    return found


def known_language(task: str) -> bool:
    """Whether the task is written in a language `parse_intent` reads (English, Spanish,
    French, German, Portuguese): it uses their words for items, counts, sorting or filters."""
    return KNOWN_WORDS.search(task) is not None


def parse_intent(task: str) -> TaskIntent:
    """Read a natural-language task into a TaskIntent (deterministic, no model)."""
    text = " ".join(task.split())
    item_page, page_fields, text = item_page_phrase(text)
    search, rest = _search(text)
    sort = _sort(rest)
    return TaskIntent(
        max_items=_max_items(rest),
        filters=_filters(rest),
        sort=sort,
        search=search,
        item_page=item_page,
        page_fields=page_fields,
    )
