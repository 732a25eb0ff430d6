"""A recipe in Chromium for refinement: its first item's details opened, and whole runs.

`open_view` runs the recipe up to the first item's details (or the first item, for a field
read on the item) and gives a `View` that reads a selector there or outlines what is shown;
`run_in` runs a whole recipe in a new page as ToolCall / ToolResult events.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from tui_agent.errors import UserError
from tui_agent.events import Event, ItemsExtracted, Log, ToolCall, ToolResult
from tui_agent.web.browser import Browser
from tui_agent.web.navigation import goto
from tui_agent.web.recipe.executor import BrowserGone, HardFailure, RecipeExecutor
from tui_agent.web.recipe.extract import PRELUDE
from tui_agent.web.recipe.model import FieldSelector, RecipeFile, parse_recipe
from tui_agent.web.recipe.step_failures import first_line
from tui_agent.web.tool_events import tool_result

Group = Literal["DETAILS_FIELDS", "ITEM_FIELDS"]
"""Where a field is read: on the item's details, or on the list item itself."""
LOAD_TIMEOUT_MS = 30_000
OUTLINE_LINES = 80
"""Elements shown to the model in the outline of the details (or the item)."""


class ViewError(UserError):
    """The first item's details (or the item) cannot be shown; the message is one line."""


# arg: {list, item, inItem, panel, selector (null: outline), attribute, limit}. The scope is
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
    const [fields] = readFields(scope, {{value: [arg.selector, arg.attribute]}});
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


@dataclass
class RunResult:
    """What one run of a recipe gave: its items, and the error that stopped it (if any)."""

    items: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    failed: int = 0


async def run_in(
    browser: Browser,
    recipe: RecipeFile,
    url: str,
    *,
    max_items: int | None,
    label: str,
    result: RunResult,
) -> AsyncIterator[Event]:
    """Run `recipe` on `url` in a new page: a "run_recipe" ToolCall, each command's ToolCall /
    ToolResult (call ids prefixed with `label`, so they stay unique in the session), skipped
    items as warnings, and a closing ToolResult. Items are collected in `result`, not emitted."""
    began = time.monotonic()
    call = ToolCall(
        call_id=label, name="run_recipe", arguments={"url": url, "max_items": max_items}
    )
    yield call
    page = await browser.page()
    executor = RecipeExecutor(page, recipe, max_items=max_items, crashed=lambda: browser.crashed)
    try:
        await goto(page, url, timeout=LOAD_TIMEOUT_MS)
        async for event in executor.run():
            if isinstance(event, ToolCall | ToolResult):
                yield event.model_copy(update={"call_id": f"{label}-{event.call_id}"})
            elif not isinstance(event, ItemsExtracted):
                yield event
    except (HardFailure, BrowserGone) as exc:
        result.error = str(exc)
    except PlaywrightError as exc:
        result.error = f"cannot load {url}: {first_line(exc)}"
    finally:
        result.items, result.failed = list(executor.items), executor.failed
        with contextlib.suppress(PlaywrightError):
            await page.context.close()
    summary = f"{len(result.items)} items, {result.failed} failed"
    yield tool_result(
        call,
        began,
        summary if result.error is None else f"{summary}; {result.error}",
        {"items": len(result.items), "failed": result.failed},
        ok=result.error is None,
    )


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
            "limit": OUTLINE_LINES,
        }

    async def read(self, spec: FieldSelector) -> tuple[int, str | None]:
        """How many elements `spec` matches and the value it reads (None: none)."""
        arg = {**self._arg, "selector": spec.selector, "attribute": spec.attribute}
        found = await self.page.evaluate(VIEW_JS, arg)
        if found is None:
            raise ViewError(f"{self.where} is no longer shown")
        value = found["value"]
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


async def open_view(
    browser: Browser, document: dict[str, Any], url: str, group: Group
) -> AsyncIterator[Event | View]:
    """Open the first item's details (or the list, for an item field) by running the recipe
    up to there: an "open_view" ToolCall / ToolResult, then the View. ViewError (after the
    failed ToolResult) when it cannot be shown: no selector could be verified."""
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
        raise ViewError(f"cannot verify selectors: {reason}")
    recipe = parse_recipe(probe, "the probe recipe")
    page = await browser.page()
    view = View(page, recipe, group)
    executor = RecipeExecutor(page, recipe, crashed=lambda: browser.crashed)
    warnings: list[str] = []
    reached = False
    try:
        await goto(page, url, timeout=LOAD_TIMEOUT_MS)
        async for event in executor.run():
            if isinstance(event, Log) and event.level == "warning":
                warnings.append(event.message)
            reached = reached or (isinstance(event, ToolResult) and event.name == "END")
    except (HardFailure, BrowserGone) as exc:
        warnings.append(str(exc))
    except PlaywrightError as exc:
        warnings.append(f"cannot load {url}: {first_line(exc)}")
    if not reached:
        reason = f"cannot show {view.where}: " + (warnings[-1] if warnings else "no item")
        failed = tool_result(call, began, reason, ok=False)
        await view.close()
        yield failed
        raise ViewError(f"cannot verify selectors: {reason}")
    yield tool_result(call, began, f"{view.where} shown at {page.url}")
    yield view
