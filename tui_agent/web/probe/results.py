"""What the planner's tools report: verified selectors, results and their English lines."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class VerifiedSelectors:
    """The selectors this session's tool calls matched (>= 1 element), with their counts."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}
        self._sources: dict[str, list[str]] = {}

    def add(self, selector: str, count: int, source: str) -> None:
        """Record `selector` as verified by `source` when it matched at least one element."""
        if count < 1:
            return
        self._counts[selector] = count
        self._sources.setdefault(selector, []).append(source)

    def __contains__(self, selector: object) -> bool:
        return selector in self._counts

    def __len__(self) -> int:
        return len(self._counts)

    def count(self, selector: str) -> int | None:
        """How many elements `selector` matched when last verified (None: never verified)."""
        return self._counts.get(selector)

    def sources(self, selector: str) -> list[str]:
        """The tool calls that verified `selector`."""
        return list(self._sources.get(selector, []))

    def items(self) -> dict[str, int]:
        return dict(self._counts)


@dataclass(frozen=True)
class ProbeResult:
    """A tool's answer: English for the model, facts for code, the selectors it verified."""

    text: str
    facts: dict[str, Any]
    verified: dict[str, int] = field(default_factory=dict)
    ok: bool = True


class ToolInputError(ValueError):
    """A tool call the tools cannot run (unknown tool, bad argument or selector)."""


class Recorder:
    """Notes one tool call's tested selectors into the session's registry and its own."""

    def __init__(self, registry: VerifiedSelectors, source: str) -> None:
        self.registry = registry
        self.source = source
        self.verified: dict[str, int] = {}

    def note(self, selector: str | None, count: int) -> bool:
        if not selector or count < 1:
            return False
        self.registry.add(selector, count, self.source)
        self.verified[selector] = count
        return True

    def content(self, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The content selectors that matched, recorded (absolute and relative forms)."""
        kept = []
        for entry in entries:
            if not self.note(entry["selector"], entry["count"]):
                continue
            self.note(entry["relative"], entry["relative_count"])
            kept.append({k: v for k, v in entry.items() if v is not None})
        return kept


def change_lines(found: dict[str, Any]) -> list[str]:
    changes = []
    if found["added"] or found["removed"]:
        changes.append(f"{found['added']} elements added, {found['removed']} removed")
    if found["attributes"]:
        changes.append(f"{plural(found['attributes'], 'attribute change')}")
    if found["texts"]:
        changes.append(f"{plural(found['texts'], 'text change')}")
    if found["title"] != found["title_before"]:
        changes.append(f"title changed from {found['title_before']!r} to {found['title']!r}")
    if not found["scope_live"]:
        changes.append("the clicked element was removed from the page")
    if found["new_items"]:
        changes.append(f"{plural(found['new_items'], 'new list item')} loaded")
    return changes


def back_line(back: int, list_selector: str) -> str:
    if back:
        return f"Went back: the list is there again ({plural(back, 'item')})."
    return (
        f"Went back, but the list (`{list_selector}`) did not come back: "
        "the page state is not restored."
    )


def content_lines(content: list[dict[str, Any]]) -> str:
    if not content:
        return "No content selectors found inside."
    lines = ["VERIFIED CONTENT SELECTORS (tested in the page: matches, first text):"]
    for entry in content:
        extra = []
        if entry.get("label"):
            extra.append(f"label {entry['label']!r}")
        if entry.get("attribute"):
            extra.append(f"read @{entry['attribute']}")
        suffix = f" [{entry['kind']}{', ' if extra else ''}{', '.join(extra)}]"
        lines.append(f'- `{entry["selector"]}` ({entry["count"]}): "{entry["text"]}"{suffix}')
    return "\n".join(lines)


def control_line(what: str, control: dict[str, Any] | None, verified: str | None) -> str:
    if control is None or verified is None:
        return f"{what}: none found."
    line = f'{what}: `{verified}` ("{control["text"]}", found by {control["how"]})'
    if control.get("numbered"):
        line += "; it is the page number after the current one, a different link on every page"
    elif not control.get("stable", True):
        line += (
            "; no stable selector names it alone: the selector matches several controls and "
            "its text picks it on each page (NEXT_PAGE_TEXT)"
        )
    return line + "."


def plural(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else many or one + 's'}"


def refusal(text: str) -> ProbeResult:
    return ProbeResult(text=text, facts={"error": text}, ok=False)
