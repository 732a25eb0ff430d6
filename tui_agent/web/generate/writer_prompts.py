"""What the recipe generator tells the model, and how its JSON answer is read.

The model gets the strategy's Markdown, the generators' fragments, the task and maxItems, and
answers one JSON object `{"bindings", "recipe"}` in the recipe file's JSON Schema.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from tui_agent.web.plan import Fragment, Strategy
from tui_agent.web.recipe import RecipeError, recipe_json_schema

SYSTEM = """\
You turn a web page's automation strategy into an executable scraping recipe for a recipe \
executor. Answer with exactly one JSON object {{"bindings": {{...}}, "recipe": {{...}}}} and \
nothing else.

Use only selectors the strategy names: each was verified in the browser. Never invent one.

How the executor uses the bindings:
- LIST is the list container, LIST_ITEM each item inside it. FOR_EACH_ITEM_IN_LIST runs its \
body once per item, in page order, never twice for the same item (items are known by their \
link or text), including items that appear later (next page, load more, scrolling).
- CLICK_BEHAVIOR: "shows_panel" (a click fills DETAILS_PANEL on the same page), "navigates" \
(a click opens the item's own page; the executor goes back to the list after each item), \
"inline" (the item expands in place).
- ITEM_FIELDS {{name: selector}} are read inside the list item before any click.
- DETAILS_FIELDS {{name: selector}} are read after the click: inside DETAILS_PANEL \
(shows_panel, navigates; the whole page when navigates has no panel); for inline inside \
DETAILS_PANEL within the item when set, else inside the item itself.
- A field is an element's text, or {{"selector": ..., "attribute": "href"}} for an attribute.
- DETAILS_LOADED {{"exists": selector}} tells that the details are shown (for inline it is \
searched inside the item). PAGE_LOADED and LIST_LOADED are conditions of the same form.
- NEXT_PAGE_BUTTON is the pagination control clicked by {{"type": "CLICK_IF_EXISTS", \
"target": "next_page"}}.
- CLOSE_DETAILS is clicked after each item when it is shown: details that cover the list (a \
modal dialog) must name their close control here, or {{"key": "Escape"}} when only that key \
closes them, or the next item cannot be clicked. The run waits until the details are gone.
- LIST_ITEM_SIBLINGS: an item spread over sibling elements (a title row and a tag row): the \
siblings after each LIST_ITEM that belong to it (a selector, or a count). Fields are then \
read in all of the item's elements.
- NEXT_PAGE_TEXT: when NEXT_PAGE_BUTTON matches several controls (a pager's links), the one \
reading this text is clicked on every page; NEXT_PAGE_NUMBERED: true clicks the page number \
after the current one.
- A field {{"selector": ..., "prefix": "Year:"}} reads a value written after its label in \
the same element (the label, wherever it is in the item, finds the element).
- A click that must go to the item's link: {{"type": "CLICK", "selector": "<link>", \
"within": "item"}} instead of {{"type": "CLICK"}}.
- DETAILS_SCHEMA {{name: description}} with {{"type": "EXTRACT_DETAILS", "parse": true}} has \
a model read those fields from the details' text (prose with no element per field).
- When the list items show every field the task needs, do not click: CLICK_BEHAVIOR \
"inline", no DETAILS_PANEL, the fields in ITEM_FIELDS, and a body of EXTRACT_DETAILS, SAVE, \
MARK_DONE only.

The commands for one list of items that each open details:
[{{"type": "WAIT_FOR", "target": "page"}}, {{"type": "WAIT_FOR", "target": "list"}},
 {{"type": "FOR_EACH_ITEM_IN_LIST", "body": [{{"type": "CLICK"}},
   {{"type": "WAIT_FOR", "target": "details"}}, {{"type": "EXTRACT_DETAILS"}},
   {{"type": "SAVE", "as": "item"}}, {{"type": "MARK_DONE"}}]}},
 {{"type": "END"}}]
When more items come in, put the FOR_EACH_ITEM_IN_LIST inside {{"type": "REPEAT", \
"body": [<the FOR_EACH_ITEM_IN_LIST>, <what brings more>]}}, where what brings more is \
{{"type": "CLICK_IF_EXISTS", "target": "next_page"}} (pagination), {{"type": \
"CLICK_IF_EXISTS", "selector": "<load more button>"}} (load more) or {{"type": "SCROLL", \
"target": "page"}} (infinite scroll). The REPEAT ends by itself when nothing new appears.
Fragments (filter, sort, search) run after WAIT_FOR list, followed by another WAIT_FOR list; \
copy their commands as given (a {{"type": "WAIT_FOR", "target": "list", "changed": true}} \
waits for the list to change after the click before it).
Set recipe.config.maxItems to maxItems (leave config empty when there is no limit).

The answer must follow this JSON Schema:
{schema}"""

USER = """\
TASK: {task}
maxItems: {max_items}

STRATEGY (every selector in it was verified in the browser):
{strategy}
FRAGMENTS (verified; run them before the items):
{fragments}"""

REPAIR = """\
That recipe did not work: {error}
{recipe}
Answer again with the whole corrected JSON object {{"bindings": {{...}}, "recipe": {{...}}}} \
and nothing else."""

_FENCE = re.compile(r"```(?:json)?\s*\n(.*?)```", re.DOTALL)


def system_prompt() -> str:
    schema = json.dumps(recipe_json_schema(), separators=(",", ":"))
    return SYSTEM.format(schema=schema)


def user_prompt(
    strategy: Strategy, fragments: Sequence[Fragment], task: str, max_items: int | None
) -> str:
    shown = [
        {"generator": f.generator, "description": f.description, "commands": f.commands}
        for f in fragments
    ]
    return USER.format(
        task=task.strip() or "(none given: extract every item)",
        max_items=max_items if max_items is not None else "none (every item)",
        strategy=strategy.to_markdown(),
        fragments=json.dumps(shown, indent=1) if shown else "none",
    )


def repair_prompt(error: str, recipe: dict[str, Any] | None) -> str:
    """The message sent back after a failed attempt: the error, and the recipe if it parsed."""
    sent = "" if recipe is None else f"The recipe was:\n{json.dumps(recipe, indent=1)}"
    return REPAIR.format(error=error, recipe=sent)


def answer_json(text: str) -> dict[str, Any]:
    """The JSON object of a model answer (bare, fenced, or after some prose)."""
    candidates = [text.strip(), *(m.group(1).strip() for m in _FENCE.finditer(text))]
    start = text.find("{")
    for candidate in candidates:
        try:
            data = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            return data
    if start >= 0:
        try:
            data, _ = json.JSONDecoder().raw_decode(text[start:])
        except json.JSONDecodeError as exc:
            raise RecipeError(f"the answer is not valid JSON: {exc.msg} (char {exc.pos})") from None
        if isinstance(data, dict):
            return data
    raise RecipeError('the answer holds no JSON object {"bindings": ..., "recipe": ...}')
