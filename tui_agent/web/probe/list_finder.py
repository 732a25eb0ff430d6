"""Finding a page's repeated list: sibling subtrees with similar tag / class signatures.

Runs in the page (one `evaluate`): every element with three or more similar children is a
candidate, scored by item count, text, links and subtree size, and penalised inside
navigation, headers, footers and forms. Each candidate's item selector is checked with
`querySelectorAll` to match exactly the repeated items (count included).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.async_api import Page

DOM_HELPERS_JS = r"""
const SKIP_TAGS = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "META", "LINK",
  "svg", "SVG", "path", "IFRAME", "OPTION", "OPTGROUP", "DATALIST", "BR", "WBR"]);
const STATE_CLASS = new RegExp("^(is-|has-)?(active|selected|current|open|opened|expanded"
  + "|collapsed|hover|focus|focused|visited|disabled|enabled|hidden|visible|show|shown|checked"
  + "|loading|loaded|odd|even|first|last|new)$", "i");
const collapse = (s) => (s || "").replace(/\s+/g, " ").trim();
const cut = (s, n) => (s.length > n ? s.slice(0, n - 1) + "…" : s);
const esc = (s) => CSS.escape(s);
const skipped = (el) => SKIP_TAGS.has(el.tagName)
  || el.closest("svg, select, datalist, template, head") !== null;
const cleanId = (id) => !!id && /^[A-Za-z][\w-]*$/.test(id) && !/\d{3,}/.test(id)
  && id.length <= 40;
const cleanClass = (c) => /^-?[A-Za-z_][\w-]*$/.test(c) && !STATE_CLASS.test(c)
  && !/\d{4,}/.test(c) && !(/\d/.test(c) && /[A-Z]/.test(c))
  && !/^(css|sc|jsx|svelte|emotion|ng-|_)[\w-]*\d/.test(c) && c.length <= 40;
const classesOf = (el) => [...el.classList].filter(cleanClass);
const tagOf = (el) => el.tagName.toLowerCase();
const shown = (el) => (el.checkVisibility ? el.checkVisibility() : el.getClientRects().length > 0);
const simple = (el) => tagOf(el) + classesOf(el).slice(0, 3).map((c) => "." + esc(c)).join("");
const countIn = (root, sel) => {
  try { return root.querySelectorAll(sel).length; } catch (e) { return -1; }
};
const firstIn = (root, sel) => {
  try { return root.querySelector(sel); } catch (e) { return null; }
};
const quoted = (v) => '"' + v.replace(/["\\]/g, "\\$&") + '"';
const ATTRS = ["name", "role", "aria-label", "data-testid", "rel", "type", "title"];
// A selector matching exactly `el` inside `root` (the document unless given).
function uniqueSelector(el, root, depth) {
  root = root || document;
  depth = depth || 0;
  const one = (sel) => {
    try {
      const all = root.querySelectorAll(sel);
      return all.length === 1 && all[0] === el;
    } catch (e) { return false; }
  };
  if (cleanId(el.id) && one("#" + esc(el.id))) return "#" + esc(el.id);
  const tag = tagOf(el);
  const classes = classesOf(el);
  const options = [...classes.map((c) => tag + "." + esc(c)), ...classes.map((c) => "." + esc(c))];
  if (classes.length > 1) options.push(simple(el));
  for (const a of ATTRS) {
    const v = el.getAttribute(a);
    if (v && v.length <= 60) options.push(tag + "[" + a + "=" + quoted(v) + "]");
  }
  options.push(tag);
  const found = options.find(one);
  if (found) return found;
  const nth = tag + ":nth-of-type(" + nthOfType(el) + ")";
  const parent = el.parentElement;
  if (!parent || parent === root || depth > 6
      || (root === document && parent === document.documentElement)) {
    return root === document ? "body " + nth : nth;
  }
  const up = uniqueSelector(parent, root, depth + 1);
  const base = up + " > " + simple(el);
  return countIn(root, base) === 1 ? base : up + " > " + nth;
}
function nthOfType(el) {
  let n = 1;
  for (let s = el.previousElementSibling; s; s = s.previousElementSibling) {
    if (s.tagName === el.tagName) n++;
  }
  return n;
}
const matchesExactly = (sel, members) => {
  try {
    const all = document.querySelectorAll(sel);
    if (all.length !== members.size) return false;
    for (const el of all) if (!members.has(el)) return false;
    return true;
  } catch (e) { return false; }
};
const NAVIGATION = "nav, header, footer, menu, [role=navigation], [role=menu], [role=menubar], "
  + "[role=tablist]";
const PAGER_TEXT = /^[\d\s.,\u2026<>\u00ab\u00bb\u2039\u203a\u2190\u2192|-]*$/;
// The repeated-sibling candidates of the page, best first.
function listCandidates(limit) {
  const groupsOf = (parent) => {
    const byKey = new Map();
    for (const kid of parent.children) {
      if (SKIP_TAGS.has(kid.tagName)) continue;
      const classes = classesOf(kid).sort();
      const key = tagOf(kid) + "." + classes.join(".");
      if (!byKey.has(key)) byKey.set(key, { tag: tagOf(kid), classes, members: [] });
      byKey.get(key).members.push(kid);
    }
    const sorted = [...byKey.values()].sort((a, b) => b.members.length - a.members.length);
    const merged = [];
    for (const g of sorted) {
      const into = merged.find((m) => m.tag === g.tag
        && (m.classes.length === 0 ? g.classes.length === 0
          : g.classes.some((c) => m.classes.includes(c))));
      if (into) {
        into.members.push(...g.members);
        into.classes = into.classes.filter((c) => g.classes.includes(c));
      } else merged.push({ tag: g.tag, classes: [...g.classes], members: [...g.members] });
    }
    return merged.filter((g) => g.members.length >= 3);
  };
  const itemSelector = (parent, containerSel, g) => {
    const members = new Set(g.members);
    const classes = g.classes;
    const options = classes.map((c) => g.tag + "." + esc(c));
    if (classes.length > 1) options.push(g.tag + classes.map((c) => "." + esc(c)).join(""));
    const scoped = options.map((o) => containerSel + " > " + o);
    for (const sel of [...options, ...scoped, containerSel + " > " + g.tag]) {
      if (matchesExactly(sel, members)) return sel;
    }
    return containerSel + " > " + g.tag;
  };
  const raw = [];
  const parents = [document.body, ...document.body.querySelectorAll("*")];
  for (const parent of parents) {
    if (parent.children.length < 3 || skipped(parent)) continue;
    for (const g of groupsOf(parent)) raw.push({ parent, g });
  }
  const scored = raw.map(({ parent, g }) => {
    const m = g.members;
    const n = m.length;
    const texts = m.map((el) => collapse(el.textContent));
    const avgText = texts.reduce((s, t) => s + Math.min(t.length, 400), 0) / n;
    const size = (el) => Math.min(el.getElementsByTagName("*").length, 30);
    const avgDesc = m.reduce((s, el) => s + size(el), 0) / n;
    const linked = m.filter((el) => el.matches("a[href]") || el.querySelector("a[href]")).length;
    const images = m.filter((el) => el.matches("img") || el.querySelector("img")).length;
    const visible = m.filter(shown).length;
    const distinct = new Set(texts).size / n;
    let score = Math.log2(n + 1) * (1 + avgDesc) * (1 + avgText / 40)
      * (0.5 + 0.5 * linked / n + 0.2 * images / n) * (0.1 + 0.9 * visible / n)
      * (0.2 + 0.8 * distinct);
    if (parent.closest(NAVIGATION)) score *= 0.1;
    if (parent.closest("form, [role=search]")) score *= 0.3;
    if (texts.filter((t) => PAGER_TEXT.test(t)).length > n / 2) score *= 0.1;
    if (avgText < 3 && images === 0) score *= 0.1;
    return { parent, g, score, linked };
  }).sort((a, b) => b.score - a.score);
  const kept = [];
  for (const c of scored) {
    if (kept.length >= limit) break;
    if (c.score <= 0) continue;
    const nested = kept.some((k) => k.parent === c.parent
      || k.g.members.some((item) => item.contains(c.parent)));
    if (!nested) kept.push(c);
  }
  return kept.map(({ parent, g, score, linked }) => {
    const container = uniqueSelector(parent);
    const item = itemSelector(parent, container, g);
    const first = g.members[0];
    const inner = [...first.children].slice(0, 6).map(simple).join(", ");
    return {
      container, item, count: countIn(document, item), score,
      signature: simple(first) + (inner ? " > " + inner : ""),
      sample: cut(collapse(first.innerText || first.textContent), 120), links: linked,
    };
  });
}
"""

FIND_LISTS_JS = "(limit) => {\n" + DOM_HELPERS_JS + "\nreturn listCandidates(limit);\n}"


@dataclass(frozen=True)
class ListCandidate:
    """A repeated list: `item` matches exactly its `count` items, `container` their parent."""

    container: str
    item: str
    count: int
    signature: str
    """The first item's tag and classes, then its children's (`li.result > h3.title, p`)."""
    sample: str
    """The first item's text, cut short."""
    links: int
    """How many of the items hold (or are) a link."""


def candidate_from(raw: dict[str, Any]) -> ListCandidate:
    """A candidate from the in-page finder's JSON."""
    return ListCandidate(
        container=raw["container"],
        item=raw["item"],
        count=int(raw["count"]),
        signature=raw["signature"],
        sample=raw["sample"],
        links=int(raw["links"]),
    )


async def find_lists(page: Page, limit: int = 5) -> list[ListCandidate]:
    """The page's repeated lists, best first (at most `limit`); none on a page without one."""
    found = await page.evaluate(FIND_LISTS_JS, limit)
    return [candidate_from(raw) for raw in found if raw["count"] > 0]
