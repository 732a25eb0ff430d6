"""A model reading named fields from an item's details text (EXTRACT_DETAILS with "parse").

Details written as prose ("Sold by Granite Works for $12.50, listed on 3 March 2024") have no
element per field for a selector to read. `DetailsParser.parse(recipe_id, schema, text)` asks
the model for the schema's fields as one JSON object, priced like every call, and keeps the
answer in a cache per recipe and text (`DetailsCache`), so running the same recipe over the
same details again costs nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_agent.events import LLMCall
from tui_agent.llm.json_object import json_object_in

if TYPE_CHECKING:
    from tui_agent.llm.client import LLM

TEXT_LIMIT = 6000
"""Characters of details text sent to the model (the rest is cut)."""
PURPOSE = "details fields"

SYSTEM = """\
You read the details of one item of a web page (a product, an article, a listing) and \
return its fields as one JSON object, and nothing else. Use exactly the keys asked for. \
Copy each value as the text writes it (same words, same number format, same currency sign); \
do not translate, convert or invent. Use null for a field the text does not give."""


@dataclass(frozen=True)
class Parsed:
    """What a parse gave: the fields (only the schema's names), its call record, and why it
    gave nothing (`error`)."""

    fields: dict[str, str | None] = field(default_factory=dict)
    call: LLMCall | None = None
    cached: bool = False
    error: str | None = None


class DetailsCache:
    """Parsed fields kept on disk: one JSON file per recipe, keyed by schema and text hash."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self._loaded: dict[str, dict[str, Any]] = {}

    def _path(self, recipe_id: str) -> Path:
        safe = re.sub(r"[^A-Za-z0-9._-]+", "-", recipe_id).strip("-.") or "recipe"
        return self.folder / f"{safe[:80]}.json"

    def _entries(self, recipe_id: str) -> dict[str, Any]:
        if recipe_id not in self._loaded:
            try:
                data = json.loads(self._path(recipe_id).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                data = {}
            self._loaded[recipe_id] = data if isinstance(data, dict) else {}
        return self._loaded[recipe_id]

    def get(self, recipe_id: str, key: str) -> dict[str, str | None] | None:
        found = self._entries(recipe_id).get(key)
        return found if isinstance(found, dict) else None

    def put(self, recipe_id: str, key: str, fields: dict[str, str | None]) -> None:
        """Keep `fields`; a cache that cannot be written is only a cache (nothing raised)."""
        entries = self._entries(recipe_id)
        entries[key] = fields
        with contextlib.suppress(OSError):
            self.folder.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(entries, out, ensure_ascii=False, indent=1)
            os.replace(temporary, self._path(recipe_id))


def cache_key(schema: dict[str, str], text: str) -> str:
    """The hash of a schema and a details text."""
    blob = json.dumps(schema, sort_keys=True, ensure_ascii=False) + "\n" + text
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:32]


def prompt(schema: dict[str, str], text: str) -> list[dict[str, str]]:
    """The messages asking for `schema`'s fields in `text`."""
    wanted = "\n".join(f'- "{name}": {meaning}' for name, meaning in schema.items())
    cut = text if len(text) <= TEXT_LIMIT else text[:TEXT_LIMIT] + " …"
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"Fields:\n{wanted}\n\nDetails text:\n{cut}"},
    ]


def read_answer(text: str, schema: dict[str, str]) -> dict[str, str | None] | None:
    """The schema's fields from the model's JSON answer (values as text), or None."""
    data = json_object_in(text)
    if data is None:
        return None
    fields: dict[str, str | None] = {}
    for name in schema:
        value = data.get(name)
        if value is None or value == "":
            fields[name] = None
        elif isinstance(value, str):
            fields[name] = " ".join(value.split())
        else:
            fields[name] = json.dumps(value, ensure_ascii=False)
    return fields


class DetailsParser:
    """Parses details text with `llm`, caching answers in `cache`."""

    def __init__(self, llm: LLM, cache: DetailsCache) -> None:
        self.llm = llm
        self.cache = cache

    async def parse(self, recipe_id: str, schema: dict[str, str], text: str) -> Parsed:
        """The schema's fields read from `text` (from the cache when seen before)."""
        if not text.strip():
            return Parsed(error="no details text to parse")
        key = cache_key(schema, text)
        kept = self.cache.get(recipe_id, key)
        if kept is not None:
            call = LLMCall(model=self.llm.model, cost=0.0, cached=True, purpose=PURPOSE)
            return Parsed(fields=kept, call=call, cached=True)
        from tui_agent.llm.errors import LLMError

        try:
            reply = await self.llm.complete(prompt(schema, text), want_json=True, purpose=PURPOSE)
        except LLMError as exc:
            return Parsed(error=f"the model could not parse the details: {exc}")
        fields = read_answer(reply.text, schema)
        if fields is None:
            error = f"the model's answer is not a JSON object: {reply.text[:80]!r}"
            return Parsed(call=reply.call, error=error)
        self.cache.put(recipe_id, key, fields)
        return Parsed(fields=fields, call=reply.call)
