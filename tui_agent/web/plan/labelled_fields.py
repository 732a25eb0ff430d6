"""Fields the task names, read on a details page by the label written before their value.

`LABELLED_JS` looks, inside the details, for an element whose whole text is a wanted name
("Publisher:", "Priority"), and gives a selector for the value: the row holding label and value
(named by a class only it has there), read without the label, or the element right after a
label that has an id ("#h_priority + td"). `labelled_fields` turns what it found into fields.
"""

from __future__ import annotations

import re
from typing import Any

from playwright.async_api import Page

from tui_agent.web.plan.field_names import scoped
from tui_agent.web.plan.strategy import StrategyField

LABELLED_JS = r"""([root, names]) => {
  const scope = document.querySelector(root) || document.body;
  const norm = (t) => (t || "").replace(/\s+/g, " ").trim().replace(/[:\uff1a]\s*$/, "")
    .toLowerCase();
  const cleanClass = (c) => /^-?[A-Za-z_][\w-]*$/.test(c) && !/\d{4,}/.test(c);
  const cleanId = (id) => !!id && /^[A-Za-z][\w-]*$/.test(id);
  const found = {};
  for (const name of names) {
    const label = [...scope.querySelectorAll("label, th, dt, strong, b, span, td, div, p")]
      .find((el) => el.children.length === 0 && norm(el.textContent) === name.toLowerCase());
    if (!label) continue;
    let row = label.parentElement;
    while (row && row !== scope && norm(row.textContent) === norm(label.textContent)) {
      row = row.parentElement;
    }
    if (!row || row === scope) continue;
    let selector = null;
    for (let el = row; el && el !== scope && !selector; el = el.parentElement) {
      if (norm(el.textContent) !== norm(row.textContent)) break;  // holds no other field
      const own = [...el.classList].find((c) => cleanClass(c)
        && scope.querySelectorAll("." + CSS.escape(c)).length === 1);
      if (own) selector = "." + CSS.escape(own);
    }
    const next = label.nextElementSibling;
    if (selector) {
      found[name] = { selector, prefix: label.textContent.trim().replace(/[:\uff1a]\s*$/, "") };
    } else if (cleanId(label.id) && next) {
      found[name] = { selector: "#" + CSS.escape(label.id) + " + " + next.tagName.toLowerCase(),
        prefix: null };
    }
  }
  return found;
}"""
"""[details selector, names]: name -> {selector (inside the details), prefix (the label)}."""


def field_key(name: str) -> str:
    """A field name as written in a task, as a record's key: "birth date" -> "birth_date"."""
    return re.sub(r"\W+", "_", name.strip().lower()).strip("_")


async def labelled_fields(page: Page, where: str, names: list[str]) -> dict[str, StrategyField]:
    """The wanted fields found by their labels inside `where` (absolute selectors)."""
    if not names:
        return {}
    found: dict[str, Any] = await page.evaluate(LABELLED_JS, [where, names])
    return {
        field_key(name): StrategyField(
            selector=scoped(spec["selector"], where), prefix=spec["prefix"]
        )
        for name, spec in found.items()
    }
