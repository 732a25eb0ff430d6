"""The next list item to process, found by identity: its link, else a hash of its text.

One evaluate finds the first shown item whose identity is not done yet and reads what is
needed before clicking it (ITEM_FIELDS, the details panel's current text), so each item costs
one round trip however long the list is. The done identities live in the page too (sent as a
delta each time; resent whole after a navigation), so a re-rendered, scrolled or paged list
maps its items back to the same identities and nothing is extracted twice.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import ElementHandle, Page

from tui_agent.web.recipe.extract import PRELUDE, field_spec
from tui_agent.web.recipe.format import Bindings

LABEL_LENGTH = 60

ITEMS = "[...(document.querySelector(arg.list)?.querySelectorAll(arg.item) ?? [])]"

# Text is gathered node by node, skipping an inline details panel inside the item so an item
# that expands in place keeps its identity. A link shared by several items names none.
NEXT_JS = f"""
(arg) => {{
  {PRELUDE}
  let done = window[arg.token];
  if (!done && !arg.all) return {{known: false}};
  if (!done) done = window[arg.token] = new Set();
  for (const key of arg.all || []) done.add(key);
  for (const key of arg.add) done.add(key);
  const hash = (text) => {{
    let h1 = 0xdeadbeef, h2 = 0x41c6ce57;
    for (let i = 0; i < text.length; i++) {{
      const c = text.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 2654435761);
      h2 = Math.imul(h2 ^ c, 1597334677);
    }}
    h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
    h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
    return (h2 >>> 0).toString(16).padStart(8, "0") + (h1 >>> 0).toString(16).padStart(8, "0");
  }};
  const textOf = (el) => {{
    const parts = [];
    const skip = (node) => node.matches("script, style, template") ||
      (arg.exclude && node.matches(arg.exclude));
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, {{
      acceptNode: (node) =>
        node.nodeType === 1 && skip(node) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT,
    }});
    while (walker.nextNode()) {{
      if (walker.currentNode.nodeType === 3) parts.push(walker.currentNode.data);
    }}
    return clean(parts.join(" "));
  }};
  const real = (a) => !/^\\s*(#|javascript:)/i.test(a.getAttribute("href"));
  const linkOf = (members) => {{
    if (members[0].matches("a[href]") && real(members[0])) return members[0].href;
    const link = allInMembers(members, "a[href]").find(real);
    return link ? link.href : null;
  }};
  const elements = {ITEMS};
  const groups = elements.map((el) => membersOf(el, arg.siblings, arg.item));
  const rows = [];
  elements.forEach((el, index) => {{
    if (visible(el)) rows.push([index, linkOf(groups[index])]);
  }});
  const links = new Map();
  for (const [, href] of rows) if (href) links.set(href, (links.get(href) || 0) + 1);
  const seen = new Map();
  const groupText = (members) => clean(members.map(textOf).join(" "));
  for (const [index, href] of rows) {{
    const el = elements[index];
    const text = href && links.get(href) === 1 ? null : groupText(groups[index]);
    let key = text === null ? "href:" + href : "text:" + hash(text);
    const repeat = (seen.get(key) || 0) + 1;
    seen.set(key, repeat);
    if (repeat > 1) key += "#" + repeat;
    if (done.has(key)) continue;
    window[arg.token + "_item"] = el;
    const [fields, missing] = readFields(groups[index], arg.fields);
    const panel = arg.panel && [...document.querySelectorAll(arg.panel)].find(visible);
    return {{
      known: true,
      shown: rows.length,
      next: {{
        index, key, href, fields, missing,
        label: (text ?? groupText(groups[index])).slice(0, {LABEL_LENGTH}),
        panel: panel ? panel.innerText : null,
      }},
    }};
  }}
  return {{known: true, shown: rows.length, next: null}};
}}
"""


@dataclass(frozen=True)
class ItemRef:
    """One shown list item: where it is in the list now, who it is, and what it showed."""

    index: int
    key: str
    href: str | None
    label: str
    fields: dict[str, Any] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    panel: str | None = None
    """The details panel's text when the item was picked (None: no panel shown)."""

    def describe(self) -> str:
        return f'"{self.label}"' if self.label else self.key


@dataclass
class NextItem:
    """How many items the list shows, and the first one not done (None: all done).

    `element` is that very element: acting on it after the list re-rendered fails ("not
    attached") instead of reaching whatever item took its place.
    """

    shown: int
    ref: ItemRef | None = None
    element: ElementHandle | None = None


class ItemFinder:
    """Finds the next unprocessed item of a list; `done(key)` marks one processed."""

    def __init__(self, page: Page, bindings: Bindings) -> None:
        self.page = page
        self.bindings = bindings
        self.keys: set[str] = set()
        self._unsent: list[str] = []
        self._token = f"__tuiAgentDone_{uuid.uuid4().hex[:8]}"

    def done(self, key: str) -> None:
        if key not in self.keys:
            self.keys.add(key)
            self._unsent.append(key)

    async def next(self) -> NextItem:
        b = self.bindings
        behaviour = b.CLICK_BEHAVIOR
        arg: dict[str, Any] = {
            "list": b.LIST,
            "item": b.LIST_ITEM,
            "siblings": b.LIST_ITEM_SIBLINGS,
            "exclude": b.DETAILS_PANEL if behaviour == "inline" else None,
            "panel": b.DETAILS_PANEL if behaviour == "shows_panel" else None,
            "fields": field_spec(b.ITEM_FIELDS),
            "token": self._token,
            "add": self._unsent,
            "all": None,
        }
        found = await self.page.evaluate(NEXT_JS, arg)
        if not found["known"]:  # a new document: send every done identity again
            found = await self.page.evaluate(NEXT_JS, {**arg, "add": [], "all": list(self.keys)})
        self._unsent = []
        row = found["next"]
        if row is None:
            return NextItem(shown=found["shown"])
        ref = ItemRef(
            index=row["index"],
            key=row["key"],
            href=row["href"],
            label=row["label"],
            fields=row["fields"],
            missing=row["missing"],
            panel=row["panel"],
        )
        handle = await self.page.evaluate_handle(f"() => window[{self._token + '_item'!r}]")
        return NextItem(shown=found["shown"], ref=ref, element=handle.as_element())
