"""A recipe refinement's selectors: where a field is read, candidates, prompt and patch.

Where a field is read (DETAILS_FIELDS or ITEM_FIELDS), the user's selector as they wrote it,
the model's prompt and its proposed candidates, and the recipe with one binding patched.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from tui_agent.analysis.shapes import FEEDBACK_ISSUE_LABELS, FieldFeedback, OutputAnalysis
from tui_agent.web.recipe import FieldSelector, Group, RecipeFile

MAX_CANDIDATES = 5

_ATTRIBUTE_SUFFIX = re.compile(r"^(.*\S)@([A-Za-z_][\w:.-]*)$")
_NOTES_ATTRIBUTE = re.compile(
    r"\battribute\s+[\"'`]?([A-Za-z_][\w:-]*)|\b([A-Za-z_][\w:-]*)[\"'`]?\s+attribute\b",
    re.IGNORECASE,
)

SYSTEM_PROMPT = """You repair one field of a web scraping recipe. The recipe reads each field \
with a CSS selector searched inside a scope (the item's details, or the list item itself); the \
value is the matched element's visible text, or one of its attributes when "attribute" is set \
(href and src give absolute URLs).

Answer with JSON only, the best candidate first, at most 3:
{"candidates": [{"selector": "CSS selector relative to the scope", "attribute": null, \
"why": "one short reason"}]}

Use the classes, ids and tags of the outline you are given; be specific enough to avoid false \
positives. Each candidate is tried in a real browser before it is used."""


def field_group(document: dict[str, Any], name: str) -> Group:
    """Where field `name` is read: DETAILS_FIELDS (also for a new field) or ITEM_FIELDS."""
    bindings = document.get("bindings", {})
    if name not in bindings.get("DETAILS_FIELDS", {}) and name in bindings.get("ITEM_FIELDS", {}):
        return "ITEM_FIELDS"
    return "DETAILS_FIELDS"


def current_binding(recipe: RecipeFile, group: Group, name: str) -> FieldSelector | None:
    """The selector field `name` is read with now (None: the recipe does not read it)."""
    return getattr(recipe.bindings, group).get(name)


def split_selector(text: str) -> FieldSelector:
    """A selector as the user writes it: `a.more@href` reads the href attribute."""
    match = _ATTRIBUTE_SUFFIX.match(text.strip())
    if match:
        return FieldSelector(selector=match.group(1), attribute=match.group(2))
    return FieldSelector(selector=text.strip())


def describe(spec: FieldSelector) -> str:
    """A selector as logs and prompts show it: `".more" @href`."""
    return f'"{spec.selector}"' + (f" @{spec.attribute}" if spec.attribute else "")


def user_candidates(feedback: FieldFeedback, current: FieldSelector | None) -> list[FieldSelector]:
    """The user's selector, read as they said (`@attr`, or an attribute named in the notes);
    else first with the attribute the binding read before, then as text."""
    assert feedback.correct_selector is not None
    given = split_selector(feedback.correct_selector)
    if given.attribute is not None:
        return [given]
    noted = _NOTES_ATTRIBUTE.search(feedback.notes or "")
    if noted:
        return [FieldSelector(selector=given.selector, attribute=noted.group(1) or noted.group(2))]
    if current is not None and current.attribute is not None:
        return [FieldSelector(selector=given.selector, attribute=current.attribute), given]
    return [given]


def patched(document: dict[str, Any], name: str, group: Group, spec: FieldSelector) -> dict:
    """A copy of the recipe document whose binding of field `name` is `spec`."""
    result = copy.deepcopy(document)
    fields = result.setdefault("bindings", {}).setdefault(group, {})
    fields[name] = spec.model_dump(mode="json", exclude_none=True)
    return result


def parse_candidates(text: str) -> list[FieldSelector]:
    """The selectors a model's JSON answer proposes (fenced or not), best first, de-duplicated."""
    body = text.strip().removeprefix("```json").removeprefix("```").removesuffix("```")
    try:
        data: Any = json.loads(body)
    except json.JSONDecodeError:
        found = re.search(r"\{.*\}|\[.*\]", body, re.DOTALL)
        if found is None:
            return []
        try:
            data = json.loads(found.group(0))
        except json.JSONDecodeError:
            return []
    if isinstance(data, dict):
        data = data.get("candidates", [data])
    if not isinstance(data, list):
        return []
    candidates: list[FieldSelector] = []
    for entry in data:
        if isinstance(entry, str) and entry.strip():
            spec = split_selector(entry)
        elif isinstance(entry, dict) and isinstance(entry.get("selector"), str):
            attribute = entry.get("attribute")
            if not entry["selector"].strip():
                continue
            spec = FieldSelector(
                selector=entry["selector"].strip(),
                attribute=attribute if isinstance(attribute, str) and attribute else None,
            )
        else:
            continue
        if spec not in candidates:
            candidates.append(spec)
    return candidates[:MAX_CANDIDATES]


def proposal_messages(
    feedback: FieldFeedback,
    *,
    group: Group,
    current: FieldSelector | None,
    analysis: OutputAnalysis | None,
    url: str,
    where: str,
    outline: str,
    tried: list[str],
) -> list[dict[str, str]]:
    """The model's prompt (the scraper refinement prompt) for the selectors of one field."""
    binding = describe(current) if current is not None else "(not read yet)"
    lines = [
        "You are refining scraper code (a recipe's field bindings) based on user feedback.",
        "",
        f"CURRENT BINDING: {group}.{feedback.field} = {binding}",
        "",
        "OUTPUT ANALYSIS:",
    ]
    if analysis is not None:
        lines.append(f"- Total items: {analysis.item_count}")
        detected = ", ".join(f"{f.name} ({f.coverage}% populated)" for f in analysis.fields)
        lines.append(f"- Fields detected: {detected}")
        known = analysis.field(feedback.field)
        if known is not None and known.examples:
            lines.append(f"- Current values of {feedback.field}: {json.dumps(known.examples)}")
    lines += [
        "",
        "USER FEEDBACK:",
        f'- Field "{feedback.field}": {feedback.issue} ({FEEDBACK_ISSUE_LABELS[feedback.issue]})',
    ]
    if feedback.notes:
        lines.append(f"  Notes: {feedback.notes}")
    if feedback.correct_selector:
        lines.append(f"  Correct selector (did not work here): {feedback.correct_selector}")
    if feedback.correct_value:
        lines.append(f"  Correct value: {feedback.correct_value}")
    if feedback.correct_pattern:
        lines.append(f"  Values must match: {feedback.correct_pattern}")
    if feedback.value_description:
        lines.append(f"  Values should look like: {feedback.value_description}")
    if feedback.examples:
        examples = [e.model_dump(mode="json") for e in feedback.examples]
        lines.append(f"  Expected: {json.dumps(examples, ensure_ascii=False)}")
    lines += ["", f"TEST URL: {url}"]
    if tried:
        lines += ["", "ALREADY TRIED (do not propose again):", *(f"- {t}" for t in tried)]
    lines += [
        "",
        f"OUTLINE OF {where.upper()} (the scope the selector is searched in):",
        outline,
        "",
        "INSTRUCTIONS:",
        "1. If notes provided: find the elements in the outline matching the description",
        "2. If examples provided: pick the element whose text gives the expected output",
        "3. Ensure selectors are specific enough to avoid false positives",
        "Return the candidates as JSON.",
    ]
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": "\n".join(lines)},
    ]
