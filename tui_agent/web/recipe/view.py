"""A recipe in Chromium for refinement: its first item's details opened, and whole runs.

`open_view` runs the recipe up to the first item's details (or the first item, for a field
read on the item) and ends with a `ViewOutcome` whose `View` reads a selector there or outlines
what is shown; `run_in` runs a whole recipe in a new page as ToolCall / ToolResult events and
ends with its `RunOutcome` (both are phases: see web.phase).
"""

from __future__ import annotations

import contextlib
import time
import uuid
from dataclasses import dataclass
from typing import Any, Literal

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from tui_agent.errors import UserError
from tui_agent.events import ItemsExtracted, ToolCall, ToolResult
from tui_agent.web.browser import Browser
from tui_agent.web.navigation import goto
from tui_agent.web.phase import Phase, PhaseRun
from tui_agent.web.recipe.extract import PRELUDE
from tui_agent.web.recipe.format import FieldSelector, RecipeFile, parse_recipe
from tui_agent.web.recipe.interpreter import RecipeInterpreter
from tui_agent.web.recipe.run_outcome import RunFailure, RunOutcome
from tui_agent.web.recipe.step_failures import first_line
from tui_agent.web.tool_events import tool_result

Group = Literal["DETAILS_FIELDS", "ITEM_FIELDS"]
"""Where a field is read: on the item's details, or on the list item itself."""
LOAD_TIMEOUT_MS = 30_000
OUTLINE_LINES = 80
"""Elements shown to the model in the outline of the details (or the item)."""


class ViewError(UserError):
    """The first item's details (or the item) cannot be shown; the message is one line."""


# arg: {list, item, inItem, panel, selector (null: outline), attribute, all, limit}. The scope is
# found as EXTRACT_JS finds it: the details panel (or the page), or inside the first shown item.
VIEW_JS = f"""
(arg) => {{
  {PRELUDE}
  const items = [...(document.querySelector(arg.list)?.querySelectorAll(arg.item) ?? [])];
  let scope = arg.inItem ? (items.find(visible) || null) : document.body;
  if (scope && arg.panel) {{
    const inside = scope.matches(arg.panel) ? scope : pick(scope, arg.panel);
    scope = inside || (arg.inItem ? scope : null);
  }}
  if (!scope) return null;
  if (arg.selector !== null) {{
    const count = arg.selector === ":scope" ? 1 : scope.querySelectorAll(arg.selector).length;
    const [fields] = readFields(scope, {{value: [arg.selector, arg.attribute, null, arg.all]}});
    return {{count, value: fields.value}};
  }}
  const lines = [];
  const name = (el) =>
    el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
    [...el.classList].map((c) => "." + c).join("");
  const walk = (el, depth) => {{
    if (lines.length >= arg.limit || el.matches("script, style, template, svg")) return;
    if (!visible(el)) return;
    const own = clean([...el.childNodes].filter((n) => n.nodeType === 3).map((n) => n.data)
      .join(" "));
    const attrs = ["href", "src", "datetime", "content", "title", "alt"]
      .filter((a) => el.hasAttribute(a))
      .map((a) => a + '="' + el.getAttribute(a).slice(0, 80) + '"');
    lines.push("  ".repeat(Math.min(depth, 8)) + name(el) +
      (attrs.length ? " [" + attrs.join(" ") + "]" : "") +
      (own ? ' "' + own.slice(0, 80) + '"' : ""));
    for (const child of el.children) walk(child, depth + 1);
  }};
  walk(scope, 0);
  return {{outline: lines.join("\\n"), full: lines.length < arg.limit}};
}}
"""


def probe_document(document: dict[str, Any], group: Group) -> dict[str, Any] | None:
    """The recipe cut short so it stops (END) once the first item's details are shown, or
    at the first item itself for an item field; None when it has no FOR_EACH_ITEM_IN_LIST."""

    def cut(commands: list[Any]) -> list[Any] | None:
        for index, command in enumerate(commands):
            kind = command.get("type") if isinstance(command, dict) else None
            if kind == "FOR_EACH_ITEM_IN_LIST":
                body = command.get("body", [])
                kinds = [c.get("type") for c in body]
                until = kinds.index("EXTRACT_DETAILS") if "EXTRACT_DETAILS" in kinds else 0
                kept = body[:until] if group == "DETAILS_FIELDS" else []
                return [*commands[:index], {**command, "body": [*kept, {"type": "END"}]}]
            if kind == "REPEAT":
                inner = cut(command.get("body", []))
                if inner is not None:
                    return [*commands[:index], {**command, "body": inner}]
        return None

    recipe = document.get("recipe", {})
    commands = cut(recipe.get("commands", []))
    if commands is None:
        return None
    return {**document, "recipe": {**recipe, "commands": commands}}


async def run_in(
    browser: Browser,
    recipe: RecipeFile,
    url: str,
    *,
    max_items: int | None,
    label: str,
) -> Phase[RunOutcome]:
    """Run `recipe` on `url` in a new page: a "run_recipe" ToolCall, each command's ToolCall /
    ToolResult (call ids prefixed with `label`, so they stay unique in the session), skipped
    items as warnings, a closing ToolResult, then the run's outcome. Items are in the outcome,
    not emitted."""
    began = time.monotonic()
    call = ToolCall(
        call_id=label, name="run_recipe", arguments={"url": url, "max_items": max_items}
    )
    yield call
    page = await browser.page()
    interpreter = RecipeInterpreter(
        page, recipe, max_items=max_items, crashed=lambda: browser.crashed
    )
    try:
        try:
            await goto(page, url, timeout=LOAD_TIMEOUT_MS)
        except PlaywrightError as exc:
            failure = RunFailure("PageLoadError", f"cannot load {url}: {first_line(exc)}")
            outcome = RunOutcome(failure=failure)
        else:
            run = PhaseRun(interpreter.run(), RunOutcome)
            async for event in run:
                if isinstance(event, ToolCall | ToolResult):
                    yield event.model_copy(update={"call_id": f"{label}-{event.call_id}"})
                elif not isinstance(event, ItemsExtracted):
                    yield event
            outcome = run.outcome
    finally:
        with contextlib.suppress(PlaywrightError):
            await page.context.close()
    summary = f"{len(outcome.items)} items, {outcome.failed} failed"
    yield tool_result(
        call,
        began,
        f"{summary}; {outcome.failure.message}" if outcome.failure else summary,
        {"items": len(outcome.items), "failed": outcome.failed},
        ok=outcome.ok,
    )
    yield outcome


class View:
    """The first item's details (or the item) open in a page: read selectors, outline it."""

    def __init__(self, page: Page, recipe: RecipeFile, group: Group) -> None:
        bindings = recipe.bindings
        in_item = group == "ITEM_FIELDS" or bindings.CLICK_BEHAVIOR == "inline"
        self.page = page
        self.where = "the first item" if group == "ITEM_FIELDS" else "the first item's details"
        self._arg: dict[str, Any] = {
            "list": bindings.LIST,
            "item": bindings.LIST_ITEM,
            "inItem": in_item,
            "panel": bindings.DETAILS_PANEL if group == "DETAILS_FIELDS" else None,
            "selector": None,
            "attribute": None,
            "all": False,
            "limit": OUTLINE_LINES,
        }

    async def read(self, spec: FieldSelector) -> tuple[int, str | None]:
        """How many elements `spec` matches and the value it reads (None: none; the values of
        all matches joined by ", " for a field read from `all`)."""
        arg = {**self._arg, "selector": spec.selector, "attribute": spec.attribute}
        found = await self.page.evaluate(VIEW_JS, {**arg, "all": spec.all})
        if found is None:
            raise ViewError(f"{self.where} is no longer shown")
        value = found["value"]
        if isinstance(value, list):
            value = ", ".join(value)
        return found["count"], value.strip() if isinstance(value, str) and value.strip() else None

    async def outline(self) -> str:
        """The scope's visible elements, one per line: tag#id.classes [attributes] "text"."""
        found = await self.page.evaluate(VIEW_JS, self._arg)
        if found is None:
            return "(not shown)"
        more = "" if found["full"] else f"\n… (first {OUTLINE_LINES} elements)"
        return found["outline"] + more

    async def close(self) -> None:
        with contextlib.suppress(PlaywrightError):
            await self.page.context.close()


@dataclass(frozen=True)
class ViewOutcome:
    """The first item's details (or the item) shown in a View, or why they cannot be."""

    view: View | None
    failure: str | None = None
    """One line, set exactly when there is no view."""


async def open_view(
    browser: Browser, document: dict[str, Any], url: str, group: Group
) -> Phase[ViewOutcome]:
    """Open the first item's details (or the list, for an item field) by running the recipe
    up to there: an "open_view" ToolCall / ToolResult, then the ViewOutcome (its failure,
    after the failed ToolResult, says why no selector can be verified)."""
    call = ToolCall(
        call_id=f"view-{uuid.uuid4().hex[:8]}",
        name="open_view",
        arguments={"url": url, "view": "item" if group == "ITEM_FIELDS" else "details"},
    )
    yield call
    began = time.monotonic()
    probe = probe_document(document, group)
    if probe is None:
        reason = "the recipe has no FOR_EACH_ITEM_IN_LIST to reach an item with"
        yield ToolResult(call_id=call.call_id, name=call.name, output=reason, ok=False)
        yield ViewOutcome(None, f"cannot verify selectors: {reason}")
        return
    recipe = parse_recipe(probe, "the probe recipe")
    page = await browser.page()
    view = View(page, recipe, group)
    interpreter = RecipeInterpreter(page, recipe, crashed=lambda: browser.crashed)
    problems: list[str] = []
    reached = False
    try:
        await goto(page, url, timeout=LOAD_TIMEOUT_MS)
    except PlaywrightError as exc:
        problems.append(f"cannot load {url}: {first_line(exc)}")
    else:
        run = PhaseRun(interpreter.run(), RunOutcome)
        async for _ in run:
            pass
        failure = run.outcome.failure
        problems = [*run.outcome.skipped, *([failure.message] if failure else [])]
        reached = run.outcome.end_reached
    if not reached:
        reason = f"cannot show {view.where}: " + (problems[-1] if problems else "no item")
        failed = tool_result(call, began, reason, ok=False)
        await view.close()
        yield failed
        yield ViewOutcome(None, f"cannot verify selectors: {reason}")
        return
    yield tool_result(call, began, f"{view.where} shown at {page.url}")
    yield ViewOutcome(view)
