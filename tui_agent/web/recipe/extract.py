"""Reading details in one round trip: the details' text, DETAILS_CONTENT and named fields.

A field's value is its element's visible text with whitespace collapsed (less a `prefix`
label written before it), or an attribute (`href` and `src` resolved to absolute URLs, as the
browser resolves them); ":scope" names the element itself; an item spread over sibling
elements is read in all of them. A field read from `all` its matches is the list of their
values (each once, in page order). A selector that matches nothing gives None and is listed
in `missing`.
"""

from __future__ import annotations

from typing import Any

from tui_agent.web.page_js import MEMBERS_JS
from tui_agent.web.recipe.conditions import VISIBLE
from tui_agent.web.recipe.format import Bindings, FieldSelector

# Helpers shared by the scripts run in the page.
PRELUDE = (
    VISIBLE
    + MEMBERS_JS
    + """
  const clean = (text) => (text || "").replace(/\\s+/g, " ").trim();
  // The first shown match (else the first) in `base`: an element, or an item's elements.
  const pick = (base, selector) => {
    const all = allInMembers(Array.isArray(base) ? base : [base], selector);
    return all.find(visible) || all[0] || null;
  };
  // A value written after its label in the same element ("Año: 2019" -> "2019"): the text
  // after the label, or null when the text does not begin with it.
  const afterLabel = (text, prefix) => {
    const label = clean(prefix).replace(/[:\uff1a\\s]+$/u, "").toLowerCase();
    const head = text.slice(0, label.length).toLowerCase();
    const rest = text.slice(label.length);
    if (head !== label || !/^\\s*[:\uff1a]/u.test(rest)) return null;
    return rest.replace(/^\\s*[:\uff1a]\\s*/u, "") || null;
  };
  const BLOCKS = "div, p, li, ul, ol, dl, table, section, article";
  // The innermost element of `base` whose text is "<label>: <value>" (the field moved, or
  // fields before it are missing).
  const byLabel = (base, prefix) => {
    const all = allInMembers(Array.isArray(base) ? base : [base], "*")
      .filter((el) => visible(el) && !el.querySelector(BLOCKS)
        && afterLabel(clean(el.innerText), prefix) !== null);
    return all.find((el) => !all.some((other) => other !== el && el.contains(other))) || null;
  };
  const valueOf = (el, attribute) => {
    if (!attribute) return clean(el.innerText);
    if ((attribute === "href" || attribute === "src") && attribute in el) return el[attribute];
    return el.getAttribute(attribute);
  };
  // Every shown match's value (each once, in page order), or null when none has one.
  const readAll = (base, selector, attribute) => {
    const all = allInMembers(Array.isArray(base) ? base : [base], selector);
    const shown = all.filter(visible);
    const read = (shown.length ? shown : all).map((el) => valueOf(el, attribute));
    const values = [...new Set(read.filter((v) => v))];
    return values.length ? values : null;
  };
  const readFields = (base, spec) => {
    const fields = {};
    const missing = [];
    for (const [name, [selector, attribute, prefix, every]] of Object.entries(spec)) {
      let el = every ? null : pick(base, selector);
      let value = null;
      if (every) value = readAll(base, selector, attribute);
      else if (prefix && !attribute) {
        if (!el || afterLabel(clean(el.innerText), prefix) === null) el = byLabel(base, prefix);
        if (el) value = afterLabel(clean(el.innerText), prefix);
      } else if (el) value = valueOf(el, attribute);
      fields[name] = value === "" ? null : value;
      if (fields[name] === null) missing.push(name);
    }
    return [fields, missing];
  };
"""
)

# arg: {root (the item element, or null: the whole page), item, siblings (the item's sibling
# members), panel, content: [sel], fields}
EXTRACT_JS = f"""
(arg) => {{
  {PRELUDE}
  const root = arg.root || document.body;
  let scope = arg.root ? membersOf(root, arg.siblings, arg.item) : [root];
  if (arg.panel) {{
    const inside = root.matches(arg.panel) ? root : pick(scope, arg.panel);
    scope = inside ? [inside] : (arg.root ? scope : null);
  }}
  if (!scope) return null;
  const [fields, missing] = readFields(scope, arg.fields);
  return {{
    text: membersText(scope).trim(),
    content: arg.content.map((selector) => {{
      const el = pick(scope, selector);
      return el ? clean(el.innerText) : null;
    }}),
    fields,
    missing,
  }};
}}
"""


def field_spec(fields: dict[str, FieldSelector]) -> dict[str, list[str | bool | None]]:
    """The fields as readFields takes them: [selector, attribute, prefix, all]."""
    return {name: [f.selector, f.attribute, f.prefix, f.all] for name, f in fields.items()}


def details_args(bindings: Bindings, root: Any = None) -> dict[str, Any]:
    """What EXTRACT_JS reads: inside the item element `root` (inline), or in the page."""
    return {
        "root": root,
        "item": bindings.LIST_ITEM,
        "siblings": bindings.LIST_ITEM_SIBLINGS,
        "panel": bindings.DETAILS_PANEL,
        "content": bindings.DETAILS_CONTENT,
        "fields": field_spec(bindings.DETAILS_FIELDS),
    }
