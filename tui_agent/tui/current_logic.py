"""What produces a field now, for the feedback modal: the code's lines, or the recipe binding.

The version in use is the session's current "recipe" artifact when it has one, else the recipe
in the test context; else the code in force (`code_in_force`: the one refinement rewrites).
When no line of that code gives the field a value (it returns records an earlier step of a
CodeAct session built), the latest earlier step's code that does is shown, headed by its step;
else the lines of the code in force that read the field.
"""

from __future__ import annotations

import json
from typing import Any

from tui_agent.analysis.logic import field_logic
from tui_agent.session import SessionState
from tui_agent.session_questions import code_in_force

READ_WHERE = {
    "shows_panel": "read in DETAILS_PANEL {panel} after clicking the item",
    "navigates": "read on the details page the item's link opens",
    "inline": "read inside the clicked LIST_ITEM {item}",
}
"""Where DETAILS_FIELDS are read, by CLICK_BEHAVIOR (as the executor reads them)."""


def current_logic(state: SessionState, field: str) -> str | None:
    """The binding (recipe sessions) or the lines of code producing `field`; None if unknown."""
    document = state.recipe_in_use()
    if document is not None:
        return recipe_binding(document, field)
    in_force = code_in_force(state)
    if in_force is None:
        return None
    found = field_logic(in_force.code, field, reads=False)
    if found is not None:
        return found
    for index in sorted((i for i in state.steps if i < in_force.step), reverse=True):
        code = state.steps[index].code
        earlier = field_logic(code, field, reads=False) if code else None
        if earlier is not None:
            return f"step {index}:\n{earlier}"
    return field_logic(in_force.code, field)


def recipe_binding(document: dict[str, Any], field: str) -> str | None:
    """The binding that reads `field` (DETAILS_FIELDS or ITEM_FIELDS) and where it is read."""
    bindings = document.get("bindings")
    if not isinstance(bindings, dict):
        return None
    item = bindings.get("LIST_ITEM", "?")
    for key, where in (
        ("ITEM_FIELDS", f"read inside each LIST_ITEM {item}"),
        ("DETAILS_FIELDS", _details_where(bindings)),
    ):
        fields = bindings.get(key)
        if isinstance(fields, dict) and field in fields:
            spec = json.dumps(fields[field], ensure_ascii=False)
            return f"{key}[{json.dumps(field)}] = {spec}\n  ({where})"
    if field == "content" and bindings.get("DETAILS_CONTENT"):
        spec = json.dumps(bindings["DETAILS_CONTENT"], ensure_ascii=False)
        return f"DETAILS_CONTENT = {spec}\n  ({_details_where(bindings)})"
    return None


def _details_where(bindings: dict[str, Any]) -> str:
    behavior = bindings.get("CLICK_BEHAVIOR", "shows_panel")
    template = READ_WHERE.get(behavior, READ_WHERE["shows_panel"])
    return template.format(panel=bindings.get("DETAILS_PANEL"), item=bindings.get("LIST_ITEM"))
