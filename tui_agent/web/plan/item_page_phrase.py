"""Fields a task says live on another page each item links to: "X from the author page".

`item_page_phrase("Extract 10 quotes with the text and the author's birth date from the author
page")` gives `("author", ["birth date"], <the task without "from the author page">)`: the
thing whose page holds the fields ("" for the item's own page: "on each book's page", "from
the detail page"), the fields as written, and the task left for the other readings (so the
phrase is never read as a filter).
"""

from __future__ import annotations

import re

from tui_agent.web.plan.intent_words import NOUNS, NUMBER_WORDS

_PAGE = re.compile(
    r"\s*\b(?:from|on|in|at|via)\s+(?:(?:the|each|every|its|their|his|her|an?)\s+)?"
    r"(?:(?P<thing>[\w-]+?)(?:'s|\u2019s|s'|')?\s+)?"
    r"(?:(?:own|profile|detail|details|individual|dedicated|bio)\s+)?pages?\b(?!\s*\d)",
    re.IGNORECASE,
)
"""'from the author page', 'on each book's page', 'from its own page', 'on the author's
profile page'."""
_NOT_A_THING = re.compile(
    r"(?:\d+\w*|first|second|third|fourth|fifth|last|next|previous|this|that|same|current"
    r"|list|listing|listings|results?|search|home|main|index|landing|start|front|web|whole"
    r"|entire|one|single|category|categories|overview|table|the|each|every|a|an)",
    re.IGNORECASE,
)
"""Words before "page" that name a page of the list itself, not one an item links to."""
_OWN = {"own", "detail", "details", "individual", "dedicated", "item", "its", "their", "bio"}
"""Words that make it the item's own page."""
_SEPARATOR = re.compile(
    r"(?:,|;|:|\(|\)|\bwith\b|\band\b|\bincluding\b|\bplus\b|\bas well as\b)", re.I
)
_TRAILING = re.compile(r"\s+(?:is|are|lives?|appears?|shown|given|listed|found|read)$", re.I)
_LEADING = re.compile(r"^(?:(?:the|each|every|its|their|his|her|also|then)\s+)+", re.IGNORECASE)
_NOUN = re.compile(rf"(?:{NOUNS})", re.IGNORECASE)


def _stem(word: str) -> str:
    word = word.lower()
    for suffix in ("'s", "\u2019s", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _counted(task: str) -> str | None:
    """The noun a count goes with ("10 quotes" -> "quotes"), if any."""
    numbers = "|".join(NUMBER_WORDS)
    match = re.search(rf"\b(?:\d+|{numbers})\s+([\w-]+)", task, re.IGNORECASE)
    return match.group(1) if match else None


def item_page_phrase(task: str) -> tuple[str | None, list[str], str]:
    """(the thing whose page, the fields, the task without the phrase); (None, [], task) when
    the task names no such page."""
    for match in _PAGE.finditer(task):
        thing = (match.group("thing") or "").lower()
        if thing and _NOT_A_THING.fullmatch(thing):
            continue
        counted = _counted(task)
        own = (
            not thing
            or thing in _OWN
            or _NOUN.fullmatch(thing) is not None
            or (counted is not None and _stem(counted) == _stem(thing))
        )
        before = _SEPARATOR.split(task[: match.start()])[-1]
        words = _TRAILING.sub("", _LEADING.sub("", before.strip()))
        if thing:
            words = re.sub(rf"^{re.escape(thing)}(?:'s|\u2019s|s')?\s+", "", words, flags=re.I)
        fields = [words.strip()] if words.strip() and len(words.split()) <= 4 else []
        rest = (task[: match.start()] + task[match.end() :]).strip()
        return ("" if own else thing), fields, rest
    return None, [], task
