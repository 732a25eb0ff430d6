"""The planner's tools (seed 001): probe_click, describe_element and scroll_and_observe.

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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec

from tui_agent.events import ToolCall, ToolResult
from tui_agent.web.list_finder import DOM_HELPERS_JS, find_lists
from tui_agent.web.snapshot import dom_snapshot

if TYPE_CHECKING:
    from playwright.async_api import FloatRect, Page, Position, Request

CONTENT_HELPERS_JS = (
    DOM_HELPERS_JS
    + r"""
const within = (base, rel) => (base.includes(",") ? ":is(" + base + ")" : base) + " " + rel;
// The first selector (relative to `root`) whose first match inside root is `el`.
function relSelector(el, root) {
  const first = (sel) => firstIn(root, sel) === el;
  const tag = tagOf(el);
  const classes = classesOf(el);
  const options = [...classes.map((c) => "." + esc(c)), ...classes.map((c) => tag + "." + esc(c))];
  const prop = el.getAttribute("itemprop");
  if (prop) options.push("[itemprop=\"" + prop.replace(/["\\]/g, "\\$&") + "\"]");
  options.push(tag, tag + ":nth-of-type(" + nthOfType(el) + ")");
  if (el.parentElement && el.parentElement !== root) {
    const up = relSelector(el.parentElement, root);
    if (up) options.push(up + " > " + tag + ":nth-of-type(" + nthOfType(el) + ")");
  }
  return options.find(first) || null;
}
const LABELLED = /^[A-Z][\w ]{0,24}:\s*\S/;
// Candidate selectors for the meaningful content inside `root`, each tested in the page.
function contentSelectors(root, base, limit) {
  const out = [];
  const seen = new Set();
  for (const el of [...root.querySelectorAll("*")].slice(0, 800)) {
    if (out.length >= limit) break;
    if (skipped(el) || !shown(el) || el.closest("button, [role=button]")) continue;
    const tag = el.tagName;
    const text = collapse(el.textContent);
    let kind = null;
    let attribute = null;
    let label = null;
    if (/^H[1-6]$/.test(tag) || el.getAttribute("role") === "heading") kind = "heading";
    else if (tag === "A" && el.getAttribute("href")) { kind = "link"; attribute = "href"; }
    else if (tag === "IMG" && el.getAttribute("src")) { kind = "image"; attribute = "src"; }
    else if (tag === "TIME") kind = "date";
    else if (tag === "DD") {
      kind = "labelled";
      let dt = el.previousElementSibling;
      while (dt && dt.tagName !== "DT") dt = dt.previousElementSibling;
      label = dt ? collapse(dt.textContent) : null;
    } else if (LABELLED.test(text) && text.length < 120 && el.children.length <= 2) {
      kind = "labelled";
      label = text.split(":")[0];
    } else if (el.children.length === 0 && text
               && (classesOf(el).length || el.hasAttribute("itemprop"))) {
      kind = "value";
    }
    if (!kind || (!text && !attribute)) continue;
    const rel = relSelector(el, root);
    if (!rel || seen.has(rel) || (kind === "value" && rel.includes(":nth-of-type"))) continue;
    seen.add(rel);
    const selector = within(base, rel);
    const value = attribute && !text ? el.getAttribute(attribute) : text;
    out.push({
      selector, relative: rel, count: countIn(document, selector),
      relative_count: countIn(document, rel), in_element: countIn(root, rel),
      text: cut(value || "", 80), kind, attribute, label,
    });
  }
  return out;
}
"""
)

CHECK_JS = """(selector) => {
  try { return { count: document.querySelectorAll(selector).length, error: null }; }
  catch (e) { return { count: 0, error: String(e.message || e) }; }
}"""

INSTALL_JS = (
    "({ selector, item }) => {\n"
    + DOM_HELPERS_JS
    + r"""
const target = document.querySelector(selector);
let scope = target;
if (item) { try { scope = target.closest(item) || target; } catch (e) { scope = target; } }
const hidden = [];
for (const el of document.body.querySelectorAll("*")) {
  if (hidden.length >= 300) break;
  if (skipped(el) || shown(el) || (el.parentElement && !shown(el.parentElement))) continue;
  if (collapse(el.textContent) || el.querySelector("img")) hidden.push(el);
}
const state = { added: [], addedCount: 0, removed: 0, attributes: 0, texts: 0,
  last: performance.now(), title: document.title };
const observer = new MutationObserver((records) => {
  for (const r of records) {
    if (r.type === "childList") {
      for (const n of r.addedNodes) {
        if (n.nodeType !== 1 || SKIP_TAGS.has(n.tagName)) continue;
        state.added.push(n);
        state.addedCount += 1 + n.getElementsByTagName("*").length;
      }
      for (const n of r.removedNodes) {
        if (n.nodeType === 1) state.removed += 1 + n.getElementsByTagName("*").length;
      }
    } else if (r.type === "attributes") state.attributes += 1;
    else state.texts += 1;
  }
  state.last = performance.now();
});
observer.observe(document.documentElement,
  { childList: true, subtree: true, attributes: true, characterData: true });
window.__tuiProbe = { observer, state, target, scope, hidden, appeared: null };
return { scoped: !!item && scope.matches(item) };
}"""
)

QUIET_JS = """() => {
  const probe = window.__tuiProbe;
  return probe ? performance.now() - probe.state.last : -1;
}"""

ANALYZE_JS = (
    "({ item, list }) => {\n"
    + CONTENT_HELPERS_JS
    + r"""
const probe = window.__tuiProbe;
const { state, scope } = probe;
const isItem = (n) => !!list && n.matches(list);
const connected = state.added.filter((n) => n.isConnected);
const newItems = connected.filter((n) => n !== scope && isItem(n)).length;
const inOtherItem = (n) => !!list && !!n.closest(list) && !scope.contains(n);
const added = connected.filter((n) => !isItem(n) && !inOtherItem(n));
const top = added.filter((n) => !added.some((o) => o !== n && o.contains(n)));
const meaningful = top.filter((n) => shown(n)
  && (collapse(n.textContent) || n.querySelector("img")));
const revealed = probe.hidden.filter((el) => el.isConnected && shown(el));
const scopeLive = scope && scope.isConnected;
const nodes = [...meaningful, ...revealed];
const inside = scopeLive ? nodes.filter((n) => scope !== n && scope.contains(n)) : [];
const outside = nodes.filter((n) => !inside.includes(n) && !(scopeLive && n.contains(scope)));
const commonAncestor = (list) => {
  let a = list[0];
  while (a && !list.every((n) => a.contains(n))) a = a.parentElement;
  return a;
};
const pick = (list, stop) => {
  if (!list.length) return null;
  let el = list.length === 1 ? list[0] : commonAncestor(list);
  if (!el || el === document.body || el === document.documentElement || el === stop) {
    el = [...list].sort((a, b) => b.textContent.length - a.textContent.length)[0];
  }
  for (let a = el, up = 0; a && up < 3; a = a.parentElement, up++) {
    if (a === stop || a === document.body) break;
    if (cleanId(a.id) || classesOf(a).length) return a;
  }
  return el;
};
const panel = pick(outside, null);
const expanded = panel ? null : pick(inside, scope);
const el = panel || expanded;
let selector = null;
let absolute = null;
if (panel) {
  selector = uniqueSelector(panel);
  absolute = selector;
} else if (expanded) {
  selector = relSelector(expanded, scope) || uniqueSelector(expanded, scope);
  absolute = item ? within(item, selector) : uniqueSelector(expanded);
}
probe.appeared = el;
return {
  behavior: panel ? "shows_panel" : expanded ? "inline" : "nothing",
  selector, absolute,
  count: absolute ? countIn(document, absolute) : 0,
  text: el ? cut(collapse(el.innerText || el.textContent), 240) : "",
  content: el ? contentSelectors(el, absolute, 25) : [],
  added: state.addedCount, removed: state.removed, attributes: state.attributes,
  texts: state.texts, title_before: state.title, title: document.title,
  scope_live: !!scopeLive, new_items: newItems,
};
}"""
)

APPEARED_GONE_JS = (
    "() => {\n"
    + DOM_HELPERS_JS
    + """
const probe = window.__tuiProbe;
const el = probe && probe.appeared;
return !el || !el.isConnected || !shown(el);
}"""
)

CLEANUP_JS = """() => {
  const probe = window.__tuiProbe;
  if (probe) probe.observer.disconnect();
  delete window.__tuiProbe;
}"""

PAGE_MAIN_JS = (
    "() => {\n"
    + CONTENT_HELPERS_JS
    + r"""
const main = document.querySelector("main, [role=main]") || document.body;
const h1 = main.querySelector("h1") || document.querySelector("h1");
let best = null;
for (let a = h1 ? h1.parentElement : null; a && a !== main; a = a.parentElement) {
  if (a === document.body) break;
  if (cleanId(a.id) || classesOf(a).length) best = a;
}
best = best || main;
const selector = uniqueSelector(best);
return {
  selector, count: countIn(document, selector),
  heading: h1 ? cut(collapse(h1.textContent), 120) : "",
  text: cut(collapse(best.innerText || best.textContent), 240),
  content: contentSelectors(best, selector, 25),
};
}"""
)

DESCRIBE_JS = (
    "(selector) => {\n"
    + CONTENT_HELPERS_JS
    + r"""
const all = document.querySelectorAll(selector);
const el = all[0];
const kids = [...el.children].filter((k) => !SKIP_TAGS.has(k.tagName)).slice(0, 15);
const children = kids.map((kid) => {
  const rel = relSelector(kid, el) || "> " + tagOf(kid) + ":nth-of-type(" + nthOfType(kid) + ")";
  const text = cut(collapse(kid.innerText || kid.textContent), 80);
  const path = within(selector, rel);
  return { tag: tagOf(kid), selector: path, text, count: countIn(document, path) };
});
return {
  count: all.length, text: cut(collapse(el.innerText || el.textContent), 300),
  child_count: el.children.length, children, content: contentSelectors(el, selector, 30),
};
}"""
)

SCROLL_JS = (
    "({ target, item }) => {\n"
    + DOM_HELPERS_JS
    + r"""
const items = item ? document.querySelectorAll(item) : [];
let scroller = null;
if (target === "list" && items.length) {
  for (let a = items[items.length - 1].parentElement; a; a = a.parentElement) {
    if (a === document.body) break;
    const style = getComputedStyle(a);
    if (/(auto|scroll)/.test(style.overflowY) && a.scrollHeight > a.clientHeight + 2) {
      scroller = a;
      break;
    }
  }
}
if (items.length) items[items.length - 1].scrollIntoView({ block: "end" });
if (scroller) scroller.scrollTop = scroller.scrollHeight;
else window.scrollTo(0, document.scrollingElement.scrollHeight);
const atEnd = scroller
  ? Math.ceil(scroller.scrollTop + scroller.clientHeight) >= scroller.scrollHeight - 2
  : Math.ceil(window.scrollY + window.innerHeight) >= document.scrollingElement.scrollHeight - 2;
return { scroller: scroller ? uniqueSelector(scroller) : null, at_end: atEnd };
}"""
)

CONTROLS_JS = (
    "() => {\n"
    + DOM_HELPERS_JS
    + r"""
const ARROWS = "[\u203a\u00bb>\u2192]";
const NEXT = new RegExp("^(next|next page|next results|older|older posts)\\b|^" + ARROWS
  + "+$|\\bnext\\s*" + ARROWS + "*$", "i");
const MORE = /^(load|show|view|see)\s+more\b|^more(\s+(results|items|products|posts))?$/i;
const disabled = (el) => el.disabled || el.getAttribute("aria-disabled") === "true"
  || classesOf(el).some((c) => /disabled/i.test(c));
const CLICKABLE = "a[href], button, [role=button], input[type=button], input[type=submit]";
const controls = [...document.querySelectorAll(CLICKABLE)]
  .filter((el) => shown(el) && !disabled(el));
const label = (el) => collapse(el.innerText || el.value || el.getAttribute("aria-label") || "");
const found = (el) => el && { selector: uniqueSelector(el), text: cut(label(el), 60) };
const ariaNext = (el) => /^next\b/i.test(el.getAttribute("aria-label") || "");
const next = controls.find((el) => el.matches("[rel~=next]"))
  || controls.find((el) => NEXT.test(label(el)) || ariaNext(el));
const more = controls.find((el) => MORE.test(label(el)));
return { pagination: found(next), load_more: found(more) };
}"""
)

SETTLE_MIN = 0.3
SETTLE_QUIET_MS = 400
SETTLE_MAX = 3.0
GROWTH_WAIT = 1.5
SCROLL_ROUNDS = 3
CLICK_TIMEOUT_MS = 3000
LOAD_TIMEOUT_MS = 10000
NAVIGATION_WAIT = 5.0


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
            return _refusal(f"{exc}.")
        except Error as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return _refusal(f"{tool.__name__} failed in the page: {reason.rstrip('.')}.")

    return run


class Probes:
    """The tools over one page; `verified` collects what they proved."""

    def __init__(self, page: Page, verified: VerifiedSelectors | None = None) -> None:
        self.page = page
        self.verified = verified if verified is not None else VerifiedSelectors()
        self.item_selector: str | None = None
        """The list item selector, once a planner knows it (else the best list found)."""

    async def snapshot(self, max_tokens: int = 2500) -> str:
        """The page's compact outline for a model."""
        return await dom_snapshot(self.page, max_tokens)

    async def count(self, selector: str) -> int:
        """How many elements match `selector` (0 when it is not valid CSS); records >= 1."""
        found = await self.page.evaluate(CHECK_JS, selector)
        self.verified.add(selector, found["count"], "count")
        return int(found["count"])

    @_refusing
    async def probe_click(self, selector: str) -> ProbeResult:
        """Click the first match and report what the click did, then restore the page."""
        from playwright.async_api import Error

        matched = await self._matches(selector, "probe_click")
        run = _Recorder(self.verified, "probe_click")
        run.note(selector, matched)
        item = await self._item_selector()
        url = self.page.url
        target = self.page.locator(selector).first
        with contextlib.suppress(Error):
            await target.scroll_into_view_if_needed(timeout=CLICK_TIMEOUT_MS)
            await asyncio.sleep(SETTLE_MIN)
        scoped = await self.page.evaluate(INSTALL_JS, {"selector": selector, "item": item})
        box = await target.bounding_box()
        with _PageWatch(self.page) as watch:
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
        }
        for tab in watch.popups:
            facts["new_tab"] = await _close_tab(tab)
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
        run = _Recorder(self.verified, "describe_element")
        run.note(selector, count)
        content = run.content(found["content"])
        for child in found["children"]:
            run.note(child["selector"], child["count"])
        shown = len(found["children"])
        lines = [
            f"`{selector}` matches {_plural(count, 'element')}. "
            f'The first one reads: "{found["text"]}"',
            f"It has {_plural(found['child_count'], 'direct child', 'direct children')}"
            + (f" (the first {shown} shown):" if shown < found["child_count"] else ":"),
        ]
        lines += [f'- {c["tag"]} `{c["selector"]}`: "{c["text"]}"' for c in found["children"]]
        lines.append(_content_lines(content))
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
        run = _Recorder(self.verified, "scroll_and_observe")
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
        controls = await self.page.evaluate(CONTROLS_JS)
        facts: dict[str, Any] = {
            "item_selector": item,
            "before": before,
            "after": after,
            "more_loaded": after > before,
            "at_end": at_end,
            "pagination": None,
            "load_more": None,
        }
        for key in ("pagination", "load_more"):
            if controls[key] and run.note(
                controls[key]["selector"], await self._quiet_count(controls[key]["selector"])
            ):
                facts[key] = controls[key]["selector"]
        await self.page.evaluate("() => window.scrollTo(0, 0)")
        if scroller:
            where = f"the list's own scroll box `{scroller}`"
        elif target == "list":
            where = "the page (the list has no scroll box of its own)"
        else:
            where = "the page"
        lines = [f"Scrolled {where} to the end ({_plural(rounds, 'time')})."]
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
        lines += [_control_line("Pagination control", controls["pagination"], facts["pagination"])]
        lines += [_control_line("Load-more button", controls["load_more"], facts["load_more"])]
        return ProbeResult(text="\n".join(lines), facts=facts, verified=run.verified)

    async def call(self, name: str, arguments: dict[str, Any]) -> ProbeResult:
        """Run the tool `name` (snake_case or the spec's camelCase); ok=False for bad calls."""
        tool = _snake(name)
        if tool not in TOOLS:
            return _refusal(f"Unknown tool {name!r}: the tools are {', '.join(TOOLS)}.")
        if not isinstance(arguments, dict):
            return _refusal(f"{tool} needs its arguments as a JSON object.")
        if tool == "scroll_and_observe":
            return await self.scroll_and_observe(str(arguments.get("target") or "page"))
        selector = arguments.get("selector")
        if not isinstance(selector, str) or not selector.strip():
            return _refusal(f"{tool} needs a `selector` argument (a CSS selector).")
        method = self.probe_click if tool == "probe_click" else self.describe_element
        return await method(selector.strip())

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

    async def _settle(self, watch: _PageWatch | None = None) -> bool:
        """Wait until the page is quiet; True when the click loaded another document.

        A navigation the click started (seen by `watch`) is waited for even when the old
        document stays quiet meanwhile, up to NAVIGATION_WAIT seconds.
        """
        from playwright.async_api import Error

        loop = asyncio.get_running_loop()
        start = loop.time()
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
            if pending:
                continue
            if (quiet >= SETTLE_QUIET_MS and elapsed >= SETTLE_MIN) or elapsed >= SETTLE_MAX:
                return False

    async def _after_navigation(
        self, run: _Recorder, facts: dict[str, Any], selector: str, url: str, list_selector: str
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
            f"Clicked the first of {_plural(facts['matched'], 'match', 'matches')} `{selector}`. "
            f"The URL changed: the browser navigated to {facts['url']} "
            f"(title {facts['title']!r}, main heading {landed['heading']!r}).",
            f"The detail page's content is in `{landed['selector']}` "
            f'({landed["count"]} match): "{landed["text"]}"',
            _content_lines(facts["content_selectors"]),
            _back_line(back, list_selector),
        ]
        return "\n".join(lines)

    async def _return_to(self, url: str, list_selector: str) -> int:
        """Go back to the list page `url`; how many list items are there again (0: not)."""
        from playwright.async_api import Error

        with contextlib.suppress(Error):
            await self.page.go_back(wait_until="load", timeout=LOAD_TIMEOUT_MS)
        if self.page.url != url:
            try:
                await self.page.goto(url, wait_until="load", timeout=LOAD_TIMEOUT_MS)
            except Error:
                return 0
        return await self._wait_growth(list_selector, 0)

    async def _after_change(
        self,
        run: _Recorder,
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
        facts["changes"] += _changes(found)
        lines = [
            f"Clicked the first of {_plural(facts['matched'], 'match', 'matches')} `{selector}`."
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
            lines.append(_content_lines(facts["content_selectors"]))
        lines.append(await self._restore(facts, selector, box))
        return "\n".join(lines)

    async def _after_soft_navigation(
        self,
        run: _Recorder,
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
        facts["changes"] += [*_changes(found), "the list left the page"]
        back = await self._return_to(url, item)
        facts["restored"] = back > 0
        lines = [
            f"Clicked the first of {_plural(facts['matched'], 'match', 'matches')} `{selector}`. "
            f"The URL changed to {facts['url']} and the list left the page (the page's script "
            "showed another view without loading a new document).",
        ]
        if found["absolute"]:
            lines.append(
                f"The new view's content is in `{found['absolute']}` "
                f'({found["count"]} match): "{found["text"]}"'
            )
        lines += [_content_lines(facts["content_selectors"]), _back_line(back, item)]
        return "\n".join(lines)

    async def _restore(self, facts: dict[str, Any], selector: str, box: FloatRect | None) -> str:
        """Undo an inline expansion (click again) or a panel (Escape); say how it went."""
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
                await self.page.keyboard.press("Escape")
                await self._settle()
                facts["restored"] = await self.page.evaluate(APPEARED_GONE_JS)
                return (
                    "Pressed Escape: the panel closed (restored)."
                    if facts["restored"]
                    else "Pressed Escape, but the panel stayed open (not restored); "
                    "describe_element can read it now."
                )
            return "Nothing to restore."
        finally:
            await self.page.evaluate(CLEANUP_JS)

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


class _PageWatch:
    """What a click started besides DOM changes: main-frame navigations and new tabs."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.navigating = False
        self.popups: list[Page] = []

    def _on_request(self, request: Request) -> None:
        if request.is_navigation_request() and request.frame == self.page.main_frame:
            self.navigating = True

    def _on_page(self, page: Page) -> None:
        self.popups.append(page)

    def __enter__(self) -> _PageWatch:
        self.page.on("request", self._on_request)
        self.page.context.on("page", self._on_page)
        return self

    def __exit__(self, *_exc: object) -> None:
        self.page.remove_listener("request", self._on_request)
        self.page.context.remove_listener("page", self._on_page)


async def _close_tab(tab: Page) -> str:
    """Close a tab the click opened; the URL it was loading."""
    from playwright.async_api import Error

    with contextlib.suppress(Error):
        await tab.wait_for_load_state("domcontentloaded", timeout=CLICK_TIMEOUT_MS)
    url = tab.url
    with contextlib.suppress(Error):
        await tab.close()
    return url


class _Recorder:
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


def _changes(found: dict[str, Any]) -> list[str]:
    changes = []
    if found["added"] or found["removed"]:
        changes.append(f"{found['added']} elements added, {found['removed']} removed")
    if found["attributes"]:
        changes.append(f"{_plural(found['attributes'], 'attribute change')}")
    if found["texts"]:
        changes.append(f"{_plural(found['texts'], 'text change')}")
    if found["title"] != found["title_before"]:
        changes.append(f"title changed from {found['title_before']!r} to {found['title']!r}")
    if not found["scope_live"]:
        changes.append("the clicked element was removed from the page")
    if found["new_items"]:
        changes.append(f"{_plural(found['new_items'], 'new list item')} loaded")
    return changes


def _back_line(back: int, list_selector: str) -> str:
    if back:
        return f"Went back: the list is there again ({_plural(back, 'item')})."
    return (
        f"Went back, but the list (`{list_selector}`) did not come back: "
        "the page state is not restored."
    )


def _content_lines(content: list[dict[str, Any]]) -> str:
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


def _control_line(what: str, control: dict[str, str] | None, verified: str | None) -> str:
    if control is None or verified is None:
        return f"{what}: none found."
    return f'{what}: `{verified}` ("{control["text"]}").'


def _plural(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else many or one + 's'}"


def _refusal(text: str) -> ProbeResult:
    return ProbeResult(text=text, facts={"error": text}, ok=False)


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name.strip()).lower()


TOOLS = ("probe_click", "describe_element", "scroll_and_observe")

SELECTOR_PARAMETER = {
    "type": "object",
    "properties": {
        "selector": {
            "type": "string",
            "description": "A CSS selector (querySelectorAll syntax); the first match is used.",
        }
    },
    "required": ["selector"],
}

TOOL_SPECS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "probe_click",
            "description": (
                "Click the first element matching a CSS selector, the way a user would, and "
                "report what happened: whether the URL changed (the page navigates: the detail "
                "page's content container and verified content selectors are reported, then "
                "the browser goes back), whether a details panel appeared outside the item "
                "(with its verified selector), whether content expanded inside the clicked "
                "item (inline), or nothing. Also lists other changes and whether the page was "
                "restored afterwards. Use it on a list item to learn the click behaviour."
            ),
            "parameters": SELECTOR_PARAMETER,
        },
    },
    {
        "type": "function",
        "function": {
            "name": "describe_element",
            "description": (
                "Describe the first element matching a CSS selector: how many elements match, "
                "its text, its direct children with selectors, and VERIFIED CONTENT SELECTORS "
                "for the meaningful content inside it (headings, class-named values, links, "
                "images, labelled values such as dt/dd), each tested in the page with its "
                "match count. Only selectors verified by a tool may appear in the strategy."
            ),
            "parameters": SELECTOR_PARAMETER,
        },
    },
    {
        "type": "function",
        "function": {
            "name": "scroll_and_observe",
            "description": (
                "Scroll the page (or the list's own scroll box) to the end a few times and "
                "report the list item count before and after (does scrolling load more "
                "items?), whether the end was reached, and any pagination control (Next) or "
                "load-more button, with verified selectors."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "target": {
                        "type": "string",
                        "enum": ["page", "list"],
                        "description": "Scroll the whole page, or the list's scroll container.",
                    }
                },
                "required": ["target"],
            },
        },
    },
]


async def traced(
    probes: Probes, name: str, arguments: dict[str, Any], call_id: str, step: int = 0
) -> tuple[ToolCall, ToolResult, ProbeResult]:
    """Run one tool call; its ToolCall / ToolResult events and the result."""
    recorded = dict(arguments) if isinstance(arguments, dict) else {"arguments": arguments}
    call = ToolCall(call_id=call_id, name=name, arguments=recorded, step=step)
    start = time.monotonic()
    result = await probes.call(name, arguments)
    outcome = ToolResult(
        call_id=call_id,
        name=name,
        output=result.text,
        facts={**result.facts, "verified": dict(result.verified)},
        ok=result.ok,
        duration=time.monotonic() - start,
    )
    return call, outcome, result
