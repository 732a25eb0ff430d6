"""The offline planner: a page's list-detail strategy found without a model.

It finds the repeated list (waiting out a spinner or a late list), names the fields each list
item shows, learns what a click on an item does with `probe_click` (and, for details that
cover the list like a modal dialog, the control that closes them), opens the details of a few
items to name their fields (a panel, a detail page, or the item expanded in place), scrolls to
find more items, pagination or a load-more button, and writes it all as a `Strategy` whose
every selector a tool call matched in this page. The events show each step: probe tools as
ToolCall / ToolResult pairs, the planner's own look-ups (finding the list, reading fields) as
pairs of the same kind, and Log lines stating what was found.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from playwright.async_api import Error as PlaywrightError

from tui_agent.events import Event, Log, ToolCall
from tui_agent.web.plan.field_names import (
    CANDIDATES_JS,
    Candidate,
    merge_fields,
    name_fields,
    scoped,
)
from tui_agent.web.plan.strategy import Strategy, StrategyField
from tui_agent.web.plan.task_intent import TaskIntent, needed_generators, parse_intent
from tui_agent.web.probe import ListCandidate, ProbeResult, Probes, find_lists, traced
from tui_agent.web.recipe import first_line
from tui_agent.web.tool_events import tool_result

LIST_WAIT = 10.0
"""Seconds a late list (behind a spinner, loaded by script) is waited for."""
POLL = 0.3
STILL_POLLS = 3
"""Looks in a row that must find the same list before it is taken (a list still growing is
not)."""
NETWORK_IDLE_MS = 3000
ITEM_SAMPLES = 5
"""List items whose fields are read (fields some items lack show in others)."""
DETAIL_SAMPLES = 3
"""Items whose details are opened and read at most (two when the second adds no field)."""
SETTLE_MS = 3000
CLICK_TIMEOUT_MS = 5000
LOAD_TIMEOUT_MS = 15000

BUSY = (
    "[aria-busy=true], [role=progressbar], [class*=spinner], [class*=loading], "
    "[class*=skeleton], [class*=Spinner], [class*=Loading]"
)
"""Elements that say the page is still loading (a spinner, a busy region, a skeleton)."""
LOADING = f"() => [...document.querySelectorAll({BUSY!r})].some((el) => el.checkVisibility())"
"""Whether such an element is shown."""

# Resolves once the page's text and element count held still for a few frames and nothing
# shows it is loading (or `ms` passed); true when it settled.
SETTLE_JS = (
    """async (ms) => {
  const loading = """
    + LOADING
    + """;
  const mark = () => document.body.innerText.length + ":" +
    document.body.getElementsByTagName("*").length;
  const end = Date.now() + ms;
  let last = mark();
  let still = 0;
  while (Date.now() < end) {
    await new Promise((done) => setTimeout(done, 80));
    const now = mark();
    still = now === last && !loading() ? still + 1 : 0;
    last = now;
    if (still >= 3) return true;
  }
  return false;
}"""
)

KEEP_JS = "(key) => { window[key] = document.body.cloneNode(true); }"
"""Keeps a copy of the page before any click (to tell what only the details show)."""
ABSENT_JS = """([key, selectors]) => {
  const before = window[key];
  delete window[key];
  return selectors.filter((s) => {
    try { return !before || before.querySelector(s) === null; } catch { return false; }
  });
}"""


class OfflinePlanner:
    """Plans a list-detail page with the probe tools alone; iterate `run()`, then read
    `strategy` (None when no plan could be made), `output` (its Markdown) and `error`."""

    def __init__(self, probes: Probes, task: str, url: str) -> None:
        self.probes = probes
        self.page = probes.page
        self.task = task
        self.url = url
        self.strategy: Strategy | None = None
        self.output = ""
        self.error: str | None = None
        self._calls = 0
        self._notes: list[str] = []
        self._list: ListCandidate | None = None
        self._list_url = url
        self._item_fields: dict[str, StrategyField] = {}
        self._click: dict[str, Any] = {}
        self._details: dict[str, StrategyField] = {}
        self._more: dict[str, Any] = {}
        self._kept = f"__tuiOfflineBefore_{uuid.uuid4().hex[:8]}"

    async def run(self) -> AsyncIterator[Event]:
        """The events of planning: tool calls and their results, and Log lines of findings."""
        try:
            async for event in self._plan():
                yield event
        except PlaywrightError as exc:
            self.error = f"the page could not be explored: {first_line(exc)}"
            yield Log(level="error", message=self.error)

    async def _plan(self) -> AsyncIterator[Event]:
        async for event in self._find_list():
            yield event
        if self._list is None:
            return
        await self.page.evaluate(KEEP_JS, self._kept)
        async for event in self._read_items():
            yield event
        async for event in self._classify_click():
            yield event
        if self._click.get("behavior"):
            async for event in self._read_details():
                yield event
        async for event in self._observe_scrolling():
            yield event
        self.strategy = await self._write()
        self.output = self.strategy.to_markdown()
        yield Log(level="info", message="offline strategy: " + " ".join(self._notes))

    # -- events for the planner's own look-ups ----------------------------------------------

    def _call(self, name: str, arguments: dict[str, Any]) -> ToolCall:
        self._calls += 1
        return ToolCall(call_id=f"offline-{self._calls}", name=name, arguments=arguments)

    def _note(self, finding: str) -> Log:
        """Keep a finding for PAGE UNDERSTANDING and say it as a Log line."""
        self._notes.append(finding)
        return Log(level="info", message=finding)

    async def _probe(self, name: str, arguments: dict[str, Any]) -> tuple[list[Event], ProbeResult]:
        self._calls += 1
        call, result, probe = await traced(self.probes, name, arguments, f"offline-{self._calls}")
        return [call, result], probe

    async def _verify(self, selectors: list[str]) -> dict[str, int]:
        """Count each selector in the page, recording those that match as verified (a field
        relative to the list item is verified as written and inside the item)."""
        return {selector: await self.probes.count(selector) for selector in selectors}

    async def _settle(self) -> None:
        await self.page.evaluate(SETTLE_JS, SETTLE_MS)

    # -- 1. the list -------------------------------------------------------------------------

    async def _find_list(self) -> AsyncIterator[Event]:
        call = self._call("find_lists", {"wait_seconds": LIST_WAIT})
        yield call
        began = time.monotonic()
        found = await self._stable_lists()
        waited = round(time.monotonic() - began, 1)
        if not found:
            self.error = f"no repeated list of items found on {self.page.url} (waited {waited} s)"
            yield tool_result(call, began, self.error, {"candidates": []}, ok=False)
            yield Log(level="warning", message=self.error)
            return
        best = found[0]
        verified = await self._verify([best.item, best.container])
        self._list = best
        self._list_url = self.page.url
        self.probes.item_selector = best.item
        lines = [f"{len(found)} repeated list(s) found after {waited} s, best first:"]
        lines += [
            f"- `{c.item}` in `{c.container}`: {c.count} items, {c.links} with links; "
            f'first: "{c.sample}"'
            for c in found
        ]
        facts = {
            "candidates": [
                {"container": c.container, "item": c.item, "count": c.count, "links": c.links}
                for c in found
            ],
            "waited": waited,
            "verified": {s: n for s, n in verified.items() if n},
        }
        yield tool_result(call, began, "\n".join(lines), facts)
        yield self._note(
            f"The page lists {best.count} items (`{best.item}` in `{best.container}`); "
            f'the first reads "{best.sample}".'
        )

    async def _stable_lists(self) -> list[ListCandidate]:
        """The page's lists once nothing shows it loading and the best list (or its absence)
        held still for STILL_POLLS looks; what is there when LIST_WAIT runs out."""
        with contextlib.suppress(PlaywrightError):
            await self.page.wait_for_load_state("networkidle", timeout=NETWORK_IDLE_MS)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + LIST_WAIT
        seen: list[tuple[str, int] | None] = []
        while True:
            loading = await self.page.evaluate(LOADING)
            found = [c for c in await find_lists(self.page) if c.count >= 2]
            seen = [*seen, (found[0].item, found[0].count) if found else None][-STILL_POLLS:]
            still = len(seen) == STILL_POLLS and len(set(seen)) == 1
            if (still and not loading) or loop.time() >= deadline:
                return found
            await asyncio.sleep(POLL)

    # -- 2. the fields each list item shows ---------------------------------------------------

    async def _read_items(self) -> AsyncIterator[Event]:
        """Name the fields the first list items show (relative to the item), verified."""
        assert self._list is not None
        item = self._list.item
        samples = min(ITEM_SAMPLES, self._list.count)
        call = self._call("read_fields", {"block": "list item", "selector": item, "items": samples})
        yield call
        began = time.monotonic()
        named = [await self._fields_in(item, index, item=True) for index in range(samples)]
        fields = merge_fields(named)
        verified = await self._verify([scoped(f.selector, item) for f in fields.values()])
        fields = {n: f for n, f in fields.items() if verified[scoped(f.selector, item)]}
        await self._verify([f.selector for f in fields.values() if f.selector != ":scope"])
        self._item_fields = fields
        output = _fields_text(f"the first {samples} list items", fields)
        yield tool_result(call, began, output, {"fields": _facts(fields), "verified": verified})
        if fields:
            yield self._note(f"Each list item shows {', '.join(fields)}.")

    async def _fields_in(
        self, root: str, index: int = 0, *, inner: str | None = None, item: bool = False
    ) -> dict[str, StrategyField]:
        """The named fields of one block (relative to it); none when it is not there."""
        arg = {"root": root, "index": index, "inner": inner, "item": item}
        found = await self.page.evaluate(CANDIDATES_JS, arg)
        if not found:
            return {}
        return name_fields([Candidate.from_page(raw) for raw in found])

    # -- 3. what a click on an item does ------------------------------------------------------

    async def _classify_click(self) -> AsyncIterator[Event]:
        """Learn what a click on the first item does. When only the item's link responds
        (and each item has one), the links become the list items: the recipe clicks those."""
        assert self._list is not None
        item = self._list.item
        events, probe = await self._probe("probe_click", {"selector": item})
        for event in events:
            yield event
        facts = probe.facts if probe.ok else {}
        link = self._item_fields.get("url")
        target = scoped(link.selector, item) if link is not None else item
        fell_back = relist = False
        if facts.get("behavior") in (None, "nothing") and target != item:
            fell_back = True
            events, probe = await self._probe("probe_click", {"selector": target})
            for event in events:
                yield event
            facts = probe.facts if probe.ok else {}
            relist = facts.get("matched") == self._list.count
        behavior = facts.get("behavior")
        if behavior not in ("navigates", "shows_panel", "inline") or (fell_back and not relist):
            yield self._note("Clicking an item shows nothing new: the items are read in place.")
            return
        covers = bool(facts.get("covers_list"))
        close = facts.get("close") if facts.get("closed_by") == "close" else None
        if not facts.get("restored", True):
            await self._back_to_list(reload=covers)
        if covers and close is None:
            only = " (only Escape did)" if facts.get("closed_by") == "escape" else ""
            yield Log(
                level="warning",
                message=f"the details cover the list and no close control found closes them"
                f"{only}: items after the first may not be reachable",
            )
        if relist:
            yield self._note(
                f"Clicking an item itself does nothing, but its link `{target}` does: "
                "the links are the list items."
            )
            self._list = replace(self._list, item=target)
            self.probes.item_selector = target
            async for event in self._read_items():
                yield event
        where = facts.get("appeared")
        self._click = {"behavior": behavior, "appeared": where, "close": close, "covers": covers}
        yield self._note(
            {
                "navigates": f"Clicking an item opens its own page (content in `{where}`); "
                "going back returns to the list.",
                "shows_panel": f"Clicking an item shows its details in a panel (`{where}`) "
                + ("over the list." if covers else "while the list stays."),
                "inline": f"Clicking an item expands its details inside it (`{where}`).",
            }[behavior]
        )
        if close:
            yield self._note(
                f"Their close control `{close}` must be clicked before the next item: until "
                "then the details block the list (a modal)."
            )

    async def _back_to_list(self, reload: bool = False) -> None:
        """Return to the list page if a probe left it elsewhere (`reload`: load it again even
        when the URL is the list's, e.g. under details that nothing closes)."""
        assert self._list is not None
        url = self._list_url
        if reload:
            await self.page.goto(url, wait_until="load", timeout=LOAD_TIMEOUT_MS)
        elif self.page.url != url:
            try:
                if await self.page.go_back(wait_until="load", timeout=LOAD_TIMEOUT_MS) is None:
                    await self.page.goto(url, wait_until="load", timeout=LOAD_TIMEOUT_MS)
            except PlaywrightError:
                await self.page.goto(url, wait_until="load", timeout=LOAD_TIMEOUT_MS)
            if self.page.url != url:
                await self.page.goto(url, wait_until="load", timeout=LOAD_TIMEOUT_MS)
        await self.page.wait_for_selector(self._list.item, timeout=LOAD_TIMEOUT_MS)
        await self._settle()

    # -- 4. the details' fields ---------------------------------------------------------------

    async def _read_details(self) -> AsyncIterator[Event]:
        assert self._list is not None
        behavior = self._click["behavior"]
        where = self._click["appeared"]
        if not where:
            return
        samples = min(DETAIL_SAMPLES, self._list.count)
        began = time.monotonic()
        named: list[dict[str, StrategyField]] = []
        verified: dict[str, int] = {}
        for index in range(samples):
            try:
                async for event in self._open(behavior, index):
                    yield event
                named.append(await self._read_open(behavior, index, verified))
                await self._close(behavior, index)
            except PlaywrightError as exc:
                if not index:
                    raise
                yield Log(
                    level="warning",
                    message=f"item {index + 1}'s details could not be read "
                    f"({first_line(exc)}): planning with {index}",
                )
                await self._back_to_list()
                break
            if index and set(named[-1]) <= set(named[0]):
                break  # this item shows nothing the first did not: enough samples
        fields = {n: f for n, f in merge_fields(named).items() if verified.get(f.selector)}
        if behavior == "navigates" and "url" in self._item_fields:
            fields.pop("url", None)  # the record's url is the item's link, not a link on its page
        self._details = fields
        call = self._call(
            "read_fields",
            {"block": f"details ({behavior})", "selector": where, "items": len(named)},
        )
        yield call
        output = _fields_text(f"the details of the first {len(named)} items", fields)
        facts = {"fields": _facts(fields), "verified": verified}
        yield tool_result(call, began, output, facts)
        if fields:
            yield self._note(f"The details show {', '.join(fields)}.")

    async def _open(self, behavior: str, index: int) -> AsyncIterator[Event]:
        """Click item `index` and wait for its details; the first ones are described."""
        assert self._list is not None
        before = self.page.url
        await self.page.locator(self._list.item).nth(index).click(timeout=CLICK_TIMEOUT_MS)
        if behavior == "navigates":
            await self.page.wait_for_url(
                lambda now: now != before, wait_until="load", timeout=LOAD_TIMEOUT_MS
            )
        await self._settle()
        if index == 0:
            where = self._click["appeared"]
            target = f"{self._list.item} {where}" if behavior == "inline" else where
            events, _ = await self._probe("describe_element", {"selector": target})
            for event in events:
                yield event

    async def _read_open(
        self, behavior: str, index: int, verified: dict[str, int]
    ) -> dict[str, StrategyField]:
        """The shown details' named fields, verified now: absolute for a panel or a page,
        relative to the item (inside the expanded part) for inline."""
        assert self._list is not None
        item, where = self._list.item, self._click["appeared"]
        if behavior == "inline":
            found = await self._fields_in(item, index, inner=where)
        else:
            found = await self._fields_in(where)
        fields = {
            name: StrategyField(selector=scoped(spec.selector, where), attribute=spec.attribute)
            for name, spec in found.items()
        }
        checks = [where, *(spec.selector for spec in fields.values())]
        counts = await self._verify(checks)  # as written; for inline also inside the item
        if behavior == "inline":
            counts = await self._verify([f"{item} {selector}" for selector in checks])
            counts = {selector: counts[f"{item} {selector}"] for selector in checks}
        verified.update(counts)
        return fields

    async def _close(self, behavior: str, index: int) -> None:
        """Fold an expanded item again, go back from an item's page, or close details that
        cover the list (load the list again when nothing closes them)."""
        assert self._list is not None
        if behavior == "inline":
            await self.page.locator(self._list.item).nth(index).click(timeout=CLICK_TIMEOUT_MS)
            await self._settle()
        elif behavior == "navigates":
            await self._back_to_list()
        elif self._click["close"]:
            await self.page.locator(self._click["close"]).first.click(timeout=CLICK_TIMEOUT_MS)
            await self._settle()
        elif self._click["covers"]:
            await self._back_to_list(reload=True)

    # -- 5. more items -------------------------------------------------------------------------

    async def _observe_scrolling(self) -> AsyncIterator[Event]:
        events, probe = await self._probe("scroll_and_observe", {"target": "page"})
        for event in events:
            yield event
        facts = probe.facts if probe.ok else {}
        self._more = facts
        if facts.get("load_more"):
            yield self._note(f"A load-more button (`{facts['load_more']}`) adds items.")
        elif facts.get("more_loaded"):
            yield self._note(
                f"Scrolling to the end loads more items ({facts['before']} -> {facts['after']})."
            )
        if facts.get("pagination"):
            yield self._note(f"A next-page control (`{facts['pagination']}`) pages the list.")
        if not (facts.get("load_more") or facts.get("more_loaded") or facts.get("pagination")):
            yield self._note(
                "Scrolling loads no more items and there is no pagination or load-more "
                "control: every item is on this page."
            )

    # -- the strategy --------------------------------------------------------------------------

    async def _write(self) -> Strategy:
        assert self._list is not None
        behavior = self._click.get("behavior")
        where = self._click.get("appeared")
        details_loaded = await self._details_loaded(behavior, where)
        intent = parse_intent(self.task)
        self._notes.append(f"The task asks for {intent.describe()}.")
        load_more = self._more.get("load_more")
        return Strategy(
            understanding=list(self._notes),
            list_container=self._list.container,
            list_item=self._list.item,
            click_behavior=behavior,
            details_panel=where if behavior in ("shows_panel", "inline") else None,
            details_loaded=details_loaded,
            close_details=self._click.get("close"),
            details_fields=self._details,
            item_fields=self._item_fields,
            pagination_button=self._more.get("pagination"),
            load_more_button=load_more,
            scroll_loads_more=bool(self._more.get("more_loaded")) and not load_more,
            plan=self._plan_steps(intent),
            needed_generators=needed_generators(intent),
        )

    async def _details_loaded(self, behavior: str | None, where: str | None) -> str | None:
        """A selector shown only once an item's details are: a details field the page did not
        have before any click (the title first), else the details container itself (for
        inline always: it is there only while the item is expanded)."""
        selectors = [f.selector for f in self._details.values() if f.attribute is None]
        if self._details.get("title") is not None:
            selectors.insert(0, self._details["title"].selector)
        absent = await self.page.evaluate(ABSENT_JS, [self._kept, selectors])
        if behavior is None or behavior == "inline":
            return where
        return absent[0] if absent else where

    def _plan_steps(self, intent: TaskIntent) -> list[str]:
        assert self._list is not None
        steps = [f"Wait for the list items `{self._list.item}` to show."]
        if intent.filters or intent.sort or intent.search:
            steps.append(f"Apply what the task asks ({intent.describe()}) with the generators.")
        behavior = self._click.get("behavior")
        details = ", ".join(self._details)
        items = ", ".join(self._item_fields)
        if behavior == "navigates":
            steps.append(
                "For each item: click it, wait for its page, read "
                f"{details or 'the page text'}, then go back to the list."
            )
        elif behavior == "shows_panel":
            close = self._click["close"]
            steps.append(
                f"For each item: click it, wait for the panel `{self._click['appeared']}` to "
                f"show it, read {details or 'the panel text'}"
                + (f", then close it with `{close}`." if close else ".")
            )
        elif behavior == "inline":
            steps.append(
                f"For each item: click it to expand it, read {details or 'the expanded text'} "
                "inside it."
            )
        else:
            steps.append(f"For each item: read {items or 'its text'} in place.")
        if items and behavior:
            steps.append(f"Read {items} from the item itself.")
        if self._more.get("load_more"):
            steps.append(f"Click `{self._more['load_more']}` for more items until it is gone.")
        elif self._more.get("more_loaded"):
            steps.append("Scroll to the end for more items until no more load.")
        if self._more.get("pagination"):
            steps.append(f"Click `{self._more['pagination']}` for the next page until none.")
        if intent.max_items:
            steps.append(f"Stop after {intent.max_items} items.")
        return steps


def _facts(fields: dict[str, StrategyField]) -> dict[str, Any]:
    return {name: spec.as_binding() for name, spec in fields.items()}


def _fields_text(where: str, fields: dict[str, StrategyField]) -> str:
    if not fields:
        return f"No named fields found in {where}."
    lines = [f"Named fields in {where} (each verified in the page):"]
    lines += [
        f"- {name}: `{spec.selector}`" + (f" @{spec.attribute}" if spec.attribute else "")
        for name, spec in fields.items()
    ]
    return "\n".join(lines)
