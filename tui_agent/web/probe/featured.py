"""An item shown apart before its list: a blog's newest post "featured" above the others, a
top result in a box of its own.

It is one element of the shape the list's items have (the item's tag, or its only child's),
before the list and outside it, holding most of the class names the items hold and a link
of the items' links' kind (same folder and suffix). When exactly one such element exists, the
list's item selector becomes `:is(TWIN, ITEM)`: one selector (field selectors still scope
under it), matching the twin first in page order and nothing more on pages without it; the
list's container becomes the closest element holding both.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from tui_agent.web.probe.list_finder import DOM_HELPERS_JS, ListCandidate

if TYPE_CHECKING:
    from playwright.async_api import Page

SHARED_CLASSES = 0.6
"""Share of the twin's inner class names the items must also hold."""

FEATURED_JS = (
    "({ item, container }) => {\n"
    + DOM_HELPERS_JS
    + f"const SHARED = {SHARED_CLASSES};\n"
    + r"""
const items = [...document.querySelectorAll(item)];
const box = document.querySelector(container);
if (items.length < 2 || !box) return null;
const shape = (el) => (el.children.length === 1 ? el.children[0] : el);
const innerClasses = (el) => new Set([...el.querySelectorAll("*")].flatMap(classesOf));
const kind = (a) => {
  let origin = "", path = (a.getAttribute("href") || "").split(/[?#]/)[0];
  try {
    const url = new URL(a.href, location.href);
    [origin, path] = [url.origin, url.pathname];
  } catch (e) { /* a page with no base (about:blank): the href as written */ }
  const suffix = (path.match(/\.[A-Za-z0-9]+$/) || [""])[0];
  return origin + path.replace(/[^/]*$/, "") + "*" + suffix;
};
const firstLink = (el) => el.querySelector("a[href]");
const linked = items.map(firstLink);
if (linked.some((a) => !a)) return null;
const kinds = new Set(linked.map(kind));
if (kinds.size !== 1) return null;
const itemKind = [...kinds][0];
const held = new Set(items.slice(0, 5).flatMap((el) => [...innerClasses(el)]));
const tag = tagOf(shape(items[0]));
const twins = [...document.querySelectorAll(tag)].filter((el) => {
  if (box.contains(el) || el.contains(box) || !shown(el)) return false;
  if (!(el.compareDocumentPosition(box) & Node.DOCUMENT_POSITION_FOLLOWING)) return false;
  if (el.closest("nav, header, footer, form, [role=navigation]")) return false;
  const own = [...innerClasses(el)];
  if (own.length < 2) return false;
  const shared = own.filter((c) => held.has(c)).length / own.length;
  const link = firstLink(el);
  return shared >= SHARED && link !== null && kind(link) === itemKind;
});
if (twins.length !== 1) return null;
const union = ":is(" + uniqueSelector(twins[0]) + ", " + item + ")";
const count = countIn(document, union);
let common = box.parentElement;
while (common && !common.contains(twins[0])) common = common.parentElement;
if (!common || count !== items.length + 1) return null;
const holder = common === document.body ? "body" : uniqueSelector(common);
return { item: union, count, container: holder };
}"""
)


async def with_featured(page: Page, found: ListCandidate) -> ListCandidate:
    """`found` with the item shown apart before it, when there is exactly one."""
    if found.siblings is not None:
        return found
    twin = await page.evaluate(FEATURED_JS, {"item": found.item, "container": found.container})
    if not twin:
        return found
    return dataclasses.replace(
        found, item=twin["item"], count=int(twin["count"]), container=twin["container"]
    )
