"""What a scraping task asks of the list: how many items, which filters, which order, which search.

`parse_intent("Get the first 50 kitchen products sorted by price, cheapest first")` gives
`TaskIntent(max_items=50, filters=["kitchen"], sort="price_asc", search=None)`. The reading is
deterministic (patterns, no model); `needed_generators` says which filter / sort / search
generators the intent calls for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

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

    def describe(self) -> str:
        """One line for logs: "50 items; filter kitchen; sort price, lowest first"."""
        parts = [f"{self.max_items} items" if self.max_items else "all items"]
        parts += [f"filter {value}" for value in self.filters]
        if self.sort:
            parts.append(f"sort {SORT_KEYS[self.sort]}")
        if self.search:
            parts.append(f"search {self.search!r}")
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


_NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "twelve": 12,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "hundred": 100,
}
_NUMBER = r"(\d+|" + "|".join(_NUMBER_WORDS) + r")"
_NOUNS = (
    r"items?|products?|results?|listings?|entries|entry|records?|rows?|articles?|posts?|jobs?"
    r"|offers?|deals?|cards?|links?|pages?|things?|ones"
)
_NOUNS_RE = re.compile(rf"(?:{_NOUNS})", re.IGNORECASE)
_QUOTES = "\"'\u201c\u201d\u2018\u2019\u00ab\u00bb"
_QUOTED = f"[{_QUOTES}]([^{_QUOTES}]+)[{_QUOTES}]"
_STOP = {
    "a", "an", "the", "all", "first", "top", "last", "next", "more", "of", "these", "those",
    "new", "newest", "latest", "oldest", "recent", "cheapest", "cheap", "expensive", "best",
    "worst", "rated", "top-rated", "most", "least", "visible", "listed", "available",
    "following", "remaining", "some", "many", "any", "other", "different", "unique", "such",
    "product", "item", "listing", "job", "result", "page", "list", "data", "detail", "details",
    "record", "entry", "search", "shop", "store", "catalog", "catalogue", "individual", "only",
    "up", "to", "at", "max", "maximum", "about", "around", "roughly", "approximately", "my",
    "our", "your", "their", "its", "this", "that", "from", "in", "on", "with", "and", "or",
    "for", "by", "per", "each", "every", "single", "popular", "highest", "lowest", "matching",
}  # fmt: skip
_TERM_STOP = (
    r"(?:,|;|\.|!|\?|$|\s+(?:and|then|sorted|sort|ordered|order|in|within|from|on|under|over"
    r"|with|by|starting|cheapest|newest|oldest|latest|highest|lowest|best|top|most|least)\b)"
)


def _number(text: str) -> int | None:
    value = int(text) if text.isdigit() else _NUMBER_WORDS.get(text.lower())
    return value if value and value > 0 else None


def _max_items(task: str) -> int | None:
    patterns = (
        rf"\b(?:first|top|up to|at most|max(?:imum)?(?: of)?|only|no more than)\s+{_NUMBER}\b"
        r"(?!\s*(?:%|percent|stars?|\$))",
        rf"\b{_NUMBER}\s+(?:[\w&'-]+\s+){{0,3}}?(?:{_NOUNS})\b",
        rf"\b(?:extract|get|scrape|collect|fetch|grab|return|take|pull|list|show|find)\s+"
        rf"(?:me\s+)?(?:the\s+)?{_NUMBER}\b(?!\s*(?:%|percent|stars?))",
    )
    for pattern in patterns:
        match = re.search(pattern, task, re.IGNORECASE)
        if match:
            return _number(match.group(1))
    return None


def _search(task: str) -> tuple[str | None, str]:
    """The search term and the task with that phrase removed (so it is not read twice)."""
    trigger = (
        r"\b(?:search(?:ing)?(?:\s+for)?|look(?:ing)?\s+for|query(?:ing)?(?:\s+for)?"
        r"|matching|that\s+match|which\s+match|match(?:es)?|containing|that\s+contain"
        r"|which\s+contain|contains?|mentioning|that\s+mention|with\s+the\s+(?:word|term|keyword)"
        r"|keyword|for\s+the\s+term)\s*:?\s*"
    )
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


_SORT_FIELDS = (
    (r"price|cost", "price", False),
    (r"rating|ratings|stars|reviews|score|popularity", "rating", True),
    (r"date|recency|age|time|listing date|date added", "date", True),
    (r"name|title|alphabet", "title", False),
)
"""Field words after "sorted by", the field, and whether it sorts descending by default."""
_DESCENDING = (
    r"\b(?:desc(?:ending)?|decreasing|reversed?|high(?:est)?\s+(?:first|to\s+low(?:est)?)"
    r"|largest\s+first|biggest\s+first|most\s+expensive|best\s+first|newest(?:\s+first)?"
    r"|latest(?:\s+first)?|most\s+recent|z\s*(?:-|to)\s*a)\b"
)
_ASCENDING = (
    r"\b(?:asc(?:ending)?|increasing|low(?:est)?\s+(?:first|to\s+high(?:est)?)"
    r"|smallest\s+first|cheapest(?:\s+first)?|worst\s+first|oldest(?:\s+first)?"
    r"|earliest(?:\s+first)?|a\s*(?:-|to)\s*z)\b"
)
_SORT_PHRASES: tuple[tuple[str, str], ...] = (
    (r"\b(?:cheapest|least expensive|lowest[- ]priced?|lowest price|"
     r"price\s*:?\s*low(?:est)? to high(?:est)?)", "price_asc"),
    (r"\b(?:most expensive|priciest|highest[- ]priced?|highest price|"
     r"price\s*:?\s*high(?:est)? to low(?:est)?)", "price_desc"),
    (r"\b(?:lowest[- ]rated|worst[- ]rated|worst reviewed|least popular)", "rating_asc"),
    (r"\b(?:top[- ]rated|best[- ]rated|highest[- ]rated|best[- ]reviewed|most popular"
     r"|best (?:ones|products|items))", "rating_desc"),
    (r"\b(?:oldest|earliest|least recent|chronological)", "date_asc"),
    (r"\b(?:newest|latest|most recent|recently (?:added|listed)|newer first)", "date_desc"),
    (r"(?:\bz\s*(?:-|to|→)\s*a\b|reverse alphabetical)", "title_desc"),
    (r"(?:\ba\s*(?:-|to|→)\s*z\b|alphabetical(?:ly)?)", "title_asc"),
)  # fmt: skip


def _sort(task: str) -> str | None:
    """ "sorted by <field>[, <direction>]" first, then phrases like "cheapest first"."""
    fields = "|".join(pattern for pattern, _, _ in _SORT_FIELDS)
    explicit = re.search(
        rf"\b(?:sort(?:ed|ing)?|order(?:ed|ing)?|rank(?:ed|ing)?)\s+(?:them\s+|it\s+)?"
        rf"(?:by|on)\s+(?:the\s+|their\s+|its\s+)?({fields})\b(.*)",
        task,
        re.IGNORECASE,
    )
    if explicit:
        word, rest = explicit.group(1).lower(), explicit.group(2)
        name, descending = next(
            (name, desc) for pattern, name, desc in _SORT_FIELDS if re.fullmatch(pattern, word)
        )
        tail = re.split(r"\b(?:and|then|in|from|matching|search)\b|;", rest, maxsplit=1)[0]
        if re.search(_DESCENDING, tail, re.IGNORECASE):
            descending = True
        elif re.search(_ASCENDING, tail, re.IGNORECASE):
            descending = False
        return f"{name}_{'desc' if descending else 'asc'}"
    for pattern, key in _SORT_PHRASES:
        if re.search(pattern, task, re.IGNORECASE):
            return key
    return None


def _filters(task: str) -> list[str]:
    explicit = (
        r"\b(?:in|from|within|under)\s+(?:the\s+)?categor(?:y|ies)\s*:?\s*" + r"(?:" + _QUOTED
        + r"|([\w&'-]+(?:\s+[\w&'-]+)?))",
        r"\bcategor(?:y|ies)\s*(?::|=|is|of)\s*" + r"(?:" + _QUOTED + r"|([\w&'-]+))",
        r"\b(?:in|from|within)\s+(?:the\s+)?" + r"(?:" + _QUOTED + r"|([\w&'-]+))"
        + r"\s+(?:category|section|department|aisle)\b",
        r"\b(?:filter(?:ed)?|narrow(?:ed)?|restrict(?:ed)?|limit(?:ed)?)\s+(?:it\s+|them\s+)?"
        r"(?:by|to|on)\s+(?:category\s+)?" + r"(?:" + _QUOTED + r"|([\w&'-]+))",
    )  # fmt: skip
    found: list[str] = []
    for pattern in explicit:
        for match in re.finditer(pattern, task, re.IGNORECASE):
            value = next(group for group in match.groups() if group)
            words = [w for w in value.split() if w.lower() not in _STOP and not w.isdigit()]
            if words and _NOUNS_RE.fullmatch(words[-1]) and len(words) > 1:
                words = words[:-1]
            if words:
                found.append(" ".join(words).lower())
    if not found:
        found += _adjective_filters(task)
    return list(dict.fromkeys(found))


def _adjective_filters(task: str) -> list[str]:
    """Words right before the item noun ("50 kitchen products" -> "kitchen")."""
    found = []
    for match in re.finditer(rf"((?:[\w&'-]+\s+){{1,3}})(?:{_NOUNS})\b", task, re.IGNORECASE):
        words = match.group(1).split()
        kept: list[str] = []
        for word in reversed(words):
            if word.lower() in _STOP or _number(word) or word.lower() in _VERBS:
                break
            kept.insert(0, word)
        if kept:
            found.append(" ".join(kept).lower())
    return found


_VERBS = {
    "extract", "get", "scrape", "collect", "fetch", "grab", "return", "take", "pull", "show",
    "find", "list", "give", "me", "want", "need", "please", "download", "save", "export", "read",
}  # fmt: skip


def parse_intent(task: str) -> TaskIntent:
    """Read a natural-language task into a TaskIntent (deterministic, no model)."""
    text = " ".join(task.split())
    search, rest = _search(text)
    sort = _sort(rest)
    return TaskIntent(
        max_items=_max_items(rest),
        filters=_filters(rest),
        sort=sort,
        search=search,
    )
