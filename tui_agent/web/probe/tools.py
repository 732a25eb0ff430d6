"""The planner's tools: probe_click, describe_element and scroll_and_observe.

Each tool is a real action in the page whose result is English for a model plus facts for
code. Every selector a tool reports was tested in the page; those that matched at least one
element are recorded in the session's `VerifiedSelectors`. `Probes.call` never raises for a
model's mistake (unknown tool, missing argument, bad selector): it answers ok=False with one
clear sentence.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import re
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec

from tui_agent.events import ToolCall, ToolResult
from tui_agent.web.navigation import goto
from tui_agent.web.page_wait import WAIT_CAP, settled
from tui_agent.web.page_wait import watch as watch_traffic
from tui_agent.web.probe.list_finder import find_lists
from tui_agent.web.probe.page_watch import PageWatch, close_tab
from tui_agent.web.probe.results import (
    ProbeResult,
    Recorder,
    ToolInputError,
    VerifiedSelectors,
    back_line,
    change_lines,
    content_lines,
    control_line,
    plural,
    refusal,
)
from tui_agent.web.probe.scripts import (
    ANALYZE_JS,
    APPEARED_GONE_JS,
    CHECK_JS,
    CLEANUP_JS,
    CONTROLS_JS,
    COUNT_IN_ITEMS_JS,
    DESCRIBE_JS,
    DETAILS_EXIT_JS,
    INSTALL_JS,
    PAGE_MAIN_JS,
    QUIET_JS,
    REACHED_JS,
    SCROLL_JS,
)
from tui_agent.web.probe.snapshot import dom_snapshot
from tui_agent.web.probe.specs import TOOLS
from tui_agent.web.tool_events import tool_result

if TYPE_CHECKING:
    from playwright.async_api import FloatRect, Page, Position

SETTLE_MIN = 0.3
SETTLE_QUIET_MS = 400
SETTLE_MAX = 3.0
GROWTH_WAIT = 1.5
SCROLL_ROUNDS = 3
CLICK_TIMEOUT_MS = 3000
LOAD_TIMEOUT_MS = 10000
NAVIGATION_WAIT = 5.0
CONTROLS_PATIENCE = 1.0
"""Seconds a quiet page with no pager (and no timer due) is given to show one."""


P = ParamSpec("P")


def _refusing(
    tool: Callable[Concatenate[Probes, P], Awaitable[ProbeResult]],
) -> Callable[Concatenate[Probes, P], Awaitable[ProbeResult]]:
    """A tool that answers ok=False (one sentence) for a bad input or a failing page."""

    @functools.wraps(tool)
    async def run(self: Probes, *args: P.args, **kwargs: P.kwargs) -> ProbeResult:
        from playwright.async_api import Error

        try:
            return await tool(self, *args, **kwargs)
        except ToolInputError as exc:
            return refusal(f"{exc}.")
        except Error as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return refusal(f"{tool.__name__} failed in the page: {reason.rstrip('.')}.")

    return run


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name.strip()).lower()


class Probes:
    """The tools over one page; `verified` collects what they proved."""

    def __init__(
        self, page: Page, verified: VerifiedSelectors | None = None, *, wait: float = WAIT_CAP
    ) -> None:
        self.page = page
        self.wait = wait
        """Seconds a click's requests are waited for at most (a slow details fetch)."""
        self.verified = verified if verified is not None else VerifiedSelectors()
        self.item_selector: str | None = None
        """The list item selector, once a planner knows it (else the best list found)."""
        self.item_siblings: str | int | None = None
        """The siblings each item spans past its first element (LIST_ITEM_SIBLINGS), if any."""

    async def snapshot(self, max_tokens: int = 2500) -> str:
        """The page's compact outline for a model."""
        return await dom_snapshot(self.page, max_tokens)

    async def count(self, selector: str) -> int:
        """How many elements match `selector` (0 when it is not valid CSS); records >= 1."""
        found = await self.page.evaluate(CHECK_JS, selector)
        self.verified.add(selector, found["count"], "count")
        return int(found["count"])

    async def count_in_items(self, item: str, siblings: str | int | None, selector: str) -> int:
        """How many items (each its LIST_ITEM element and `siblings`) hold a match of the
        item-relative `selector`; records it as verified inside the items when >= 1."""
        found = int(await self.page.evaluate(COUNT_IN_ITEMS_JS, [item, siblings, selector]))
        self.verified.add(selector, found, "count in items")
        return found

    @_refusing
    async def probe_click(self, selector: str) -> ProbeResult:
        """Click the first match and report what the click did, then restore the page."""
        from playwright.async_api import Error

        matched = await self._matches(selector, "probe_click")
        run = Recorder(self.verified, "probe_click")
        run.note(selector, matched)
        item = await self._item_selector()
        url = self.page.url
        target = self.page.locator(selector).first
        with contextlib.suppress(Error):
            await target.scroll_into_view_if_needed(timeout=CLICK_TIMEOUT_MS)
            await asyncio.sleep(SETTLE_MIN)
        scoped = await self.page.evaluate(INSTALL_JS, {"selector": selector, "item": item})
        box = await target.bounding_box()
        with PageWatch(self.page) as watch:
            how = await self._click(selector, box)
            document_replaced = await self._settle(watch)
        facts: dict[str, Any] = {
            "matched": matched,
            "url_changed": self.page.url != url,
            "url": self.page.url,
            "behavior": "nothing",
            "appeared": None,
            "appeared_count": 0,
            "changes": [how] if how else [],
            "restored": True,
            "covers_list": False,
            "close": None,
            "closed_by": None,
            "blocker": None,
        }
        for tab in watch.popups:
            facts["new_tab"] = await close_tab(tab, CLICK_TIMEOUT_MS)
            facts["changes"].append(f"a new tab opened at {facts['new_tab']} (closed again)")
        if document_replaced:
            text = await self._after_navigation(run, facts, selector, url, item or selector)
        else:
            text = await self._after_change(run, facts, selector, box, url, item, scoped["scoped"])
        return ProbeResult(text=text, facts=facts, verified=run.verified)

    @_refusing
    async def describe_element(self, selector: str) -> ProbeResult:
        """The first match's text, direct children and verified content selectors."""
        count = await self._matches(selector, "describe_element")
        found = await self.page.evaluate(DESCRIBE_JS, selector)
        run = Recorder(self.verified, "describe_element")
        run.note(selector, count)
        content = run.content(found["content"])
        for child in found["children"]:
            run.note(child["selector"], child["count"])
        shown = len(found["children"])
        lines = [
            f"`{selector}` matches {plural(count, 'element')}. "
            f'The first one reads: "{found["text"]}"',
            f"It has {plural(found['child_count'], 'direct child', 'direct children')}"
            + (f" (the first {shown} shown):" if shown < found["child_count"] else ":"),
        ]
        lines += [f'- {c["tag"]} `{c["selector"]}`: "{c["text"]}"' for c in found["children"]]
        lines.append(content_lines(content))
        facts = {
            "count": count,
            "text": found["text"],
            "children": [
                {"selector": c["selector"], "tag": c["tag"], "text": c["text"]}
                for c in found["children"]
            ],
            "content_selectors": content,
        }
        return ProbeResult(text="\n".join(lines), facts=facts, verified=run.verified)

    @_refusing
    async def scroll_and_observe(self, target: str = "page") -> ProbeResult:
        """Scroll to the end a few times; report whether more items loaded and the controls."""
        if target not in ("page", "list"):
            raise ToolInputError(
                f'scroll_and_observe target must be "page" or "list", not {target!r}'
            )
        run = Recorder(self.verified, "scroll_and_observe")
        item = await self._item_selector()
        before = await self._quiet_count(item) if item else 0
        current = before
        rounds = 0
        at_end = False
        scroller = None
        while rounds < SCROLL_ROUNDS:
            rounds += 1
            scrolled = await self.page.evaluate(SCROLL_JS, {"target": target, "item": item})
            scroller = scrolled["scroller"]
            grown = await self._wait_growth(item, current) if item else current
            at_end = scrolled["at_end"] and grown == current
            if grown == current:
                break
            current = grown
        after = await self._quiet_count(item) if item else 0
        if item:
            run.note(item, after)
        controls = await self._controls()
        facts: dict[str, Any] = {
            "item_selector": item,
            "before": before,
            "after": after,
            "more_loaded": after > before,
            "at_end": at_end,
            "pagination": None,
            "pagination_text": None,
            "pagination_stable": True,
            "pagination_numbered": False,
            "next_disabled": bool(controls["next_disabled"]),
            "load_more": None,
        }
        for key in ("pagination", "load_more"):
            if controls[key] and run.note(
                controls[key]["selector"], await self._quiet_count(controls[key]["selector"])
            ):
                facts[key] = controls[key]["selector"]
        if facts["pagination"]:
            facts["pagination_text"] = controls["pagination"]["text"]
            facts["pagination_stable"] = controls["pagination"]["stable"]
            facts["pagination_numbered"] = controls["pagination"]["numbered"]
        await self.page.evaluate("() => window.scrollTo(0, 0)")
        if scroller:
            where = f"the list's own scroll box `{scroller}`"
        elif target == "list":
            where = "the page (the list has no scroll box of its own)"
        else:
            where = "the page"
        lines = [f"Scrolled {where} to the end ({plural(rounds, 'time')})."]
        if not item:
            lines.append("No repeated list was found, so no items were counted.")
        elif after > before:
            lines.append(
                f"Items (`{item}`): {before} before, {after} after: scrolling loaded more items."
            )
        else:
            lines.append(f"Item count unchanged: {after} items (`{item}`).")
        lines.append(
            "Reached the end of the page: it cannot scroll further."
            if at_end
            else "Not at the end yet: there is more to scroll."
        )
        lines += [control_line("Pagination control", controls["pagination"], facts["pagination"])]
        lines += [control_line("Load-more button", controls["load_more"], facts["load_more"])]
        return ProbeResult(text="\n".join(lines), facts=facts, verified=run.verified)

    async def call(self, name: str, arguments: dict[str, Any]) -> ProbeResult:
        """Run the tool `name` (snake_case or camelCase); ok=False for bad calls."""
        tool = _snake(name)
        if tool not in TOOLS:
            return refusal(f"Unknown tool {name!r}: the tools are {', '.join(TOOLS)}.")
        if not isinstance(arguments, dict):
            return refusal(f"{tool} needs its arguments as a JSON object.")
        if tool == "scroll_and_observe":
            return await self.scroll_and_observe(str(arguments.get("target") or "page"))
        selector = arguments.get("selector")
        if not isinstance(selector, str) or not selector.strip():
            return refusal(f"{tool} needs a `selector` argument (a CSS selector).")
        method = self.probe_click if tool == "probe_click" else self.describe_element
        return await method(selector.strip())

    async def _controls(self) -> dict[str, Any]:
        """The page's pagination and load-more controls; when it shows neither yet, once the
        page is quiet, or a timer of its due within the wait has run (a pager written late)."""
        controls: dict[str, Any] = await self.page.evaluate(CONTROLS_JS)

        async def shown() -> bool:
            nonlocal controls
            controls = await self.page.evaluate(CONTROLS_JS)
            return bool(controls["pagination"] or controls["load_more"])

        if not (controls["pagination"] or controls["load_more"]):
            await settled(self.page, self.wait, ready=shown, patience=CONTROLS_PATIENCE)
        return controls

    async def _matches(self, selector: str, tool: str) -> int:
        found = await self.page.evaluate(CHECK_JS, selector)
        if found["error"]:
            raise ToolInputError(f"`{selector}` is not a valid CSS selector")
        if found["count"] == 0:
            raise ToolInputError(f"{tool}: no element matches `{selector}` on this page")
        return int(found["count"])

    async def _quiet_count(self, selector: str) -> int:
        found = await self.page.evaluate(CHECK_JS, selector)
        return int(found["count"])

    async def _item_selector(self) -> str | None:
        if self.item_selector:
            return self.item_selector
        best = await find_lists(self.page, limit=1)
        return best[0].item if best else None

    async def _click(self, selector: str, box: FloatRect | None) -> str:
        """Click like a user; fall back to a scripted click when the mouse cannot reach it."""
        from playwright.async_api import Error

        target = self.page.locator(selector).first
        position: Position | None = {"x": box["width"] / 2, "y": box["height"] / 2} if box else None
        try:
            await target.click(timeout=CLICK_TIMEOUT_MS, position=position)
            return ""
        except Error:
            try:
                await target.evaluate("(el) => el.click()")
            except Error:
                return "the click could not be completed (the page went away)"
            return (
                "the element could not be clicked by mouse (hidden or covered): clicked by script"
            )

    async def _settle(self, watch: PageWatch | None = None) -> bool:
        """Wait until the page is quiet; True when the click loaded another document.

        A navigation the click started (seen by `watch`) is waited for even when the old
        document stays quiet meanwhile, up to NAVIGATION_WAIT seconds; requests still open
        (details fetched slowly) up to `wait` seconds.
        """
        from playwright.async_api import Error

        loop = asyncio.get_running_loop()
        start = loop.time()
        traffic = watch_traffic(self.page)
        while True:
            await asyncio.sleep(0.1)
            elapsed = loop.time() - start
            try:
                quiet = await self.page.evaluate(QUIET_JS)
            except Error:
                quiet = -1
            if quiet == -1:
                try:
                    await self.page.wait_for_load_state("load", timeout=LOAD_TIMEOUT_MS)
                    replaced = not await self.page.evaluate("() => !!window.__tuiProbe")
                except Error:
                    continue
                if replaced:
                    return True
                continue
            pending = watch is not None and watch.navigating and elapsed < NAVIGATION_WAIT
            fetching = traffic.open_requests() > 0 and elapsed < self.wait
            if pending or fetching:
                continue
            if (quiet >= SETTLE_QUIET_MS and elapsed >= SETTLE_MIN) or elapsed >= SETTLE_MAX:
                return False

    async def _after_navigation(
        self, run: Recorder, facts: dict[str, Any], selector: str, url: str, list_selector: str
    ) -> str:
        facts["behavior"] = "navigates"
        facts["url"] = self.page.url
        try:
            landed = await self.page.evaluate(PAGE_MAIN_JS)
            facts["title"] = await self.page.title()
        finally:
            back = await self._return_to(url, list_selector)
        facts["appeared"] = landed["selector"]
        facts["appeared_count"] = landed["count"]
        run.note(landed["selector"], landed["count"])
        facts["content_selectors"] = run.content(landed["content"])
        facts["heading"] = landed["heading"]
        facts["changes"].append(f"a new page loaded: {facts['url']}")
        facts["restored"] = back > 0
        lines = [
            f"Clicked the first of {plural(facts['matched'], 'match', 'matches')} `{selector}`. "
            f"The URL changed: the browser navigated to {facts['url']} "
            f"(title {facts['title']!r}, main heading {landed['heading']!r}).",
            f"The detail page's content is in `{landed['selector']}` "
            f'({landed["count"]} match): "{landed["text"]}"',
            content_lines(facts["content_selectors"]),
            back_line(back, list_selector),
        ]
        return "\n".join(lines)

    async def _return_to(self, url: str, list_selector: str) -> int:
        """Go back to the list page `url`; how many list items are there again (0: not)."""
        from playwright.async_api import Error

        with contextlib.suppress(Error):
            await self.page.go_back(wait_until="load", timeout=LOAD_TIMEOUT_MS)
        if self.page.url != url:
            try:
                await goto(self.page, url, wait_until="load", timeout=LOAD_TIMEOUT_MS)
            except Error:
                return 0
        return await self._wait_growth(list_selector, 0)

    async def _after_change(
        self,
        run: Recorder,
        facts: dict[str, Any],
        selector: str,
        box: FloatRect | None,
        url: str,
        item: str | None,
        scoped: bool,
    ) -> str:
        found = await self.page.evaluate(
            ANALYZE_JS, {"item": item if scoped else None, "list": item}
        )
        if facts["url_changed"] and item and await self._quiet_count(item) == 0:
            return await self._after_soft_navigation(run, facts, found, selector, url, item)
        behavior = found["behavior"]
        facts["behavior"] = behavior
        facts["appeared"] = found["selector"]
        facts["appeared_count"] = found["count"]
        if behavior == "inline":
            facts["appeared_absolute"] = found["absolute"]
        if found["absolute"]:
            run.note(found["absolute"], found["count"])
        if behavior == "inline" and found["selector"]:
            run.note(found["selector"], await self._quiet_count(found["selector"]))
        facts["content_selectors"] = run.content(found["content"])
        facts["changes"] += change_lines(found)
        lines = [
            f"Clicked the first of {plural(facts['matched'], 'match', 'matches')} `{selector}`."
        ]
        lines.append(
            f"The URL changed to {facts['url']} (same document)."
            if facts["url_changed"]
            else "The URL did not change."
        )
        if behavior == "shows_panel":
            lines.append(
                f"A details panel appeared or changed: `{found['selector']}` "
                f'({found["count"]} match): "{found["text"]}"'
            )
        elif behavior == "inline":
            lines.append(
                f"Content appeared inside the clicked item: `{found['selector']}` (relative to "
                f"the item; absolute `{found['absolute']}`, {found['count']} match): "
                f'"{found["text"]}"'
            )
        else:
            lines.append("Nothing new appeared.")
        if facts["changes"]:
            lines.append("Other changes: " + "; ".join(facts["changes"]) + ".")
        if found["content"]:
            lines.append(content_lines(facts["content_selectors"]))
        if behavior == "shows_panel":
            lines += await self._details_exit(run, facts)
        lines.append(await self._restore(facts, selector, box))
        return "\n".join(lines)

    async def _details_exit(self, run: Recorder, facts: dict[str, Any]) -> list[str]:
        """Whether the shown details cover the list, and their close control (verified)."""
        found = await self.page.evaluate(DETAILS_EXIT_JS)
        facts["covers_list"], facts["blocker"] = found["covers"], found["blocker"]
        close = found["close"]
        if close and run.note(close["selector"], close["count"]):
            facts["close"] = close["selector"]
        lines = []
        if found["covers"]:
            lines.append(
                f"The details cover the list: a click on {found['blocked']} of "
                f"{plural(found['checked'], 'list item')} in view now lands on "
                f"`{found['blocker']}`, so they must be closed before the next item is clicked."
            )
        if facts["close"]:
            needed = "" if found["covers"] else " (not needed: the list stays clickable)"
            lines.append(f'Their close control: `{facts["close"]}` ("{close["text"]}"){needed}.')
        elif found["covers"]:
            lines.append("No close control (a \u00d7 or Close button) was found in them.")
        return lines

    async def _after_soft_navigation(
        self,
        run: Recorder,
        facts: dict[str, Any],
        found: dict[str, Any],
        selector: str,
        url: str,
        item: str,
    ) -> str:
        """The URL changed and the list went away without a new document (a script's page)."""
        await self.page.evaluate(CLEANUP_JS)
        facts["behavior"] = "navigates"
        facts["appeared"] = found["absolute"]
        facts["appeared_count"] = found["count"]
        run.note(found["absolute"], found["count"])
        facts["content_selectors"] = run.content(found["content"])
        facts["changes"] += [*change_lines(found), "the list left the page"]
        back = await self._return_to(url, item)
        facts["restored"] = back > 0
        lines = [
            f"Clicked the first of {plural(facts['matched'], 'match', 'matches')} `{selector}`. "
            f"The URL changed to {facts['url']} and the list left the page (the page's script "
            "showed another view without loading a new document).",
        ]
        if found["absolute"]:
            lines.append(
                f"The new view's content is in `{found['absolute']}` "
                f'({found["count"]} match): "{found["text"]}"'
            )
        lines += [content_lines(facts["content_selectors"]), back_line(back, item)]
        return "\n".join(lines)

    async def _restore(self, facts: dict[str, Any], selector: str, box: FloatRect | None) -> str:
        """Undo an inline expansion (click again) or a panel (close control or Escape); say
        how it went."""
        behavior = facts["behavior"]
        try:
            if behavior == "inline":
                await self._click(selector, box)
                await self._settle()
                facts["restored"] = await self.page.evaluate(APPEARED_GONE_JS)
                return (
                    "Clicked it again: the item collapsed (restored)."
                    if facts["restored"]
                    else "Clicked it again, but the expanded content stayed: not restored."
                )
            if behavior == "shows_panel":
                return await self._close_details(facts)
            return "Nothing to restore."
        finally:
            await self.page.evaluate(CLEANUP_JS)

    async def _close_details(self, facts: dict[str, Any]) -> str:
        """Close shown details: by their close control when they cover the list (the recipe
        clicks it too), else (or when it did not close them) by Escape."""
        said = ""
        close = facts["close"]
        if close and facts["covers_list"]:
            await self._click(close, None)
            await self._settle()
            if await self.page.evaluate(REACHED_JS):
                facts["restored"], facts["closed_by"] = True, "close"
                return (
                    f"Clicked the close control `{close}`: the details closed and the list "
                    "can be clicked again (restored)."
                )
            said = f"Clicked the close control `{close}`, but the details stayed. "
        await self.page.keyboard.press("Escape")
        await self._settle()
        facts["restored"] = await self.page.evaluate(REACHED_JS)
        if facts["restored"]:
            facts["closed_by"] = "escape"
            return said + "Pressed Escape: the panel closed (restored)."
        return (
            said + "Pressed Escape, but the panel stayed open (not restored); "
            "describe_element can read it now."
        )

    async def _wait_growth(self, selector: str, current: int) -> int:
        """The count of `selector` once it exceeds `current`, or after a short wait."""
        loop = asyncio.get_running_loop()
        start = loop.time()
        count = current
        while loop.time() - start < GROWTH_WAIT:
            await asyncio.sleep(0.15)
            count = await self._quiet_count(selector)
            if count > current:
                break
        return count


async def traced(
    probes: Probes, name: str, arguments: dict[str, Any], call_id: str, step: int = 0
) -> tuple[ToolCall, ToolResult, ProbeResult]:
    """Run one tool call; its ToolCall / ToolResult events and the result."""
    recorded = dict(arguments) if isinstance(arguments, dict) else {"arguments": arguments}
    call = ToolCall(call_id=call_id, name=name, arguments=recorded, step=step)
    start = time.monotonic()
    result = await probes.call(name, arguments)
    facts = {**result.facts, "verified": dict(result.verified)}
    outcome = tool_result(call, start, result.text, facts, ok=result.ok)
    return call, outcome, result
