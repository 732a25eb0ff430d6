"""A task's context seen three ways: its schema (the cache key), a summary for the model's
prompt, and what a run changed in it."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from tui_agent.redaction import is_secret_key

METADATA_KEY = "_ai_metadata"
ANALYSIS_KEY = "_data_analysis"
RESERVED_KEYS = (METADATA_KEY, ANALYSIS_KEY)
"""Keys the executor writes itself; the model's code reads `_data_analysis`, never writes them."""

PREVIEW_CHARS = 160
MAX_SUMMARY_KEYS = 60
MAX_SCHEMA_VARIANTS = 8
_BASE64 = re.compile(r"^[A-Za-z0-9+/\s]+={0,2}$")
_MAGIC = (
    (b"%PDF", "a PDF document"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"PK\x03\x04", "a ZIP archive (or xlsx/docx)"),
    (b"\x1f\x8b", "gzip data"),
)


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    return type(value).__name__


def value_schema(value: Any) -> Any:
    """Keys and value types, recursively; never values. A list's schema is the set of its
    elements' schemas (at most MAX_SCHEMA_VARIANTS, else "mixed")."""
    if isinstance(value, dict):
        return {"object": {str(key): value_schema(item) for key, item in sorted(value.items())}}
    if isinstance(value, list | tuple):
        variants = {json.dumps(value_schema(item), sort_keys=True) for item in value}
        if len(variants) > MAX_SCHEMA_VARIANTS:
            return {"array": "mixed"}
        return {"array": [json.loads(variant) for variant in sorted(variants)]}
    return _type_name(value)


def context_schema(context: dict[str, Any]) -> dict[str, Any]:
    """The schema of a task's input context, without the keys the executor writes itself."""
    visible = {key: item for key, item in context.items() if key not in RESERVED_KEYS}
    return value_schema(visible)


def schema_hash(schema: Any) -> str:
    """A stable hash of a schema (sha256 of its canonical JSON, hex)."""
    canonical = json.dumps(schema, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _decoded_kind(text: str) -> str | None:
    """What a long base64 string decodes to ("a PDF document"), or None if it is not base64."""
    if len(text) < 64 or not _BASE64.match(text[:4096]):
        return None
    try:
        head = base64.b64decode(text[:64], validate=False)
    except (binascii.Error, ValueError):
        return None
    kind = next((name for magic, name in _MAGIC if head.startswith(magic)), "binary data")
    return f"base64 of {kind}, about {len(text) * 3 // 4 // 1024:,} KiB decoded"


def _preview(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def describe_value(key: str, value: Any) -> str:
    """One line about a context value for the model: type, size and a preview (a secret is
    described, never shown)."""
    kind = _type_name(value)
    if is_secret_key(key):
        size = f", {len(value)} characters" if isinstance(value, str) else ""
        return f"{kind}{size}, a secret: use context[{key!r}] in code, its value is not shown"
    if isinstance(value, str):
        decoded = _decoded_kind(value)
        if decoded:
            return f"str, {len(value):,} characters ({decoded})"
        return f"str, {len(value):,} characters: {_preview(value)}"
    if isinstance(value, dict):
        keys = ", ".join(repr(k) for k in list(value)[:12])
        more = f" and {len(value) - 12} more" if len(value) > 12 else ""
        return f"dict with {len(value)} keys ({keys}{more}): {_preview(value)}"
    if isinstance(value, list):
        return f"list of {len(value)} items: {_preview(value)}"
    return f"{kind}: {_preview(value)}"


def summarise_context(context: dict[str, Any]) -> str:
    """The context as the model's prompt shows it: one line per key, in order."""
    if not context:
        return "(empty: the context holds no data)"
    lines = [
        f"- context[{key!r}]: {describe_value(str(key), value)}"
        for key, value in list(context.items())[:MAX_SUMMARY_KEYS]
        if key != METADATA_KEY
    ]
    if len(context) > MAX_SUMMARY_KEYS:
        lines.append(f"- … and {len(context) - MAX_SUMMARY_KEYS} more keys")
    return "\n".join(lines)


@dataclass(frozen=True)
class ContextChange:
    """What a run did to the context's top-level keys."""

    added: tuple[str, ...]
    changed: tuple[str, ...]
    removed: tuple[str, ...]

    @property
    def any(self) -> bool:
        return bool(self.added or self.changed or self.removed)

    @property
    def written(self) -> tuple[str, ...]:
        """Keys the run added or changed."""
        return self.added + self.changed


def context_change(before: dict[str, Any], after: dict[str, Any]) -> ContextChange:
    """The keys added, changed and removed between `before` and `after` (reserved keys aside)."""

    def visible(context: dict[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in context.items() if key not in RESERVED_KEYS}

    old, new = visible(before), visible(after)
    return ContextChange(
        added=tuple(key for key in new if key not in old),
        changed=tuple(key for key in new if key in old and new[key] != old[key]),
        removed=tuple(key for key in old if key not in new),
    )
