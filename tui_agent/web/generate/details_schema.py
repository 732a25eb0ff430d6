"""The fields a model reads from details written as prose, and the recipe that asks for them.

When no selector names the details' fields (prose, an unlabelled block of text), the recipe
can still get them: the model proposes a schema from the task and a few details texts the dry
run read (`schema_prompt` / `read_schema`), and `with_parsing` writes it into the recipe as
DETAILS_SCHEMA with EXTRACT_DETAILS "parse": true, so each item's text is parsed into those
fields (see recipe.details_parser).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from tui_agent.llm.json_object import json_object_in
from tui_agent.web.recipe import RecipeFile, parse_recipe

MAX_FIELDS = 12
SAMPLE_CHARS = 2000

SYSTEM = """\
You design the records a web scraper saves. Reply with one JSON object mapping field names \
to a short description of what each holds, and nothing else."""

USER = """\
Task: {task}
Fields already read by selectors: {known}

The details text of {count} items of the page:
{samples}

Which fields do these details give that the task wants? Name at most {limit}, as short \
lower-case names with underscores (e.g. "price", "seller", "date"), each with a short \
description: {{"name": "what it holds", ...}}. Leave out the fields already read."""


def schema_prompt(task: str, texts: Sequence[str], known: Sequence[str]) -> list[dict[str, str]]:
    """The messages asking for the fields of `texts` (details texts of a few items)."""
    samples = "\n".join(
        f"--- item {number} ---\n{text[:SAMPLE_CHARS]}" for number, text in enumerate(texts, 1)
    )
    user = USER.format(
        task=task.strip() or "extract the items",
        known=", ".join(known) or "none",
        count=len(texts),
        samples=samples,
        limit=MAX_FIELDS,
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def read_schema(text: str, known: Sequence[str] = ()) -> dict[str, str] | None:
    """The schema in a model's answer: names made safe, known ones left out; None if none."""
    data = json_object_in(text)
    if data is None:
        return None
    schema: dict[str, str] = {}
    for raw, meaning in data.items():
        name = "_".join(re.findall(r"\w+", str(raw).lower()))
        if name and name not in known and name not in ("text", "link"):
            schema[name] = str(meaning) if meaning else name
        if len(schema) == MAX_FIELDS:
            break
    return schema or None


def with_parsing(recipe: RecipeFile, schema: dict[str, str]) -> RecipeFile:
    """`recipe` with DETAILS_SCHEMA set and every EXTRACT_DETAILS parsing the details."""
    data = recipe.to_json()
    data["bindings"]["DETAILS_SCHEMA"] = dict(schema)

    def mark(commands: list[dict[str, Any]]) -> None:
        for command in commands:
            if command["type"] == "EXTRACT_DETAILS":
                command["parse"] = True
            mark(command.get("body", []))

    mark(data["recipe"]["commands"])
    return parse_recipe(data, "the recipe with details parsing")
