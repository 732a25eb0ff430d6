"""A recipe tried on a few items before it is accepted: its events, what it saved, a verdict.

The dry run (a phase: see web.phase) loads the URL in a fresh page and runs the recipe with the
real RecipeInterpreter, capped at a few items, and stopped once more items failed than it wants to
save (details that block the list would fail every item after the first). Its tool calls are
re-numbered (`dry1-c3`) so they never collide with the real run's, and the items it saves come
out as Log lines, not ItemsExtracted: only the real run fills the session's table. It ends with
its `DryRunOutcome`, built from the interpreter's; `verdict` then says whether the recipe works,
and if not, which binding failed.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import Error as PlaywrightError

from tui_agent.events import Event, ItemsExtracted, Log, ToolCall, ToolResult
from tui_agent.web.browser import Browser, BrowserError
from tui_agent.web.navigation import goto
from tui_agent.web.page_wait import WAIT_CAP
from tui_agent.web.phase import Phase, PhaseRun
from tui_agent.web.recipe import (
    DetailsParser,
    FieldSelector,
    RecipeFile,
    RecipeInterpreter,
    RunOutcome,
    conditions,
    first_line,
)

LOAD_TIMEOUT_MS = 30_000
PREVIEW_CHARS = 240


@dataclass(frozen=True)
class DryRunOutcome:
    """What one dry run saved and saw; `aborted` says why it could not run at all."""

    items: list[dict[str, Any]] = field(default_factory=list)
    present: int = 0
    """How many list items the page showed (the most seen at any point)."""
    failure: str | None = None
    """The run's failure (one line), if it stopped early."""
    skipped: list[str] = field(default_factory=list)
    """Why items were skipped (the interpreter's soft failures)."""
    gave_up: bool = False
    """Stopped early: more items were skipped than the dry run wanted to save."""
    control_like: list[str] = field(default_factory=list)
    """Texts of saved items that read like page controls ("Next →", "1 2 3")."""
    aborted: str | None = None
    """Why the dry run could not happen at all (page not loadable, browser gone), one line."""


@dataclass(frozen=True)
class Verdict:
    """A dry run judged: `error` None means accepted; `empty` names the fields never read."""

    error: str | None
    empty: dict[str, str] = field(default_factory=dict)
    """Field name -> the binding it was read by, e.g. 'DETAILS_FIELDS price (`.price`)'."""

    @property
    def ok(self) -> bool:
        return self.error is None


def named_fields(recipe: RecipeFile) -> dict[str, str]:
    """Every named field of the recipe -> the binding that produces it (details win)."""
    bindings = recipe.bindings
    found = {name: _describe("ITEM_FIELDS", name, f) for name, f in bindings.ITEM_FIELDS.items()}
    for name, spec in bindings.DETAILS_FIELDS.items():
        found[name] = _describe("DETAILS_FIELDS", name, spec)
    return found


def _describe(binding: str, name: str, spec: FieldSelector) -> str:
    attribute = f" @{spec.attribute}" if spec.attribute else ""
    return f"{binding} {name} (`{spec.selector}`{attribute})"


def verdict(recipe: RecipeFile, result: DryRunOutcome, wanted: int) -> Verdict:
    """Accepted when the dry run saved min(wanted, items shown) items (at least one) and
    each named field was read (non-empty) in at least one of them."""
    saved = len(result.items)
    if result.failure is not None:
        return Verdict(f"the dry run stopped after {saved} items: {result.failure}")
    need = max(1, min(wanted, result.present))
    if saved < need:
        why = result.skipped[0] if result.skipped else "no item reached a SAVE"
        if result.gave_up:
            why += f" ({len(result.skipped)} items skipped: stopped)"
        return Verdict(
            f"the dry run saved {saved} of {need} items: {why}" + _blocked(recipe, result)
        )
    empty = {
        name: described
        for name, described in named_fields(recipe).items()
        if all(item.get(name) in (None, "") for item in result.items)
    }
    if empty:
        listed = "; ".join(empty.values())
        return Verdict(f"empty in all {saved} dry-run items: {listed}", empty)
    return Verdict(None)


def _blocked(recipe: RecipeFile, result: DryRunOutcome) -> str:
    """A hint when items after a saved one could not be clicked and nothing closes details."""
    bindings = recipe.bindings
    unclickable = any("could not be clicked" in reason for reason in result.skipped)
    modal_like = bindings.CLICK_BEHAVIOR == "shows_panel" and not bindings.CLOSE_DETAILS
    if not (result.items and unclickable and modal_like):
        return ""
    return (
        "; the first item's details may still cover the list (a modal): name the control "
        "that closes them as CLOSE_DETAILS"
    )


_CONTROL_WORDS = (
    r"prev|previous|next|first|last|page|more|load more|show more|older|newer|back|top"
    r"|anterior|siguiente|primera|última|página|ver más|cargar más|précédente?|suivante?"
    r"|première|dernière|plus|zurück|weiter|vorherige|nächste|seite|mehr|próxim[ao]|seguinte"
    r"|mais|precedente|successiv[ao]"
)
CONTROL_TEXT = re.compile(
    rf"^(?:(?:{_CONTROL_WORDS}|\d+|[<>«»\u2039\u203a←→|·•.,:…-])\s*)+$", re.IGNORECASE
)
"""The whole text of a pager row or a control: "← Previous | Next →", "1 2 3 …", "Load more"."""


def looks_like_control(item: dict[str, Any]) -> str | None:
    """The item's text when it reads like a page control rather than an item, else None."""
    text = " ".join(str(item.get("text") or item.get("title") or "").split())
    if text and len(text) <= 60 and CONTROL_TEXT.match(text):
        return text
    return None


def preview(item: dict[str, Any], recipe: RecipeFile) -> str:
    """An item's named fields (or its link and text) in one short line."""
    names = list(named_fields(recipe)) or ["link", "text"]
    shown = json.dumps({name: item.get(name) for name in names}, ensure_ascii=False)
    return shown if len(shown) <= PREVIEW_CHARS else shown[: PREVIEW_CHARS - 1] + "…"


class DryRun:
    """One dry run of `recipe` on `url`: `run()` yields its events, then its DryRunOutcome."""

    def __init__(
        self,
        browser: Browser,
        url: str,
        recipe: RecipeFile,
        *,
        items: int,
        number: int = 1,
        wait: float = WAIT_CAP,
        parser: DetailsParser | None = None,
    ) -> None:
        self.wait = wait
        self.parser = parser
        self.browser = browser
        self.url = url
        self.recipe = recipe
        self.items = items
        self.prefix = f"dry{number}"

    async def run(self) -> Phase[DryRunOutcome]:
        try:
            page = await self.browser.page()
        except BrowserError as exc:
            yield DryRunOutcome(aborted=str(exc))
            return
        try:
            try:
                await goto(page, self.url, timeout=LOAD_TIMEOUT_MS)
            except PlaywrightError as exc:
                yield DryRunOutcome(aborted=f"cannot load {self.url}: {first_line(exc)}")
                return
            interpreter = RecipeInterpreter(
                page,
                self.recipe,
                max_items=self.items,
                crashed=lambda: self.browser.crashed,
                wait=self.wait,
                parser=self.parser,
                give_up_after=self.items,
            )
            run = PhaseRun(interpreter.run(), RunOutcome)
            async for event in run:
                for relabelled in self._relabel(event):
                    yield relabelled
            outcome = run.outcome
            if outcome.failure is not None and outcome.failure.kind == "BrowserGone":
                yield DryRunOutcome(aborted=outcome.failure.message)
                return
            present = outcome.most_shown
            with contextlib.suppress(PlaywrightError):
                shown, _ = await conditions.list_signature(page, self.recipe.bindings)
                present = max(present, shown)
            failure = outcome.failure
            yield DryRunOutcome(
                items=outcome.items,
                present=present,
                failure=_first_line(failure.message) if failure else None,
                skipped=outcome.skipped,
                gave_up=outcome.stopped_reason == "gave_up",
                control_like=[text for item in outcome.items if (text := looks_like_control(item))],
            )
        finally:
            with contextlib.suppress(PlaywrightError):
                await page.context.close()

    def _relabel(self, event: Event) -> list[Event]:
        """The interpreter's event as the dry run reports it (an item saved that reads like a
        page control gets a warning after it)."""
        match event:
            case ToolCall() | ToolResult():
                return [event.model_copy(update={"call_id": f"{self.prefix}-{event.call_id}"})]
            case ItemsExtracted():
                lines = [preview(item, self.recipe) for item in event.items]
                shown: list[Event] = [
                    Log(level="info", message=f"dry run item: {'; '.join(lines)}")
                ]
                for text in filter(None, map(looks_like_control, event.items)):
                    shown.append(
                        Log(
                            level="warning",
                            message=f"dry run: an item looks like a page control, not an "
                            f"item: {text!r} (LIST_ITEM may match a pager or a menu)",
                        )
                    )
                return shown
            case Log():
                return [event.model_copy(update={"message": f"dry run: {event.message}"})]
        return [event]


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0] if lines else text
