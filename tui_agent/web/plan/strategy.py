"""What a planner hands on: the page understood in English plus verified selectors.

A `Strategy` is written and read in a Markdown format (`to_markdown` /
`parse_strategy`), extended with the keys the recipe generator needs (LIST, LIST_ITEM_SIBLINGS,
CLICK_BEHAVIOR, CLICK_TARGET, DETAILS_LOADED, CLOSE_DETAILS (a control, or `PRESS Escape`),
PAGINATION_TEXT, PAGINATION_NUMBERED, LOAD_MORE_BUTTON, SCROLL_LOADS_MORE, DETAILS_FIELDS,
ITEM_FIELDS; a field may end `after "Label:"`, then `(all)` when every match is read, as a
list). A `Fragment` is what a generator adds: recipe commands for a filter, a sort or a search.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tui_agent.web.recipe import ClickBehavior

GeneratorName = Literal["FilterGenerator", "SortGenerator", "SearchGenerator"]
GENERATOR_NAMES: tuple[GeneratorName, ...] = ("FilterGenerator", "SortGenerator", "SearchGenerator")
CLICK_BEHAVIORS: tuple[ClickBehavior, ...] = ("shows_panel", "navigates", "inline")


class StrategyParseError(ValueError):
    """Planner output that is not in the strategy format (says what is missing)."""


class StrategyField(BaseModel):
    """A named field: the selector, the attribute read instead of the text (if any), the
    label written before the value in the same element (if any, dropped when read), and
    whether every match is read (a list of values: tags, categories)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    selector: str
    attribute: str | None = None
    prefix: str | None = None
    all: bool = False

    def as_binding(self) -> str | dict[str, str | bool]:
        """The recipe binding's form: a plain selector, or {"selector", "attribute", "prefix",
        "all"} with what it sets."""
        if self.attribute is None and self.prefix is None and not self.all:
            return self.selector
        extra = {"attribute": self.attribute, "prefix": self.prefix, "all": self.all or None}
        return {"selector": self.selector, **{k: v for k, v in extra.items() if v is not None}}


class Strategy(BaseModel):
    """A page's list-detail structure, every selector in it verified by a tool call."""

    model_config = ConfigDict(extra="forbid")

    understanding: list[str] = Field(default_factory=list)
    list_container: str | None = None
    list_item: str | None = None
    list_item_siblings: str | int | None = None
    """An item spread over sibling elements: the siblings after each LIST_ITEM that belong to
    it (a selector, or how many)."""
    click_behavior: ClickBehavior | None = None
    click_target: str | None = None
    """What inside the item a click goes to (its link), when the item itself does not answer."""
    details_panel: str | None = None
    details_loaded: str | None = None
    close_details: str | None = None
    """The control that closes the details (a modal's close button) when they block the list."""
    close_key: str | None = None
    """The key that closes them when no control does (a dialog only Escape closes)."""
    details_content: list[str] = Field(default_factory=list)
    details_fields: dict[str, StrategyField] = Field(default_factory=dict)
    """Named fields inside the details (panel, page, or the expanded item)."""
    item_fields: dict[str, StrategyField] = Field(default_factory=dict)
    """Named fields inside the list item itself (relative to LIST_ITEM)."""
    pagination_button: str | None = None
    pagination_text: str | None = None
    """The next-page control's text, when its selector alone names several controls."""
    pagination_numbered: bool = False
    """The next page is the numbered link after the current page's number."""
    load_more_button: str | None = None
    scroll_loads_more: bool = False
    plan: list[str] = Field(default_factory=list)
    needed_generators: list[GeneratorName] = Field(default_factory=list)

    def selectors(self) -> list[str]:
        """Every selector the strategy names, in the order written (for verification)."""
        found = [
            self.list_container,
            self.list_item,
            self.list_item_siblings if isinstance(self.list_item_siblings, str) else None,
            self.details_panel,
            self.details_loaded,
            self.close_details,
            *self.details_content,
            *(f.selector for f in self.details_fields.values()),
            *(f.selector for f in self.item_fields.values()),
            self.pagination_button,
            self.load_more_button,
        ]
        return list(dict.fromkeys(s for s in found if s))

    def to_markdown(self) -> str:
        """The strategy in the planner's Markdown output format."""
        lines = ["## PAGE UNDERSTANDING"]
        lines += [f"- {line}" for line in self.understanding] or ["- (nothing noted)"]
        lines += ["", "## STRATEGY", "", "### VERIFIED SELECTORS"]
        lines.append(f"- LIST: {_code(self.list_container)}")
        lines.append(f"- LIST_ITEM: {_code(self.list_item)}")
        if isinstance(self.list_item_siblings, int):
            lines.append(f"- LIST_ITEM_SIBLINGS: {self.list_item_siblings}")
        elif self.list_item_siblings:
            lines.append(f"- LIST_ITEM_SIBLINGS: {_code(self.list_item_siblings)}")
        lines.append(f"- CLICK_BEHAVIOR: {self.click_behavior or 'none'}")
        if self.click_target:
            lines.append(f"- CLICK_TARGET: {_code(self.click_target)}")
        lines.append(f"- DETAILS_PANEL: {_code(self.details_panel)}")
        lines.append(f"- DETAILS_LOADED: {_code(self.details_loaded)}")
        if self.close_details:
            lines.append(f"- CLOSE_DETAILS: {_code(self.close_details)}")
        elif self.close_key:
            lines.append(f"- CLOSE_DETAILS: PRESS {self.close_key}")
        if self.details_content:
            lines.append("- DETAILS_CONTENT:")
            lines += [f"  - `{selector}`" for selector in self.details_content]
        for key, fields in (
            ("DETAILS_FIELDS", self.details_fields),
            ("ITEM_FIELDS", self.item_fields),
        ):
            if fields:
                lines.append(f"- {key}:")
                lines += [f"  - {name}: {_field(spec)}" for name, spec in fields.items()]
        lines.append(f"- PAGINATION_BUTTON: {_code(self.pagination_button)}")
        if self.pagination_text:
            lines.append(
                f"- PAGINATION_TEXT: {json.dumps(self.pagination_text, ensure_ascii=False)}"
            )
        if self.pagination_numbered:
            lines.append("- PAGINATION_NUMBERED: yes")
        lines.append(f"- LOAD_MORE_BUTTON: {_code(self.load_more_button)}")
        lines.append(f"- SCROLL_LOADS_MORE: {'yes' if self.scroll_loads_more else 'no'}")
        lines += ["", "### AUTOMATION PLAN"]
        lines += [f"{number}. {step}" for number, step in enumerate(self.plan, 1)]
        generators = ", ".join(self.needed_generators) or "None"
        lines.append(f"{len(self.plan) + 1}. NEEDED GENERATORS: {generators}")
        return "\n".join(lines) + "\n"


class Fragment(BaseModel):
    """Recipe commands a generator wrote for one filter, sort or search, and their proof."""

    model_config = ConfigDict(extra="forbid")

    generator: GeneratorName
    description: str
    target: str | None = None
    """The control the fragment works (`filterTarget` in the JSON shape)."""
    option: str | None = None
    """The option chosen, or the text typed (`filterOption` in the JSON shape)."""
    commands: list[dict[str, Any]] = Field(default_factory=list)
    """Recipe commands (SELECT, TYPE, PRESS, CLICK with a selector, WAIT_FOR a condition)."""
    verified: bool = False
    evidence: str = ""
    """What running the fragment showed (e.g. "240 -> 60 items, all in Kitchen")."""

    def to_spec_json(self) -> dict[str, Any]:
        """The fragment in the FilterGenerator JSON shape."""
        return {"filterTarget": self.target, "filterOption": self.option, "fragment": self.commands}


def _code(selector: str | None) -> str:
    return f"`{selector}`" if selector else "none"


def _field(spec: StrategyField) -> str:
    text = f"`{spec.selector}`" + (f" @{spec.attribute}" if spec.attribute else "")
    text += f" after {json.dumps(spec.prefix, ensure_ascii=False)}" if spec.prefix else ""
    return text + (" (all)" if spec.all else "")


_SECTION = re.compile(r"^#{2,3}\s*(.+?)\s*$")
_ENTRY = re.compile(r"^(\s*)[-*]\s*(?:\*\*)?([A-Z_]+)(?:\*\*)?\s*:\s*(.*)$")
_SUBITEM = re.compile(r"^\s+[-*]\s*(.*)$")
_NAMED = re.compile(
    r'^([\w.-]+)\s*:\s*`([^`]+)`\s*(?:@([\w:-]+))?\s*(?:after\s+("(?:[^"\\]|\\.)*"))?'
    r"\s*(\(all\))?\s*$"
)
_PRESS = re.compile(r"^(?:PRESS|key)\s+`?([\w+-]+)`?\s*$", re.IGNORECASE)
_BACKTICK = re.compile(r"`([^`]+)`")
_NUMBERED = re.compile(r"^\s*\d+[.)]\s*(.*)$")
_SINGLE_KEYS = {
    "LIST": "list_container",
    "LIST_ITEM": "list_item",
    "DETAILS_PANEL": "details_panel",
    "DETAILS_LOADED": "details_loaded",
    "CLOSE_DETAILS": "close_details",
    "CLOSE_BUTTON": "close_details",
    "CLICK_TARGET": "click_target",
    "PAGINATION_BUTTON": "pagination_button",
    "NEXT_PAGE_BUTTON": "pagination_button",
    "LOAD_MORE_BUTTON": "load_more_button",
}


def _selector_value(text: str) -> str | None:
    """The backticked selector of an entry; None for "none" / "not found" and the like."""
    match = _BACKTICK.search(text)
    if match:
        return match.group(1).strip() or None
    bare = text.strip().strip('"').strip("'")
    if not bare or bare.split()[0].lower().rstrip(".") in ("none", "n/a", "no", "not", "null", "-"):
        return None
    return bare


def _quoted(text: str) -> str | None:
    """A JSON-quoted string as written ("Next →"), or the bare text; None when empty."""
    bare = text.strip()
    try:
        value = json.loads(bare)
    except json.JSONDecodeError:
        value = bare.strip("`\"'")
    return str(value) or None


def _generators(text: str) -> list[GeneratorName]:
    return [name for name in GENERATOR_NAMES if name.lower() in text.lower()]


def parse_strategy(text: str) -> Strategy:
    """Read planner output in the strategy format; StrategyParseError says what is missing."""
    section = ""
    data: dict[str, Any] = {"understanding": [], "plan": [], "details_content": []}
    fields: dict[str, dict[str, StrategyField]] = {"DETAILS_FIELDS": {}, "ITEM_FIELDS": {}}
    open_list: str | None = None
    seen_selectors = False
    for raw in text.splitlines():
        if not raw.strip() or raw.strip().startswith("```"):
            continue
        heading = _SECTION.match(raw.strip())
        if heading:
            section = heading.group(1).upper()
            open_list = None
            continue
        if "UNDERSTANDING" in section:
            data["understanding"].append(raw.strip().lstrip("-* ").strip())
        elif "VERIFIED SELECTORS" in section:
            seen_selectors = True
            entry = _ENTRY.match(raw)
            if entry and not entry.group(1):
                key, value = entry.group(2), entry.group(3)
                open_list = key if key in ("DETAILS_CONTENT", *fields) else None
                pressed = _PRESS.match(value.strip())
                if key in ("CLOSE_DETAILS", "CLOSE_BUTTON") and pressed:
                    data["close_key"] = pressed.group(1)
                elif key in _SINGLE_KEYS:
                    data[_SINGLE_KEYS[key]] = _selector_value(value)
                elif key == "LIST_ITEM_SIBLINGS":
                    bare = value.strip().strip("`")
                    data["list_item_siblings"] = (
                        int(bare) if bare.isdigit() else (_selector_value(value))
                    )
                elif key == "PAGINATION_TEXT":
                    data["pagination_text"] = _quoted(value)
                elif key == "PAGINATION_NUMBERED":
                    data["pagination_numbered"] = value.strip().lower().startswith(("yes", "true"))
                elif key == "CLICK_BEHAVIOR":
                    behavior = value.strip().strip("`\"'").lower()
                    data["click_behavior"] = behavior if behavior in CLICK_BEHAVIORS else None
                elif key == "SCROLL_LOADS_MORE":
                    data["scroll_loads_more"] = value.strip().lower().startswith(("yes", "true"))
                elif key == "DETAILS_CONTENT":
                    data["details_content"] += _BACKTICK.findall(value)
                continue
            sub = _SUBITEM.match(raw)
            if sub and open_list == "DETAILS_CONTENT":
                data["details_content"] += _BACKTICK.findall(sub.group(1))
            elif sub and open_list in fields:
                named = _NAMED.match(sub.group(1).strip())
                if named:
                    name, selector, attribute, prefix, every = named.groups()
                    fields[open_list][name] = StrategyField(
                        selector=selector,
                        attribute=attribute,
                        prefix=_quoted(prefix) if prefix else None,
                        all=every is not None,
                    )
        elif "AUTOMATION PLAN" in section or section == "PLAN":
            step = _NUMBERED.match(raw)
            line = (step.group(1) if step else raw.strip().lstrip("-* ")).strip()
            if "NEEDED GENERATORS" in line.upper():
                data["needed_generators"] = _generators(line)
            elif line:
                data["plan"].append(line)
    if not seen_selectors:
        raise StrategyParseError('no "### VERIFIED SELECTORS" section in the planner output')
    if not data.get("list_item"):
        raise StrategyParseError("the strategy names no LIST_ITEM selector")
    return Strategy(
        **data, details_fields=fields["DETAILS_FIELDS"], item_fields=fields["ITEM_FIELDS"]
    )
