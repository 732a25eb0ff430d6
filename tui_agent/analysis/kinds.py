"""The kind of a single value: string, number, boolean, url or date.

`value_kind` is the rule; `tui_agent.analysis.output` applies the same rule to whole columns
in bulk (and a test checks that the two agree).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from numbers import Number
from typing import Any

from tui_agent.analysis.flatten import is_empty
from tui_agent.analysis.shapes import FieldType

# Ties between kinds go to the earliest here: the more general kind wins.
KIND_ORDER: tuple[FieldType, ...] = ("string", "number", "date", "url", "boolean")
URL_PREFIXES = ("http://", "https://", "HTTP://", "HTTPS://")
DIGITS = tuple("0123456789")
_SLASH_DATE = re.compile(
    r"([0-9]{1,2})/([0-9]{1,2})/([0-9]{4})"  # D/M/YYYY or M/D/YYYY
    r"|([0-9]{4})/([0-9]{1,2})/([0-9]{1,2})"  # YYYY/M/D
)


def value_kind(value: Any) -> FieldType:
    """The kind of one non-empty value.

    - bool -> boolean; other numbers -> number; `date` and `datetime` objects -> date.
    - text, judged with surrounding whitespace stripped -> url when it starts with
      ``http://`` or ``https://`` (scheme all lower or all upper case), date when
      `is_date_text`, else string. Numeric text stays string ("42" may be an id or a zip code).
    - a list or tuple -> the majority kind of its non-empty members (ties as for fields).
    - anything else (a dict inside a list included) -> string.
    """
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, str):
        return _text_kind(value.strip())
    if isinstance(value, Number):
        return "number"
    if isinstance(value, date):
        return "date"
    if isinstance(value, list | tuple):
        return members_kind(value) or "string"
    return "string"


def _text_kind(text: str) -> FieldType:
    """The kind of a stripped, non-empty text (rules in `value_kind`)."""
    if text.startswith(URL_PREFIXES):
        return "url"
    if text.startswith(DIGITS) and is_date_text(text):
        return "date"
    return "string"


def is_date_text(text: str) -> bool:
    """Whether a stripped text is a date.

    Accepted: an ISO 8601 calendar date ``YYYY-MM-DD``, optionally followed by ``T``, ``t``
    or a space and a time that `datetime.fromisoformat` accepts (seconds, fractions and an
    offset or ``Z`` are optional); ``YYYY/M/D``; and ``D/M/YYYY`` or ``M/D/YYYY`` (one or two
    digits for day and month) when either reading is a real calendar date. Nothing else
    (no month names, no two-digit years).
    """
    size = len(text)
    if size >= 10 and text[4] == "-" and text[7] == "-":
        if size > 10 and text[10] not in "Tt ":
            return False
        try:
            (date if size == 10 else datetime).fromisoformat(text)
        except ValueError:
            return False
        return True
    if 8 <= size <= 10 and "/" in text and (match := _SLASH_DATE.fullmatch(text)):
        first, second, year, iso_year, iso_month, iso_day = match.groups()
        if year is None:
            return _is_calendar_date(iso_year, iso_month, iso_day)
        return _is_calendar_date(year, first, second) or _is_calendar_date(year, second, first)
    return False


def majority_kind(counts: Mapping[FieldType, int]) -> FieldType:
    """The kind with the highest count (ties: earliest in `KIND_ORDER`; none: string)."""
    return max(KIND_ORDER, key=lambda kind: counts.get(kind, 0))


def _is_calendar_date(year: str, month: str, day: str) -> bool:
    try:
        date(int(year), int(month), int(day))
    except ValueError:
        return False
    return True


def members_kind(members: Sequence[Any]) -> FieldType | None:
    """The majority kind of a list's non-empty members (None when it has none)."""
    found = [value_kind(member) for member in members if not is_empty(member)]
    if not found:
        return None
    if found.count(found[0]) == len(found):
        return found[0]
    return majority_kind(Counter(found))
