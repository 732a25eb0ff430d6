"""The offline planner: a page's list-detail strategy found without a model.

It finds the repeated list (waiting out a spinner or a late list; on a page with none, after
filling its form from the task: page_forms), names the fields each list item shows, learns
what a click on an item does with `probe_click` (and, for details that cover the list like a
modal dialog, the control that closes them), opens the details of a few items to name their
fields (a panel, a detail page, the page another thing's link in the item leads to when the
task reads fields there, or the item expanded in place), scrolls to find more items,
pagination or a load-more button, and writes it all as a `Strategy` whose every selector a
tool call matched in this page. The events show each step: probe tools as ToolCall /
ToolResult pairs, the planner's own look-ups (finding the list, reading fields) as pairs of
the same kind, and Log lines stating what was found; the `PlanOutcome` ends them.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from playwright.async_api import Error as PlaywrightError

from tui_agent.events import Event, Log, ToolCall
from tui_agent.web.navigation import goto
from tui_agent.web.page_wait import PROGRESS_EVERY, WAIT_CAP, settle, settled
from tui_agent.web.phase import Phase, PhaseRun
from tui_agent.web.plan.asked_fields import asked_fields
from tui_agent.web.plan.field_names import (
    CANDIDATES_JS,
    Candidate,
    merge_fields,
    name_fields,
    scoped,
)
from tui_agent.web.plan.item_links import LINKS_JS, link_selectors
from tui_agent.web.plan.labelled_fields import field_key, labelled_fields
from tui_agent.web.plan.outcome import PlanOutcome
from tui_agent.web.plan.page_forms import FormFill, fill_form, has_form, replay_form
from tui_agent.web.plan.strategy import (
    GENERATOR_NAMES,
    GeneratorName,
    Strategy,
    StrategyField,
)
from tui_agent.web.plan.task_intent import TaskIntent, needed_generators, parse_intent
from tui_agent.web.probe import (
    ListCandidate,
    ProbeResult,
    Probes,
    find_lists,
    traced,
    with_featured,
)
from tui_agent.web.recipe import (
    Bindings,
    ClickIfExists,
    CommandFailed,
    HardFailure,
    PageActions,
    conditions,
    first_line,
)
from tui_agent.web.tool_events import tool_result

ITEM_SAMPLES = 5
"""List items whose fields are read (fields some items lack show in others)."""
DETAIL_SAMPLES = 3
"""Items whose details are opened and read at most (two when the second adds no field)."""
SETTLE_CAP = 3.0
"""Seconds a page is waited for after a click that changes nothing on the network."""
CLICK_TIMEOUT_MS = 5000
LOAD_TIMEOUT_MS = 15000

BUSY = (
    "[aria-busy=true], [role=progressbar], [class*=spinner], [class*=loading], "
    "[class*=skeleton], [class*=Spinner], [class*=Loading]"
)
"""Elements that say the page is still loading (a spinner, a busy region, a skeleton)."""
LOADING = f"() => [...document.querySelectorAll({BUSY!r})].some((el) => el.checkVisibility())"
"""Whether such an element is shown."""

KEEP_JS = "(key) => { window[key] = document.body.cloneNode(true); }"
"""Keeps a copy of the page before any click (to tell what only the details show)."""
ABSENT_JS = """([key, selectors]) => {
  const before = window[key];
  delete window[key];
  return selectors.filter((s) => {
    try { return !before || before.querySelector(s) === null; } catch { return false; }
  });
}"""


NEXT_PAGE = ClickIfExists(type="CLICK_IF_EXISTS", target="next_page")


@dataclass(frozen=True)
class _ListFound:
    """The page's repeated list, or why none was taken."""

    found: ListCandidate | None
    failure: str = ""


@dataclass(frozen=True)
class _LinkFound:
    """The item-relative link to the page the task names, or None."""

    selector: str | None


class OfflinePlanner:
    """Plans a list-detail page with the probe tools alone; `run()` yields the events, then the
    PlanOutcome."""

    def __init__(
        self,
        probes: Probes,
        task: str,
        url: str,
        *,
        wait: float = WAIT_CAP,
        intent: TaskIntent | None = None,
    ) -> None:
        self.probes = probes
        self.page = probes.page
        self.task = task
        self.url = url
        self.wait = wait
        self.intent = intent or parse_intent(task)
        # The field names the task uses: a field found that means one takes its word.
        self._asked = [*asked_fields(task), *self.intent.page_fields]
        self._calls = 0
        self._notes: list[str] = []
        self._list: ListCandidate | None = None
        self._list_url = url
        self._item_fields: dict[str, StrategyField] = {}
        self._click: dict[str, Any] = {}
        self._details: dict[str, StrategyField] = {}
        self._more: dict[str, Any] = {}
        self._loaded_by: str | None = None
        self._form: FormFill | None = None
        """The form filled before the list showed (None: the list is there on load)."""
        self._page_link: str | None = None
        """The item's link to the page the task names ("the author page"), if followed."""
        self._kept = f"__tuiOfflineBefore_{uuid.uuid4().hex[:8]}"

    async def run(self) -> Phase[PlanOutcome]:
        """The events of planning: tool calls and their results, and Log lines of findings;
        then the outcome."""
        try:
            async for item in self._plan():
                yield item
        except PlaywrightError as exc:
            failure = f"the page could not be explored: {first_line(exc)}"
            yield Log(level="error", message=failure)
            yield PlanOutcome(None, failure=failure)

    async def _plan(self) -> Phase[PlanOutcome]:
        listed = PhaseRun(self._find_list(), _ListFound)
        async for event in listed:
            yield event
        found = listed.outcome
        if found.found is None:
            formed = PhaseRun(self._use_form(found), _ListFound)
            async for event in formed:
                yield event
            found = formed.outcome
        if found.found is None:
            yield PlanOutcome(None, failure=found.failure)
            return
        self._list = found.found
        await self.page.evaluate(KEEP_JS, self._kept)
        async for event in self._read_items():
            yield event
        async for event in self._classify_click():
            yield event
        if self._click.get("behavior"):
            async for event in self._read_details():
                yield event
        self._loaded_by = await self._details_loaded(
            self._click.get("behavior"), self._click.get("appeared")
        )
        async for event in self._observe_scrolling():
            yield event
        strategy = await self._write()
        yield Log(level="info", message="offline strategy: " + " ".join(self._notes))
        yield PlanOutcome(strategy, strategy.to_markdown())

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
        """Wait for the page after a click or a page change (see page_wait)."""
        await settled(self.page, self.wait)

    # -- 1. the list -------------------------------------------------------------------------

    async def _find_list(self) -> Phase[_ListFound]:
        call = self._call("find_lists", {"wait_seconds": self.wait})
        yield call
        began = time.monotonic()
        capped = False
        async for look in settle(self.page, self.wait, ready=self._list_shown):
            if not look.done:
                yield Log(level="info", message=look.line())
            elif look.elapsed >= PROGRESS_EVERY:
                yield Log(level="info", message=f"the page {look.outcome()}")
            capped = look.why == "cap"
        lists = [c for c in await find_lists(self.page) if c.count >= 2]
        found = [c for c in lists if c.place != "navigation"]  # menus are never the items
        waited = round(time.monotonic() - began, 1)
        if not found:
            failure = f"no repeated list of items found on {self.page.url} (waited {waited} s"
            if lists:
                failure += "; only navigation menus: " + ", ".join(f"`{c.item}`" for c in lists)
            failure += "; it was still busy: a longer --wait may help)" if capped else ")"
            yield tool_result(call, began, failure, {"candidates": []}, ok=False)
            yield Log(level="warning", message=failure)
            yield _ListFound(None, failure)
            return
        best = await with_featured(self.page, found[0])
        verified = await self._verify([best.item, best.container])
        self._list_url = self.page.url
        self.probes.item_selector = best.item
        self.probes.item_siblings = best.siblings
        lines = [f"{len(found)} repeated list(s) found after {waited} s, best first:"]
        lines += [
            f"- `{c.item}`{_spread(c.siblings)} in `{c.container}`: {c.count} items, "
            f"{c.links} with links{' (navigation, sidebar or menu)' if c.weak else ''}; "
            f'first: "{c.sample}"'
            for c in found
        ]
        facts = {
            "candidates": [
                {
                    "container": c.container,
                    "item": c.item,
                    "siblings": c.siblings,
                    "count": c.count,
                    "links": c.links,
                    "weak": c.weak,
                }
                for c in found
            ],
            "waited": waited,
            "verified": {s: n for s, n in verified.items() if n},
        }
        yield tool_result(call, began, "\n".join(lines), facts)
        spread = f", each spread over sibling elements ({_spread(best.siblings).strip()})"
        yield self._note(
            f"The page lists {best.count} items (`{best.item}` in `{best.container}`"
            f'{spread if best.siblings else ""}); the first reads "{best.sample}".'
        )
        yield _ListFound(best)

    async def _use_form(self, before: _ListFound) -> Phase[_ListFound]:
        """No list: fill the page's form from the task's words, submit it and look for the
        list on the result; `before` stands when no form control is named by the task or the
        result shows no list either."""
        if not await has_form(self.page):
            yield before
            return
        call = self._call("fill_form", {"task": self.task})
        yield call
        began = time.monotonic()
        filled = await fill_form(self.page, self.task, self.intent, wait=self.wait)
        if not filled.steps:
            yield tool_result(call, began, "no form control is named by the task", ok=False)
            yield before
            return
        facts = {"steps": [step.command for step in filled.steps], "submit": filled.submit}
        yield tool_result(call, began, filled.describe(), facts)
        listed = PhaseRun(self._find_list(), _ListFound)
        async for event in listed:
            yield event
        if listed.outcome.found is None:
            failure = f"{before.failure or 'no list'}; after the form ({filled.describe()}): "
            yield _ListFound(None, failure + listed.outcome.failure)
            return
        self._form = filled
        yield self._note(f"The list shows once the page's form is used: {filled.describe()}.")
        yield listed.outcome

    async def _list_shown(self) -> bool:
        """Whether the page shows a list worth taking (not in navigation, a sidebar or a form,
        not a menu) and nothing says it is still loading."""
        if await self.page.evaluate(LOADING):
            return False
        found = [c for c in await find_lists(self.page, limit=3) if c.count >= 2]
        return bool(found) and not found[0].weak

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
        siblings = self._list.siblings
        if siblings is not None:  # each field is looked for in all of an item's elements
            verified = {
                f.selector: await self.probes.count_in_items(item, siblings, f.selector)
                for f in fields.values()
            }
            fields = {n: f for n, f in fields.items() if verified[f.selector]}
        else:
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
        siblings = self._list.siblings if item and self._list is not None else None
        arg = {"root": root, "index": index, "inner": inner, "item": item, "siblings": siblings}
        found = await self.page.evaluate(CANDIDATES_JS, arg)
        if not found:
            return {}
        return name_fields([Candidate.from_page(raw) for raw in found], self._asked)

    # -- 3. what a click on an item does ------------------------------------------------------

    async def _classify_click(self) -> AsyncIterator[Event]:
        """Learn what a click on the first item does. When only the item's link responds
        (and each item has one), the recipe clicks that link inside each item, so the item's
        own fields are still read. An item spread over sibling elements is clicked by its
        link from the start (a click in the middle of a row may land anywhere)."""
        assert self._list is not None
        item, spread = self._list.item, self._list.siblings is not None
        to_page = PhaseRun(self._link_to_page(), _LinkFound)
        async for event in to_page:
            yield event
        link = to_page.outcome.selector
        self._page_link = link
        if link is None and "url" in self._item_fields:
            link = self._item_fields["url"].selector
        target = scoped(link, item) if link is not None else item
        every = target != item and await self.probes.count(target) == self._list.count
        inside = (spread and every) or to_page.outcome.selector is not None
        events, probe = await self._probe("probe_click", {"selector": target if inside else item})
        for event in events:
            yield event
        facts = probe.facts if probe.ok else {}
        fell_back = False
        if facts.get("behavior") in (None, "nothing") and every and not inside:
            fell_back = inside = True
            events, probe = await self._probe("probe_click", {"selector": target})
            for event in events:
                yield event
            facts = probe.facts if probe.ok else {}
        behavior = facts.get("behavior")
        if behavior not in ("navigates", "shows_panel", "inline"):
            yield self._note("Clicking an item shows nothing new: the items are read in place.")
            return
        covers = bool(facts.get("covers_list"))
        close = facts.get("close") if facts.get("closed_by") == "close" else None
        key = "Escape" if covers and close is None and facts.get("closed_by") == "escape" else None
        if not facts.get("restored", True):
            await self._back_to_list(reload=covers)
        if covers and close is None and key is None:
            yield Log(
                level="warning",
                message="the details cover the list and neither a close control nor Escape "
                "closes them: items after the first may not be reachable",
            )
        if fell_back:
            yield self._note(f"Clicking an item itself does nothing, but its link `{target}` does.")
        where = facts.get("appeared")
        click_target = link if inside and link is not None else None
        self._click = {
            "behavior": behavior,
            "appeared": where,
            "close": close,
            "key": key,
            "covers": covers,
            "target": click_target,
        }
        yield self._note(
            {
                "navigates": f"Clicking an item opens its own page (content in `{where}`); "
                "going back returns to the list.",
                "shows_panel": f"Clicking an item shows its details in a panel (`{where}`) "
                + ("over the list." if covers else "while the list stays."),
                "inline": f"Clicking an item expands its details inside it (`{where}`).",
            }[behavior]
        )
        if click_target:
            yield self._note(f"The click goes to the item's link `{click_target}`.")
        if close:
            yield self._note(
                f"Their close control `{close}` must be clicked before the next item: until "
                "then the details block the list (a modal)."
            )
        elif key:
            yield self._note(
                f"Nothing in them closes them, but {key} does: it is pressed before the next "
                "item (until then the details block the list)."
            )

    async def _link_to_page(self) -> Phase[_LinkFound]:
        """The link in every item that leads to the page the task reads fields on ("from the
        author page"), chosen by what its address, classes and text name; None when the task
        names no such page (or the item's own page, which the item's link already is)."""
        assert self._list is not None
        thing = self.intent.item_page
        if not thing:
            yield _LinkFound(None)
            return
        item, siblings = self._list.item, self._list.siblings
        call = self._call("find_item_link", {"to": f"the {thing} page", "item": item})
        yield call
        began = time.monotonic()
        links = await self.page.evaluate(LINKS_JS, [item, 0])
        held: dict[str, int] = {}
        for selector in link_selectors(links, thing):
            held[selector] = await self.probes.count_in_items(item, siblings, selector)
            if held[selector] == self._list.count:
                yield tool_result(call, began, f"`{selector}` in each item", {"held": held})
                yield self._note(
                    f"The task reads {', '.join(self.intent.page_fields) or 'fields'} on the "
                    f"{thing} page: each item's link `{selector}` leads there."
                )
                yield _LinkFound(selector)
                return
        failure = f"no link in every item leads to the {thing} page"
        yield tool_result(call, began, failure, {"held": held}, ok=False)
        yield Log(level="warning", message=f"{failure}: its fields are not read")
        yield _LinkFound(None)

    async def _back_to_list(self, reload: bool = False) -> None:
        """Return to the list page if a probe left it elsewhere (`reload`: load it again even
        when the URL is the list's, e.g. under details that nothing closes)."""
        assert self._list is not None
        url = self._list_url
        if reload:
            await goto(self.page, url, wait_until="load", timeout=LOAD_TIMEOUT_MS)
        elif self.page.url != url:
            try:
                if await self.page.go_back(wait_until="load", timeout=LOAD_TIMEOUT_MS) is None:
                    await goto(self.page, url, wait_until="load", timeout=LOAD_TIMEOUT_MS)
            except PlaywrightError:
                await goto(self.page, url, wait_until="load", timeout=LOAD_TIMEOUT_MS)
            if self.page.url != url:
                await goto(self.page, url, wait_until="load", timeout=LOAD_TIMEOUT_MS)
        if self._form is not None and not await self.page.locator(self._list.item).count():
            await replay_form(self.page, self.url, self._form, self.wait)  # a form's result
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
        if self.intent.page_fields:  # the task reads only these there: the item keeps its own
            fields = {n: f for n, f in fields.items() if n not in self._item_fields}
        if self._page_link is not None and self.intent.item_page:
            fields = _owned_by(self.intent.item_page, fields)
            # The page is another thing's: the record's text stays the item's own.
            self._item_fields.setdefault("text", StrategyField(selector=":scope"))
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
        await self._item_click(index)
        if behavior == "navigates":
            await self.page.wait_for_url(
                lambda now: now != before, wait_until="load", timeout=LOAD_TIMEOUT_MS
            )
        async for look in settle(self.page, self.wait):
            if not look.done:
                yield Log(level="info", message=look.line(f"item {index + 1}'s details"))
        if index == 0:
            where = self._click["appeared"]
            target = f"{self._list.item} {where}" if behavior == "inline" else where
            events, _ = await self._probe("describe_element", {"selector": target})
            for event in events:
                yield event

    async def _item_click(self, index: int) -> None:
        """Click item `index` (its link, when the click goes there)."""
        assert self._list is not None
        target = self.page.locator(self._list.item).nth(index)
        if self._click.get("target"):
            target = target.locator(self._click["target"]).first
        await target.click(timeout=CLICK_TIMEOUT_MS)

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
            name: spec.model_copy(update={"selector": scoped(spec.selector, where)})
            for name, spec in found.items()
        }
        if behavior != "inline":  # the fields the task names, by the labels before them
            wanted = [n for n in self.intent.page_fields if field_key(n) not in fields]
            fields |= await labelled_fields(self.page, where, wanted)
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
            await self._item_click(index)
            await self._settle()
        elif behavior == "navigates":
            await self._back_to_list()
        elif self._click["close"]:
            await self.page.locator(self._click["close"]).first.click(timeout=CLICK_TIMEOUT_MS)
            await self._settle()
        elif self._click["key"]:
            await self.page.keyboard.press(self._click["key"])
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
            async for event in self._check_next_page():
                yield event
        elif facts.get("next_disabled"):
            yield self._note("A next-page control is shown disabled: this is the only page.")
        if facts.get("pagination") and not self._more.get("pagination"):
            yield self._note(
                f"A next-page control (`{facts['pagination']}`) was found but going to the "
                "next page failed: only this page's items are read."
            )
        elif not (facts.get("load_more") or facts.get("more_loaded") or facts.get("pagination")):
            yield self._note(
                "Scrolling loads no more items and there is no pagination or load-more "
                "control: every item is on this page."
            )

    async def _check_next_page(self) -> AsyncIterator[Event]:
        """Go to the next page once, as the recipe will: the page must show the list again, and
        its next-page control must be found there as the recipe looks for it. A control named
        only by its position is found by its text (NEXT_PAGE_TEXT) on every page."""
        assert self._list is not None
        more = self._more
        selector, text = more["pagination"], more.get("pagination_text")
        numbered = bool(more.get("pagination_numbered"))
        by_text = not more.get("pagination_stable", True) and not numbered and bool(text)
        call = self._call("check_next_page", {"selector": selector, "text": text})
        yield call
        began = time.monotonic()
        bindings = Bindings(
            LIST=self._list.container,
            LIST_ITEM=self._list.item,
            LIST_ITEM_SIBLINGS=self._list.siblings,
            NEXT_PAGE_BUTTON=selector,
            NEXT_PAGE_TEXT=text if by_text else None,
            NEXT_PAGE_NUMBERED=numbered,
        )
        actions = PageActions(self.page, bindings, wait=self.wait)
        url = self.page.url
        problem = None
        try:
            _, clicked = await actions.click_if_exists(NEXT_PAGE)
            if not clicked.get("changed"):
                problem = "clicking it did not change the list"
        except (HardFailure, CommandFailed, PlaywrightError) as exc:
            problem = first_line(exc)
        shown = again = 0
        if problem is None:
            shown, _ = await conditions.list_signature(self.page, bindings)
            found = [selector, bindings.NEXT_PAGE_TEXT, numbered]
            again = await self.page.evaluate(conditions.FIND_ENABLED_JS, found) >= 0
        await self._back_to_list(reload=self.page.url == url)
        if problem is not None:
            self._more = {**more, "pagination": None}
            yield tool_result(call, began, f"the next page failed: {problem}", ok=False)
            yield Log(level="warning", message=f"pagination dropped: {problem}")
            return
        how = (
            "the page number after the current one"
            if numbered
            else f'its text "{text}"'
            if by_text
            else f"`{selector}`"
        )
        output = f"the next page shows {shown} items; " + (
            f"its next-page control is found there again by {how}"
            if again
            else "it shows no next-page control (the last page, or only two pages)"
        )
        facts = {"items": shown, "found_again": again, "by_text": by_text, "numbered": numbered}
        yield tool_result(call, began, output, facts)
        self._more = {**more, "pagination_text": text if by_text else None}
        yield self._note(
            f"A next-page control (`{selector}`, found by {how}) pages the list; "
            f"the next page shows {shown} items."
        )

    # -- the strategy --------------------------------------------------------------------------

    async def _write(self) -> Strategy:
        assert self._list is not None
        behavior = self._click.get("behavior")
        where = self._click.get("appeared")
        details_loaded = self._loaded_by
        intent = self.intent
        self._notes.append(f"The task asks for {intent.describe()}.")
        load_more = self._more.get("load_more")
        return Strategy(
            understanding=list(self._notes),
            list_container=self._list.container,
            list_item=self._list.item,
            list_item_siblings=self._list.siblings,
            click_behavior=behavior,
            click_target=self._click.get("target"),
            details_panel=where,
            details_loaded=details_loaded,
            close_details=self._click.get("close"),
            close_key=self._click.get("key"),
            details_fields=self._details,
            item_fields=self._item_fields,
            pagination_button=self._more.get("pagination"),
            pagination_text=self._more.get("pagination_text"),
            pagination_numbered=bool(
                self._more.get("pagination") and self._more.get("pagination_numbered")
            ),
            load_more_button=load_more,
            scroll_loads_more=bool(self._more.get("more_loaded")) and not load_more,
            plan=self._plan_steps(intent),
            needed_generators=self._needed(intent),
        )

    def _needed(self, intent: TaskIntent) -> list[GeneratorName]:
        """The generators the task needs, and those whose fragments fill the form first."""
        needed = needed_generators(intent)
        if self._form is not None:
            kinds = {fragment.generator for fragment in self._form.fragments()}
            needed = [name for name in GENERATOR_NAMES if name in kinds or name in needed]
        return needed

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
        if self._form is not None:
            steps.insert(0, f"Fill the page's form first: {self._form.describe()}.")
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


def _owned_by(thing: str, fields: dict[str, StrategyField]) -> dict[str, StrategyField]:
    """Fields read on another thing's page named as that thing's ("born" on the author page
    -> "author_born"), so they never take the place of the item's own fields."""
    prefix = re.sub(r"\W+", "_", thing.lower()).strip("_")
    named = {}
    for name, spec in fields.items():
        if name == prefix:
            name = f"{prefix}_text"
        elif not name.startswith(f"{prefix}_"):
            name = f"{prefix}_{name}"
        named[name] = spec
    return named


def _facts(fields: dict[str, StrategyField]) -> dict[str, Any]:
    return {name: spec.as_binding() for name, spec in fields.items()}


def _fields_text(where: str, fields: dict[str, StrategyField]) -> str:
    if not fields:
        return f"No named fields found in {where}."
    lines = [f"Named fields in {where} (each verified in the page):"]
    lines += [
        f"- {name}: `{spec.selector}`"
        + (f" @{spec.attribute}" if spec.attribute else "")
        + (" (all)" if spec.all else "")
        for name, spec in fields.items()
    ]
    return "\n".join(lines)


def _spread(siblings: str | int | None) -> str:
    """How an item spreads over its siblings, for a line of text ("" when it does not)."""
    if siblings is None:
        return ""
    if isinstance(siblings, int):
        return f" + the next {siblings} sibling{'s' if siblings != 1 else ''}"
    return f" + the following `{siblings}` siblings"
