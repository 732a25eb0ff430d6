"""Flattening records to dotted field names, and what counts as an empty value.

The output analysis and the items table share these rules, so a column's header and its
cells always agree:

- A nested non-empty dict becomes dotted names, recursively: ``{"seller": {"name": "A"}}``
  gives ``seller.name``. An empty dict stays a (empty) value under its own name.
- Lists are values, never flattened (a list of dicts included).
- A literal dot in a key is escaped as ``\\.`` and a backslash as ``\\\\``, so names are
  unambiguous: ``{"a.b": 1}`` gives ``a\\.b`` while ``{"a": {"b": 1}}`` gives ``a.b``.
- A key that is not a ``str`` is named ``str(key)``; if two keys of one dict get the same
  name, the later one wins (as in a dict literal).
"""

from __future__ import annotations

from numbers import Number
from typing import Any


def key_name(key: Any) -> str:
    """The field-name segment for one dict key (escaped as described in the module doc)."""
    text = key if isinstance(key, str) else str(key)
    if "." in text or "\\" in text:
        return text.replace("\\", "\\\\").replace(".", "\\.")
    return text


def is_plain_key(key: Any) -> bool:
    """Whether a key is its own field-name segment (a `str` needing no escaping)."""
    return type(key) is str and "." not in key and "\\" not in key


def named(obj: dict[Any, Any]) -> dict[str, Any]:
    """`obj` with its keys replaced by their name segments (`obj` itself when all are plain)."""
    if all(map(is_plain_key, obj)):
        return obj
    return {key_name(key): value for key, value in obj.items()}


def flatten_item(item: dict[Any, Any]) -> dict[str, Any]:
    """One record as ``{dotted name: value}``, in depth-first key order."""
    flat: dict[str, Any] = {}
    _flatten_into(flat, "", item)
    return flat


def _flatten_into(flat: dict[str, Any], prefix: str, obj: dict[Any, Any]) -> None:
    for name, value in named(obj).items():
        if isinstance(value, dict) and value:
            _flatten_into(flat, f"{prefix}{name}.", value)
        else:
            flat[prefix + name] = value


def is_empty(value: Any) -> bool:
    """Whether a value counts as missing.

    Empty: None, a string of only whitespace (or none), NaN, and a list, tuple or dict with
    no non-empty member (so ``[]``, ``{}`` and ``["", None]``). ``0`` and ``False`` are values.
    """
    if value is None:
        return True
    if isinstance(value, str):
        return not value or value.isspace()
    if isinstance(value, list | tuple):
        return all(map(is_empty, value))
    if isinstance(value, dict):
        return all(map(is_empty, value.values()))
    if isinstance(value, Number) and not isinstance(value, bool | int):
        return value != value  # NaN is the only value unequal to itself
    return False
