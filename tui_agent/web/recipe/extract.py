"""Reading details in one round trip: the details' text, DETAILS_CONTENT and named fields.

A field's value is its element's visible text with whitespace collapsed, or an attribute
(`href` and `src` resolved to absolute URLs, as the browser resolves them); ":scope" names the
element itself. A selector that matches nothing gives None and is listed in `missing`.
"""

from __future__ import annotations

from typing import Any

from tui_agent.web.recipe.conditions import VISIBLE
from tui_agent.web.recipe.model import Bindings, FieldSelector

# Helpers shared by the scripts run in the page.
PRELUDE = (
    VISIBLE
    + """
  const clean = (text) => (text || "").replace(/\\s+/g, " ").trim();
  const pick = (base, selector) => {
    if (selector === ":scope") return base;
    const all = [...base.querySelectorAll(selector)];
    return all.find(visible) || all[0] || null;
  };
  const readFields = (base, spec) => {
    const fields = {};
    const missing = [];
    for (const [name, [selector, attribute]] of Object.entries(spec)) {
      const el = pick(base, selector);
      let value = null;
      if (el && !attribute) value = clean(el.innerText);
      else if (el && (attribute === "href" || attribute === "src") && attribute in el)
        value = el[attribute];
      else if (el) value = el.getAttribute(attribute);
      fields[name] = value === "" ? null : value;
      if (fields[name] === null) missing.push(name);
    }
    return [fields, missing];
  };
"""
)

# arg: {root (the item element, or null: the whole page), panel, content: [sel], fields}
EXTRACT_JS = f"""
(arg) => {{
  {PRELUDE}
  const root = arg.root || document.body;
  let scope = root;
  if (arg.panel) {{
    const inside = root.matches(arg.panel) ? root : pick(root, arg.panel);
    scope = inside || (arg.root ? root : null);
  }}
  if (!scope) return null;
  const [fields, missing] = readFields(scope, arg.fields);
  return {{
    text: (scope.innerText || "").trim(),
    content: arg.content.map((selector) => {{
      const el = pick(scope, selector);
      return el ? clean(el.innerText) : null;
    }}),
    fields,
    missing,
  }};
}}
"""


def field_spec(fields: dict[str, FieldSelector]) -> dict[str, list[str | None]]:
    return {name: [f.selector, f.attribute] for name, f in fields.items()}


def details_args(bindings: Bindings, root: Any = None) -> dict[str, Any]:
    """What EXTRACT_JS reads: inside the item element `root` (inline), or in the page."""
    return {
        "root": root,
        "panel": bindings.DETAILS_PANEL,
        "content": bindings.DETAILS_CONTENT,
        "fields": field_spec(bindings.DETAILS_FIELDS),
    }
