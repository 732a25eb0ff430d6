"""Output schema detection: `analyze_output` gives fields, types, coverage and examples.

A result that is a list of dicts is analysed field by field. Records are flattened as in
`tui_agent.analysis.flatten` (nested dicts become dotted names). For each field:

- ``populated`` counts the records whose value is not empty (`is_empty`: None, blank text,
  NaN, empty containers; ``0`` and ``False`` are values). A missing key counts as empty.
- ``coverage`` is ``populated / records * 100`` rounded half up, as JavaScript's
  ``Math.round`` does (12.5 -> 13), computed exactly in integers.
- ``required`` means more than 70 % populated, computed exactly (exactly 70 % is not).
- ``examples`` are the first three populated values, in record order.
- ``type_counts`` counts the kind of every populated value (`kinds.value_kind`); ``type`` is the
  kind with the most values, ties going to the earlier of string, number, date, url, boolean
  (the more general kind wins), and "string" when nothing is populated; ``mixed`` says more
  than one kind was seen.

Fields come in first-seen key order; a nested dict's fields take its key's place, after the
key's own field when it also holds plain values (``seller`` before ``seller.name``).

The work is done column by column with C-level passes (``map``, ``Counter``, ``filter``), so
it runs at a speed comparable to one ``json.dumps`` of the same records.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from datetime import date
from itertools import accumulate, chain, compress, islice, repeat
from numbers import Number
from operator import contains, itemgetter, ne, sub
from typing import Any

from tui_agent.analysis.flatten import is_empty, is_plain_key, named
from tui_agent.analysis.kinds import (
    DIGITS,
    KIND_ORDER,
    URL_PREFIXES,
    is_date_text,
    majority_kind,
    members_kind,
)
from tui_agent.analysis.shapes import FieldDefinition, FieldType, OutputAnalysis


def analyze_output(result: Any) -> OutputAnalysis:
    """Describe a result: its shape and, for a non-empty list of dicts, its fields.

    A dict is an "object" and anything else that is not a list or tuple a "primitive", both
    with ``item_count`` 0. A list (or tuple) is an "array" of ``len`` items; it
    is structured when it is not empty and every item is a dict.
    """
    if isinstance(result, dict):
        return OutputAnalysis(type="object")
    if not isinstance(result, list | tuple):
        return OutputAnalysis(type="primitive")
    count = len(result)
    if not count or not all(issubclass(cls, dict) for cls in set(map(type, result))):
        return OutputAnalysis(type="array", item_count=count)
    fields: list[FieldDefinition] = []
    _add_fields(fields, result, count, "")
    return OutputAnalysis(type="array", is_structured=True, item_count=count, fields=fields)


def _add_fields(
    fields: list[FieldDefinition], objects: Sequence[dict[Any, Any]], total: int, prefix: str
) -> None:
    """Append the fields of `objects` (records, or one key's nested dicts) to `fields`."""
    shapes = dict.fromkeys(map(tuple, objects))
    keys = dict.fromkeys(chain.from_iterable(shapes))
    if not all(map(is_plain_key, keys)):
        objects = list(map(named, objects))
        shapes = dict.fromkeys(map(tuple, objects))
        keys = dict.fromkeys(chain.from_iterable(shapes))
    complete = all(len(shape) == len(keys) for shape in shapes)
    for key in keys:
        if complete:
            column = list(map(itemgetter(key), objects))
        else:
            column = list(map(dict.get, objects, repeat(key)))
        kinds, nested = _classify(column)
        name = prefix + key
        if nested:
            present = len(objects) if complete else sum(map(contains, objects, repeat(key)))
            if present > len(nested):
                fields.append(_field(name, kinds, total, column))
            _add_fields(fields, nested, total, name + ".")
        else:
            fields.append(_field(name, kinds, total, column))


def _classify(column: list[Any]) -> tuple[Counter[str], list[dict[Any, Any]]]:
    """The kind counts of a column's non-empty values, and its non-empty dicts."""
    kinds: Counter[str] = Counter()
    nested: list[dict[Any, Any]] = []
    for cls, count in Counter(map(type, column)).items():
        if cls is type(None):
            continue
        if issubclass(cls, bool):
            kinds["boolean"] += count
        elif issubclass(cls, int):
            kinds["number"] += count
        elif issubclass(cls, dict):
            nested.extend(filter(None, _of_type(column, cls, count)))
        elif issubclass(cls, str):
            _count_texts(_of_type(column, cls, count), kinds)
        elif issubclass(cls, list | tuple):
            _count_sequences(_of_type(column, cls, count), kinds)
        elif issubclass(cls, Number):
            values = _of_type(column, cls, count)
            kinds["number"] += count - sum(map(ne, values, values))  # NaN != NaN
        elif issubclass(cls, date):
            kinds["date"] += count
        else:
            kinds["string"] += count
    return kinds, nested


def _count_texts(values: list[str], kinds: Counter[str]) -> None:
    """Count the kinds of texts in bulk; blank texts are empty and not counted."""
    texts = list(filter(None, map(str.strip, values)))
    url_flags, date_flags = _url_and_date_flags(texts)
    urls, dates = sum(url_flags or ()), sum(date_flags or ())
    kinds["url"] += urls
    kinds["date"] += dates
    kinds["string"] += len(texts) - urls - dates


def _count_sequences(values: list[list[Any] | tuple[Any, ...]], kinds: Counter[str]) -> None:
    """Count the kinds of lists: in bulk when all members are texts, else list by list."""
    if set(map(type, chain.from_iterable(values))) <= {str}:
        _count_text_lists(values, kinds)
        return
    for members in values:
        kind = members_kind(members)
        if kind is not None:
            kinds[kind] += 1


def _count_text_lists(values: list[list[str] | tuple[str, ...]], kinds: Counter[str]) -> None:
    """Count the kinds of lists of texts from per-list counts of filled, url and date members."""
    texts = list(map(str.strip, chain.from_iterable(values)))
    url_flags, date_flags = _url_and_date_flags(texts)
    bounds = [0, *accumulate(map(len, values))]
    filled = _sums_between(map(bool, texts), bounds)
    if url_flags is None and date_flags is None:
        kinds["string"] += len(values) - list(filled).count(0)
        return
    no_flags = repeat(False, len(texts))
    per_list = Counter(
        zip(
            filled,
            _sums_between(url_flags or no_flags, bounds),
            _sums_between(date_flags or no_flags, bounds),
            strict=True,
        )
    )
    for (count_filled, count_urls, count_dates), count in per_list.items():
        if count_filled:
            split: dict[FieldType, int] = {
                "string": count_filled - count_urls - count_dates,
                "url": count_urls,
                "date": count_dates,
            }
            kinds[majority_kind(split)] += count


def _url_and_date_flags(texts: list[str]) -> tuple[Iterator[bool] | None, Iterator[bool] | None]:
    """Which stripped texts are urls and which are dates, as lazy bulk passes.

    None stands for "none is": the first characters tell cheaply whether any text can be a
    url or a date at all. Dates are checked once per distinct text.
    """
    firsts = set(map(itemgetter(0), filter(None, texts)))
    urls = dates = None
    if "h" in firsts or "H" in firsts:
        urls = map(str.startswith, texts, repeat(URL_PREFIXES))
    if firsts.isdisjoint(DIGITS):
        return urls, dates
    if firsts.issubset(DIGITS):
        numeric = set(texts)
    else:
        numeric = set(compress(texts, map(str.startswith, texts, repeat(DIGITS))))
    dates = map(set(filter(is_date_text, numeric)).__contains__, texts)
    return urls, dates


def _sums_between(flags: Iterable[bool], bounds: list[int]) -> Iterator[int]:
    """The number of true flags in each slice ``flags[bounds[i]:bounds[i + 1]]``."""
    totals = [0, *accumulate(flags)]
    return map(sub, map(totals.__getitem__, bounds[1:]), map(totals.__getitem__, bounds[:-1]))


def _of_type(column: list[Any], cls: type, count: int) -> list[Any]:
    return column if count == len(column) else [v for v in column if type(v) is cls]


def _is_leaf_value(value: Any) -> bool:
    return not isinstance(value, dict) and not is_empty(value)


def _field(name: str, kinds: Counter[str], total: int, column: list[Any]) -> FieldDefinition:
    type_counts: dict[FieldType, int] = {kind: kinds[kind] for kind in KIND_ORDER if kinds[kind]}
    populated = sum(type_counts.values())
    return FieldDefinition(
        name=name,
        type=majority_kind(type_counts),
        type_counts=type_counts,
        mixed=len(type_counts) > 1,
        required=populated * 10 > total * 7,
        coverage=(populated * 200 + total) // (total * 2),
        populated=populated,
        examples=list(islice(filter(_is_leaf_value, column), 3)),
    )
