"""Page conditions and list changes, checked in the page (one round trip when already true).

`exists` means a matching element is shown, `gone` that none is. Waits poll on animation
frames inside the page and survive navigations, as Playwright's `wait_for_function` does.
"""

from __future__ import annotations

from typing import Any

from playwright.async_api import Page

from tui_agent.web.page_js import CONTROL_WORDS_JS
from tui_agent.web.recipe.format import Bindings, Condition

# Shown as Playwright means it: rendered, not visibility:hidden, and a non-empty box.
VISIBLE = """const visible = (el) => {
  if (!el.checkVisibility({visibilityProperty: true})) return false;
  const box = el.getBoundingClientRect();
  return box.width > 0 && box.height > 0;
};"""

# [exists, selector, scope element | null, panel selector | null, its text before]
HOLDS_JS = f"""
([exists, selector, scope, panel, before]) => {{
  {VISIBLE}
  const shown = [...(scope || document).querySelectorAll(selector)].some(visible);
  if (shown !== exists) return false;
  if (!panel) return true;
  const current = [...document.querySelectorAll(panel)].find(visible);
  const text = current ? current.innerText : "";
  return text.trim() !== "" && text !== before;
}}
"""

SIGNATURE = """
  const root = document.querySelector(list);
  const all = root ? root.querySelectorAll(item) : [];
  const key = (el) => {
    if (!el) return "";
    const link = el.matches("a[href]") ? el : el.querySelector("a[href]");
    return link ? link.href : el.textContent.slice(0, 200);
  };
  const signature = [all.length, key(all[0]) + "|" + key(all[all.length - 1])];
"""
SIGNATURE_JS = f"([list, item]) => {{ {SIGNATURE} return signature; }}"
CHANGED_JS = f"""
([list, item, count, ends]) => {{
  {SIGNATURE}
  return signature[0] > 0 && (signature[0] !== count || signature[1] !== ends);
}}
"""

SCROLL_JS = f"""
async ([list, item, target, nudge]) => {{
  {SIGNATURE}
  const scroller = target === "list" && root ? root : document.scrollingElement;
  if (nudge) {{
    scroller.scrollTop = Math.max(0, scroller.scrollTop - scroller.clientHeight);
    await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  }}
  if (all.length) all[all.length - 1].scrollIntoView({{block: "end"}});
  scroller.scrollTop = scroller.scrollHeight;
}}
"""

# [selector, text | null, numbered]: the index among the selector's matches of the shown,
# enabled control to click (-1: none). With a text or `numbered`, the next-page control is
# picked among them by its label (see page_js.nextControl).
FIND_ENABLED_JS = f"""
([selector, text, numbered]) => {{
  {VISIBLE}
  {CONTROL_WORDS_JS}
  const all = [...document.querySelectorAll(selector)];
  const strict = !!text || numbered;
  const usable = all.filter((el) => visible(el) && !looksDisabled(el, strict));
  if (!strict) return usable.length ? all.indexOf(usable[0]) : -1;
  const index = nextControl(usable, text || "", numbered);
  return index < 0 ? -1 : all.indexOf(usable[index]);
}}
"""

# {selector, text, scope}: the first shown match of selector (inside scope, else the page)
# whose label reads `text` (see page_js.normalLabel), or null.
BY_TEXT_JS = f"""
(arg) => {{
  {VISIBLE}
  {CONTROL_WORDS_JS}
  const wanted = normalLabel(arg.text);
  return [...(arg.scope || document).querySelectorAll(arg.selector)]
    .find((el) => visible(el) && normalLabel(labelOf(el)) === wanted) || null;
}}
"""

Signature = tuple[int, str]


def _args(
    condition: Condition, scope: Any = None, panel: tuple[str, str | None] | None = None
) -> list[Any]:
    exists = condition.exists is not None
    selector = condition.exists if exists else condition.gone
    panel_selector, before = panel if panel else (None, None)
    return [exists, selector, scope, panel_selector, before]


async def wait(
    page: Page,
    condition: Condition,
    timeout: int,
    *,
    scope: Any = None,
    panel: tuple[str, str | None] | None = None,
) -> None:
    """Wait until `condition` holds (inside `scope`, an element handle, if given).

    With `panel` (selector, text before a click) the shown panel must also have new text.
    Raises Playwright's TimeoutError after `timeout` milliseconds.
    """
    await page.wait_for_function(
        HOLDS_JS, arg=_args(condition, scope, panel), timeout=timeout, polling="raf"
    )


async def holds(page: Page, condition: Condition) -> bool:
    return bool(await page.evaluate(HOLDS_JS, _args(condition)))


async def list_signature(page: Page, bindings: Bindings) -> Signature:
    """How many items the list shows, and who its first and last are."""
    count, ends = await page.evaluate(SIGNATURE_JS, [bindings.LIST, bindings.LIST_ITEM])
    return count, ends


async def wait_list_changed(
    page: Page, bindings: Bindings, before: Signature, timeout: int
) -> None:
    """Wait until the list shows items and they are not the ones of `before`."""
    arg = [bindings.LIST, bindings.LIST_ITEM, *before]
    await page.wait_for_function(CHANGED_JS, arg=arg, timeout=timeout, polling="raf")


async def scroll(page: Page, bindings: Bindings, target: str, *, nudge: bool = False) -> None:
    """Scroll the list container or the page to its end (after a step back up, if `nudge`)."""
    await page.evaluate(SCROLL_JS, [bindings.LIST, bindings.LIST_ITEM, target, nudge])
