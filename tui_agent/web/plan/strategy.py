"""What a planner hands on: the page understood in English plus verified selectors.

A `Strategy` is written and read in a Markdown format (`to_markdown` /
`parse_strategy`), extended with the keys the recipe generator needs (LIST, CLICK_BEHAVIOR,
DETAILS_LOADED, CLOSE_DETAILS, LOAD_MORE_BUTTON, SCROLL_LOADS_MORE, DETAILS_FIELDS,
ITEM_FIELDS). A `Fragment` is what a generator adds: recipe commands for a filter, a sort or
a search.
"""

from __future__ import annotations

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
    """A named field: the selector, and the attribute read instead of the text (if any)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    selector: str
    attribute: str | None = None

    def as_binding(self) -> str | dict[str, str]:
        """The recipe binding's form: a plain selector, or {"selector", "attribute"}."""
        if self.attribute is None:
            return self.selector
        return {"selector": self.selector, "attribute": self.attribute}


class Strategy(BaseModel):
    """A page's list-detail structure, every selector in it verified by a tool call."""

    model_config = ConfigDict(extra="forbid")

    understanding: list[str] = Field(default_factory=list)
    list_container: str | None = None
    list_item: str | None = None
    click_behavior: ClickBehavior | None = None
    details_panel: str | None = None
    details_loaded: str | None = None
    close_details: str | None = None
    """The control that closes the details (a modal's close button) when they block the list."""
    details_content: list[str] = Field(default_factory=list)
    details_fields: dict[str, StrategyField] = Field(default_factory=dict)
    """Named fields inside the details (panel, page, or the expanded item)."""
    item_fields: dict[str, StrategyField] = Field(default_factory=dict)
    """Named fields inside the list item itself (relative to LIST_ITEM)."""
    pagination_button: str | None = None
    load_more_button: str | None = None
    scroll_loads_more: bool = False
    plan: list[str] = Field(default_factory=list)
    needed_generators: list[GeneratorName] = Field(default_factory=list)

    def selectors(self) -> list[str]:
        """Every selector the strategy names, in the order written (for verification)."""
        found = [
            self.list_container,
            self.list_item,
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
        lines.append(f"- CLICK_BEHAVIOR: {self.click_behavior or 'none'}")
        lines.append(f"- DETAILS_PANEL: {_code(self.details_panel)}")
        lines.append(f"- DETAILS_LOADED: {_code(self.details_loaded)}")
        if self.close_details:
            lines.append(f"- CLOSE_DETAILS: {_code(self.close_details)}")
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
    return f"`{spec.selector}`" + (f" @{spec.attribute}" if spec.attribute else "")


_SECTION = re.compile(r"^#{2,3}\s*(.+?)\s*$")
_ENTRY = re.compile(r"^(\s*)[-*]\s*(?:\*\*)?([A-Z_]+)(?:\*\*)?\s*:\s*(.*)$")
_SUBITEM = re.compile(r"^\s+[-*]\s*(.*)$")
_NAMED = re.compile(r"^([\w.-]+)\s*:\s*`([^`]+)`\s*(?:@([\w:-]+))?\s*$")
_BACKTICK = re.compile(r"`([^`]+)`")
_NUMBERED = re.compile(r"^\s*\d+[.)]\s*(.*)$")
_SINGLE_KEYS = {
    "LIST": "list_container",
    "LIST_ITEM": "list_item",
    "DETAILS_PANEL": "details_panel",
    "DETAILS_LOADED": "details_loaded",
    "CLOSE_DETAILS": "close_details",
    "CLOSE_BUTTON": "close_details",
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
                if key in _SINGLE_KEYS:
                    data[_SINGLE_KEYS[key]] = _selector_value(value)
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
                    name, selector, attribute = named.groups()
                    fields[open_list][name] = StrategyField(selector=selector, attribute=attribute)
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
