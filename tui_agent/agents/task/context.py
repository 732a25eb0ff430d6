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

from tui_agent.redaction import SecretMask, is_secret_key

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


def describe_value(key: str, value: Any, secrets: SecretMask | None = None) -> str:
    """One line about a context value for the model: type, size and a preview. A secret is
    described, never shown: previews show `<secret:PATH>` where secrets are."""
    kind = _type_name(value)
    if is_secret_key(key):
        size = f", {len(value)} characters" if isinstance(value, str) else ""
        return (
            f"{kind}{size}, a secret shown as <secret:{key}>: use context[{key!r}] in code, "
            "its value is not shown"
        )
    shown = (secrets or SecretMask.of({key: value})).placeholders({key: value})[key]
    if isinstance(value, str):
        decoded = _decoded_kind(value)
        if decoded:
            return f"str, {len(value):,} characters ({decoded})"
        return f"str, {len(value):,} characters: {_preview(shown)}"
    if isinstance(value, dict):
        keys = ", ".join(repr(k) for k in list(value)[:12])
        more = f" and {len(value) - 12} more" if len(value) > 12 else ""
        return f"dict with {len(value)} keys ({keys}{more}): {_preview(shown)}"
    if isinstance(value, list):
        return f"list of {len(value)} items: {_preview(shown)}"
    return f"{kind}: {_preview(shown)}"


def secrets_note(context: dict[str, Any]) -> str:
    """The lines telling the model where each secret of `context` is (empty without any)."""
    listed = SecretMask.of(context).listed
    if not listed:
        return ""
    lines = [f"- {secret.placeholder} is {secret.where}" for secret in listed]
    return (
        "SECRETS (their values are never shown to you; wherever you see a placeholder, the "
        "real value is in `context` at that place, so read it from there in code):\n"
        + "\n".join(lines)
    )


def summarise_context(context: dict[str, Any], secrets: SecretMask | None = None) -> str:
    """The context as the model's prompt shows it: one line per key, in order, then where
    its secrets are. `secrets` masks values (those learned so far; by default the context's
    own)."""
    if not context:
        return "(empty: the context holds no data)"
    shown = {key: value for key, value in context.items() if key != METADATA_KEY}
    secrets = secrets or SecretMask.of(shown)
    lines = [
        f"- context[{key!r}]: {describe_value(str(key), value, secrets)}"
        for key, value in list(shown.items())[:MAX_SUMMARY_KEYS]
    ]
    if len(shown) > MAX_SUMMARY_KEYS:
        lines.append(f"- … and {len(shown) - MAX_SUMMARY_KEYS} more keys")
    note = secrets_note(shown)
    return "\n".join(lines) + (f"\n\n{note}" if note else "")


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
