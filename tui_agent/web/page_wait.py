"""Waiting for a page to render: its content and its network watched until both are quiet.

A page whose script fills the list seconds after `load` shows no spinner and no list for a
while; only its traffic (a request still open) or its DOM (still changing) say it is not done.
`watch(page)` counts the page's open requests from its creation (`Browser.page` calls it), and
`settle(page, cap)` waits until no content changed and no request was open for a moment, or
until `ready()` holds on a page that changed nothing for longer (a stream or a poll that never
ends), or until `cap` seconds passed. A page not ready yet is waited for past `patience` while
one of its timers (setTimeout, tracked by `instrument`'s init script) is due before the cap:
content a timer adds seconds after load comes with no request and no change before it. It
reports how the wait goes about every second, so a long wait is shown as it happens ("waiting
for the page to render: 4.2 s").
"""

from __future__ import annotations

import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Page, Request

WAIT_CAP = 15.0
"""Seconds a page is waited for at most (`--wait S`)."""
QUIET = 0.5
"""Seconds without a content change or an open request that make a page quiet."""
READY_QUIET = 1.5
"""Seconds without a content change after which a ready page is taken even with requests open."""
PATIENCE = 5.0
"""Seconds a page that is not ready may stay entirely quiet (no change, no request, no timer
due before the cap) before the wait gives up on it."""
LONG_REQUEST = 10.0
"""A request open this long is a stream or a long poll, not content still to come."""
POLL = 0.1
PROGRESS_EVERY = 1.0
WAITED_TYPES = frozenset({"document", "script", "xhr", "fetch", "stylesheet"})
"""Resource types whose requests hold a page back (images, fonts, media and pings do not)."""

INSTRUMENT_JS = r"""
(() => {
  if (window.__tuiTimers) return;
  // Pending one-shot timers (setTimeout) with their due times, for the page wait: content a
  // timer adds later is still to come. A timer set again by the callback of a timer with the
  // same delay or function (an animation tick, a poll) repeats: it never holds the wait.
  // And the elements a click listener was added to (a link with no address a script follows).
  const clickable = window.__tuiClickable = new WeakSet();
  const listen = EventTarget.prototype.addEventListener;
  const CLICKS = new Set(["click", "mousedown", "mouseup", "pointerdown", "pointerup"]);
  EventTarget.prototype.addEventListener = function (type, ...rest) {
    if (CLICKS.has(type) && this instanceof Element) clickable.add(this);
    return listen.call(this, type, ...rest);
  };
  const pending = new Map();
  const set = window.setTimeout, clear = window.clearTimeout;
  let running = null;
  window.setTimeout = function (fn, delay, ...rest) {
    if (typeof fn !== "function") return set.call(window, fn, delay, ...rest);
    const ms = Math.max(0, Number(delay) || 0);
    const repeats = !!running && (running.fn === fn || Math.abs(running.ms - ms) <= 1);
    const timer = { fn, ms, due: performance.now() + ms, repeats };
    const id = set.call(window, function (...args) {
      pending.delete(id);
      const outer = running;
      running = timer;
      try { return fn.apply(this, args); } finally { running = outer; }
    }, delay, ...rest);
    pending.set(id, timer);
    return id;
  };
  window.clearTimeout = function (id) {
    pending.delete(id);
    return clear.call(window, id);
  };
  // Seconds until the soonest pending timer that does not repeat (-1: none).
  window.__tuiTimers = () => {
    let soonest = -1;
    const now = performance.now();
    for (const timer of pending.values()) {
      const left = Math.max(0, timer.due - now) / 1000;
      if (!timer.repeats && (soonest < 0 || left < soonest)) soonest = left;
    }
    return soonest;
  };
})();
"""
"""An init script: the page's pending setTimeout timers, for `page_wait` (intervals and
animation frames are not tracked: they never end), and the elements given click listeners."""

# Content changes only (elements added or removed, text changed): attribute churn (animations,
# hover classes) does not keep a page from being quiet.
CHANGES_JS = """() => {
  let watch = window.__tuiContentChanges;
  if (!watch) {
    watch = window.__tuiContentChanges = { last: performance.now(), count: 0 };
    new MutationObserver(() => { watch.last = performance.now(); watch.count += 1; })
      .observe(document, { childList: true, subtree: true, characterData: true });
    return { quiet: 0, count: -1, timer: -1 };
  }
  const timer = window.__tuiTimers ? window.__tuiTimers() : -1;
  return { quiet: (performance.now() - watch.last) / 1000, count: watch.count, timer };
}"""


class Traffic:
    """The requests of one page that are still open, and when the last one started or ended."""

    def __init__(self, page: Page) -> None:
        self._open: dict[Request, float] = {}
        self.last_change = time.monotonic()
        page.on("request", self._started)
        page.on("requestfinished", self._ended)
        page.on("requestfailed", self._ended)

    def _started(self, request: Request) -> None:
        if request.resource_type in WAITED_TYPES:
            self._open[request] = self.last_change = time.monotonic()

    def _ended(self, request: Request) -> None:
        if self._open.pop(request, None) is not None:
            self.last_change = time.monotonic()

    def open_requests(self) -> int:
        """Requests open now, leaving out those open for LONG_REQUEST seconds or more."""
        now = time.monotonic()
        return sum(1 for began in self._open.values() if now - began < LONG_REQUEST)


_TRAFFIC: weakref.WeakKeyDictionary[Page, Traffic] = weakref.WeakKeyDictionary()


async def instrument(context: BrowserContext) -> None:
    """Have every page of `context` track its pending timers (and click listeners) from its
    first script on."""
    await context.add_init_script(INSTRUMENT_JS)


def watch(page: Page) -> Traffic:
    """The page's traffic, watched from now on (once per page)."""
    if page not in _TRAFFIC:
        _TRAFFIC[page] = Traffic(page)
    return _TRAFFIC[page]


@dataclass(frozen=True)
class Settling:
    """One look at a page being waited for; the last one has `done` set and says why."""

    elapsed: float
    requests: int
    """Requests open."""
    changed_ago: float
    """Seconds since the content last changed."""
    timer: float = -1.0
    """Seconds until the page's soonest pending timer is due (-1: none)."""
    done: bool = False
    why: str = ""
    """"quiet", "ready" (changed nothing for a while, requests still open) or "cap"."""

    def line(self, what: str = "the page to render") -> str:
        """ "waiting for the page to render: 4.2 s (1 request open)"."""
        detail = []
        if self.requests:
            detail.append(f"{self.requests} request{'s' if self.requests != 1 else ''} open")
        if self.changed_ago < QUIET:
            detail.append("content still changing")
        if self.timer >= 0:
            detail.append(f"a timer due in {self.timer:.1f} s")
        suffix = f" ({', '.join(detail)})" if detail else ""
        return f"waiting for {what}: {self.elapsed:.1f} s{suffix}"

    def outcome(self) -> str:
        """How the wait ended, in words."""
        took = f"{self.elapsed:.1f} s"
        if self.why == "cap":
            return f"stopped waiting after {took} (the cap): the page was still busy"
        if self.why == "ready":
            return f"rendered after {took} (requests still open, content unchanged)"
        return f"rendered after {took} (quiet)"


async def settle(
    page: Page,
    cap: float = WAIT_CAP,
    *,
    ready: Callable[[], Awaitable[bool]] | None = None,
    quiet: float = QUIET,
    patience: float = PATIENCE,
) -> AsyncIterator[Settling]:
    """Wait until the page is quiet (and `ready()`, if given), or `cap` seconds passed.

    Yields a progress look about every PROGRESS_EVERY seconds while waiting, then a last one
    with `done` set. A navigation meanwhile counts as a change. `ready` is asked again only
    when the content changed since it last said no (or a second passed); a page that stays
    entirely quiet for `patience` seconds without being ready ends the wait ("quiet"), unless
    a timer of its is due before the cap (then it is waited for).
    """
    import asyncio

    from playwright.async_api import Error

    traffic = watch(page)
    began = time.monotonic()
    shown = began
    asked: tuple[int, float] | None = None
    answer = False
    while True:
        now = time.monotonic()
        try:
            changes = await page.evaluate(CHANGES_JS)
        except Error:  # a new document is loading: that is a change
            changes = {"quiet": 0.0, "count": -1, "timer": -1.0}
        elapsed = time.monotonic() - began
        requests = traffic.open_requests()
        net_quiet = requests == 0 and now - traffic.last_change >= quiet
        timer = float(changes["timer"])
        look = Settling(elapsed, requests, changes["quiet"], timer)
        if changes["quiet"] >= quiet and (net_quiet or changes["quiet"] >= READY_QUIET):
            if ready is None:
                answer = True
            elif asked is None or asked[0] != changes["count"] or now - asked[1] >= 1.0:
                answer, asked = await ready(), (changes["count"], now)
            if answer and (net_quiet or ready is not None):
                yield Settling(elapsed, requests, changes["quiet"], timer, True, _why(net_quiet))
                return
            idle = min(changes["quiet"], now - traffic.last_change)
            awaited = timer >= 0 and elapsed + timer <= cap
            if net_quiet and idle >= patience and not awaited:
                yield Settling(elapsed, requests, changes["quiet"], timer, True, "quiet")
                return
        if elapsed >= cap:
            yield Settling(elapsed, requests, changes["quiet"], timer, True, "cap")
            return
        if now - shown >= PROGRESS_EVERY:
            shown = now
            yield look
        await asyncio.sleep(POLL)


def _why(net_quiet: bool) -> str:
    return "quiet" if net_quiet else "ready"


async def settled(
    page: Page,
    cap: float = WAIT_CAP,
    *,
    ready: Callable[[], Awaitable[bool]] | None = None,
    patience: float = PATIENCE,
) -> Settling:
    """`settle` without its progress: the last look."""
    last = None
    async for look in settle(page, cap, ready=ready, patience=patience):
        last = look
    assert last is not None
    return last
