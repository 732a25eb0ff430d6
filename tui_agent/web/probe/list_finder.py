"""Finding a page's repeated list: sibling subtrees with similar tag / class signatures.

Runs in the page (one `evaluate`): every element with three or more similar children is a
candidate, scored by item count, text, links and subtree size, and penalised inside
navigation, headers, footers, sidebars and forms. Siblings that repeat as a unit (a title row
and a tag row, a `dt` and its `dd`s, a heading and its paragraphs) are one item each; members
that are really controls (a pager row, "Next", page numbers) are never items. Each
candidate's item selector is checked with `querySelectorAll` to match exactly the repeated
items (count included), refined by what the items hold or lack when their tag and classes
alone do not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tui_agent.web.page_js import MEMBERS_JS

if TYPE_CHECKING:
    from playwright.async_api import Page

DOM_HELPERS_JS = (
    MEMBERS_JS
    + r"""
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
const SIDEBAR = "aside, [role=complementary]";
const PAGER_TEXT = /^[\d\s.,\u2026<>\u00ab\u00bb\u2039\u203a\u2190\u2192|-]*$/;
const PAGER_WORDS = new RegExp("^(?:(?:prev|previous|next|first|last|page|more|older|newer"
  + "|anterior|siguiente|primera|\u00faltima|p\u00e1gina|pr\u00e9c\u00e9dente?|suivante?"
  + "|premi\u00e8re|derni\u00e8re|zur\u00fcck|weiter|vorherige|n\u00e4chste|seite|erste|letzte"
  + "|pr\u00f3xim[ao]|seguinte|primeira|precedente|successiv[ao]|\\d+)[\\s|\u00b7\u2022:.,]*)+$",
  "i");
const ARROW_MARKS = /[\u2190\u2192\u00ab\u00bb\u2039\u203a<>]/g;
// A list member that is really a control: a pager row, "Next", "Load more", a page's numbers.
const controlLike = (members) => {
  const text = collapse(membersText(members));
  if (members.some((m) => m.matches("[role=navigation]")
      || m.querySelector("[rel~=next], [rel~=prev], [aria-label*=pagination i]"))) return true;
  if (!text) return false;
  if (PAGER_TEXT.test(text)) return true;
  const bare = text.replace(ARROW_MARKS, " ").replace(/\s+/g, " ").trim();
  return (!bare || PAGER_WORDS.test(bare)) && text.length <= 60;
};
const SIDE_NAME = /(^|[-_\s])(sidebar|side-bar|sidenav|side-nav)([-_\s]|$)/i;
const inSidebar = (el) => {
  if (el.closest(SIDEBAR)) return true;
  for (let a = el; a && a !== document.body; a = a.parentElement) {
    if (SIDE_NAME.test((typeof a.className === "string" ? a.className : "") + " " + a.id)) {
      return true;
    }
  }
  return false;
};
// A class with its number left out: `prio1` and `prio3` rows are one kind of row.
const kindOf = (c) => c.replace(/\d+$/, "#");
const sigOf = (el) => tagOf(el) + "." + classesOf(el).map(kindOf).sort().join(".");
// A table row of header cells only (column names, a pager row in `<th>`): never an item.
const headerRow = (el) => el.tagName === "TR" && el.cells.length > 0
  && [...el.cells].every((cell) => cell.tagName === "TH");
const shapeOf = (el) => sigOf(el) + "(" + [...el.children].filter((k) => !SKIP_TAGS.has(k.tagName))
  .map(sigOf).join(",") + ")";
const LEADING_LABEL = /^([^\s:\uff1a]{1,20})\s*[:\uff1a]/u;
const deepOf = (el) => {
  const inner = new Set();
  for (const k of [...el.querySelectorAll("*")].slice(0, 60)) {
    if (!SKIP_TAGS.has(k.tagName)) inner.add(sigOf(k));
  }
  const label = collapse(el.textContent).match(LEADING_LABEL);
  const named = label ? label[1].toLowerCase() : "";
  return sigOf(el) + "{" + [...inner].sort().join(",") + "}" + named;
};
// Simple selectors that hold inside `el` (its descendants' tags and classes), to tell it apart.
const innerSimples = (el) => {
  const out = new Set();
  for (const k of [...el.querySelectorAll("*")].slice(0, 40)) {
    if (SKIP_TAGS.has(k.tagName)) continue;
    out.add(tagOf(k));
    for (const c of classesOf(k)) out.add(tagOf(k) + "." + esc(c));
  }
  return [...out];
};
const ownAttrs = (el) => [...el.attributes]
  .filter((a) => /^[a-z][\w-]*$/i.test(a.name) && a.value.length <= 40
    && !["id", "class", "href", "src"].includes(a.name) && !/^(on|data-v-)/.test(a.name))
  .map((a) => "[" + a.name + "=" + quoted(a.value) + "]");
// `base` made to match exactly `members` (the same elements), by what they hold or lack.
function refined(base, members, scope) {
  const set = new Set(members);
  const exact = (sel) => {
    try {
      const all = [...(scope || document).querySelectorAll(sel)];
      return all.length === set.size && all.every((el) => set.has(el));
    } catch (e) { return false; }
  };
  if (exact(base)) return base;
  const first = members[0];
  const childAttrs = [...first.children].flatMap((k) => ownAttrs(k)
    .map((a) => base + ":has(> " + tagOf(k) + a + ")"));
  const options = [...ownAttrs(first).map((a) => base + a),
    ...innerSimples(first).map((s) => base + ":has(" + s + ")"), ...childAttrs];
  const found = options.find(exact);
  if (found) return found;
  const others = [...(scope || document).querySelectorAll(base)].filter((el) => !set.has(el));
  const lacking = new Set(others.flatMap(innerSimples));
  for (const s of innerSimples(first)) lacking.delete(s);
  for (const s of lacking) {
    const sel = base + ":not(:has(" + s + "))";
    if (exact(sel)) return sel;
  }
  return null;
}
// Whether rank `a` comes before rank `b` (compared value by value, higher first).
const ahead = (a, b) => {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] > b[i];
  return false;
};
// Runs of siblings that repeat as a unit: [anchor, member, ...] per item, or null.
function runsOf(parent) {
  const kids = [...parent.children].filter((k) => !SKIP_TAGS.has(k.tagName) && !headerRow(k));
  if (kids.length < 6) return null;
  for (const keyOf of [sigOf, shapeOf, deepOf]) {
    const keys = kids.map(keyOf);
    const first = new Map();
    const counts = new Map();
    keys.forEach((k, i) => {
      if (!first.has(k)) first.set(k, i);
      counts.set(k, (counts.get(k) || 0) + 1);
    });
    const anchors = [...counts].filter(([, n]) => n >= 3).map(([k]) => k);
    let best = null;
    for (const anchor of anchors) {
      const at = keys.flatMap((k, i) => (k === anchor ? [i] : []));
      const segments = at.map((p, i) => kids.slice(p, i + 1 < at.length ? at[i + 1] : kids.length));
      const inner = segments.slice(0, -1);
      if (inner.length < 2 || inner.filter((seg) => seg.length >= 2).length < inner.length * 2 / 3)
        continue;
      const memberKeys = new Set(inner.flatMap((seg) => seg.slice(1).map(keyOf)));
      if (memberKeys.size > 4) continue;
      const patterns = new Map();
      for (const seg of inner) {
        const p = seg.map(keyOf).join("|");
        patterns.set(p, (patterns.get(p) || 0) + 1);
      }
      const share = Math.max(...patterns.values()) / inner.length;
      if (share < 0.5 && memberKeys.size > 2) continue;
      const longest = Math.max(...inner.map((seg) => seg.length));
      const last = segments[segments.length - 1];
      let end = 1;
      while (end < last.length && end < longest && memberKeys.has(keyOf(last[end]))) end++;
      const runs = [...inner, last.slice(0, end)];
      const opener = kids[first.get(anchor)];
      const heads = /^(H[1-6]|DT)$/.test(opener.tagName)
        || !!opener.querySelector("h1, h2, h3, h4");
      const rank = [share, heads ? 1 : 0, -first.get(anchor)];
      if (!best || ahead(rank, best.rank)) best = { runs, rank };
    }
    if (best) return best;
  }
  return null;
}
// The selector of the siblings that join each anchor (or their count), checked on every run.
function siblingsBinding(runs, item) {
  const same = (sel) => runs.every((run) => {
    const got = membersOf(run[0], sel, item);
    return got.length === run.length && got.every((el, i) => el === run[i]);
  });
  const joined = runs.flatMap((run) => run.slice(1));
  const tags = [...new Set(joined.map(tagOf))];
  const options = [];
  if (tags.length === 1) {
    const tag = tags[0];
    const shared = classesOf(joined[0])
      .filter((c) => joined.every((el) => el.classList.contains(c)));
    options.push(...shared.map((c) => tag + "." + esc(c)), tag);
    options.push(...innerSimples(joined[0]).map((s) => tag + ":has(" + s + ")"));
  }
  const found = options.find(same);
  if (found) return found;
  const lengths = new Set(runs.slice(0, -1).map((run) => run.length));
  const size = runs[0].length;
  return lengths.size === 1 && runs.every((run) => run.length === size) ? size - 1 : null;
}
// The repeated-sibling candidates of the page, best first.
function listCandidates(limit) {
  const groupsOf = (parent) => {
    const byKey = new Map();
    for (const kid of parent.children) {
      if (SKIP_TAGS.has(kid.tagName) || headerRow(kid)) continue;
      const classes = classesOf(kid).filter((c) => kindOf(c) === c).sort();  // no prio1
      const key = sigOf(kid);
      if (!byKey.has(key)) byKey.set(key, { tag: tagOf(kid), classes, members: [] });
      const group = byKey.get(key);
      group.classes = group.classes.filter((c) => kid.classList.contains(c));
      group.members.push(kid);
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
    for (const g of merged) {
      g.members = g.members.filter((el) => !controlLike([el]));
      g.runs = g.members.map((el) => [el]);
    }
    return merged.filter((g) => g.members.length >= 3);
  };
  const itemSelector = (parent, containerSel, g) => {
    const members = new Set(g.members);
    const classes = g.classes;
    // Rows beside a header row: those with a data cell.
    const tag = g.tag === "tr" && [...parent.children].some(headerRow) ? "tr:has(> td)" : g.tag;
    const options = classes.map((c) => tag + "." + esc(c));
    if (classes.length > 1) options.push(tag + classes.map((c) => "." + esc(c)).join(""));
    const scoped = options.map((o) => containerSel + " > " + o);
    for (const sel of [...options, ...scoped, containerSel + " > " + tag]) {
      if (matchesExactly(sel, members)) return sel;
    }
    const base = containerSel + " > " + (options[0] || tag);
    return refined(base, g.members) || containerSel + " > " + tag;
  };
  const runGroup = (parent) => {
    const found = runsOf(parent);
    if (!found) return null;
    const runs = found.runs.filter((run) => !controlLike(run));
    if (runs.length < 3) return null;
    const anchors = runs.map((run) => run[0]);
    const classes = classesOf(anchors[0])
      .filter((c) => anchors.every((a) => a.classList.contains(c)));
    const g = { tag: tagOf(anchors[0]), classes, members: anchors, runs };
    const container = uniqueSelector(parent);
    const item = itemSelector(parent, container, g);
    if (!matchesExactly(item, new Set(anchors))) return null;
    const siblings = siblingsBinding(runs, item);
    return siblings === null ? null : { ...g, container, item, siblings };
  };
  const raw = [];
  const parents = [document.body, ...document.body.querySelectorAll("*")];
  for (const parent of parents) {
    if (parent.children.length < 3 || skipped(parent)) continue;
    const run = runGroup(parent);
    if (run) raw.push({ parent, g: run });
    const inRun = new Set(run ? run.runs.flat() : []);
    for (const g of groupsOf(parent)) {
      if (!g.members.some((el) => inRun.has(el))) raw.push({ parent, g });
    }
  }
  const scored = raw.map(({ parent, g }) => {
    const runs = g.runs;
    const n = runs.length;
    const texts = runs.map((run) => collapse(membersText(run)));
    const avgText = texts.reduce((s, t) => s + Math.min(t.length, 400), 0) / n;
    const size = (run) => Math.min(run.reduce((s, el) => s + el.getElementsByTagName("*").length,
      0), 30);
    const avgDesc = runs.reduce((s, run) => s + size(run), 0) / n;
    const hasLink = (el) => el.matches("a[href]") || el.querySelector("a[href]");
    const hasImage = (el) => el.matches("img") || el.querySelector("img");
    const linked = runs.filter((run) => run.some(hasLink)).length;
    const images = runs.filter((run) => run.some(hasImage)).length;
    const visible = runs.filter((run) => shown(run[0])).length;
    const distinct = new Set(texts).size / n;
    let score = Math.log2(n + 1) * (1 + avgDesc) * (1 + avgText / 40)
      * (0.5 + 0.5 * linked / n + 0.2 * images / n) * (0.1 + 0.9 * visible / n)
      * (0.2 + 0.8 * distinct);
    let where = "main";
    if (parent.closest(NAVIGATION)) {
      score *= 0.1;
      where = "navigation";
    } else if (inSidebar(parent)) {
      score *= 0.3;
      where = "sidebar";
    } else if (parent.closest("form, [role=search]")) {
      score *= 0.3;
      where = "form";
    }
    if (texts.filter((t) => PAGER_TEXT.test(t)).length > n / 2) score *= 0.1;
    if (avgText < 3 && images === 0) score *= 0.1;
    const menuLike = avgText < 25 && linked === n && images === 0 && avgDesc <= 2 && n <= 12;
    return { parent, g, score, linked, where, weak: where !== "main" || menuLike };
  });
  // Blocks that hold a longer list (a page's header, main and footer `div`s) are its layout.
  const layout = scored.filter((c) => scored.some((d) => d !== c
    && d.g.runs.length > c.g.runs.length && d.score >= c.score * 0.05
    && c.g.runs.some((run) => run.some((item) => item.contains(d.parent)))));
  for (const c of layout) c.score *= 0.05;
  scored.sort((a, b) => b.score - a.score);
  const kept = [];
  for (const c of scored) {
    if (kept.length >= limit) break;
    if (c.score <= 0) continue;
    const nested = kept.some((k) => k.parent === c.parent
      || k.g.runs.some((run) => run.some((item) => item.contains(c.parent))));
    if (!nested) kept.push(c);
  }
  const out = [];
  for (const { parent, g, score, linked, weak, where } of kept) {
    const container = g.container || uniqueSelector(parent);
    const item = g.item || itemSelector(parent, container, g);
    const siblings = g.siblings ?? null;
    const first = g.runs[0];
    const inner = first.length > 1 ? first.slice(1).map(simple).join(" + ")
      : [...first[0].children].slice(0, 6).map(simple).join(", ");
    out.push({
      container, item, siblings, count: countIn(document, item), score, weak, place: where,
      signature: simple(first[0]) + (inner ? (first.length > 1 ? " + " : " > ") + inner : ""),
      sample: cut(collapse(first.map((el) => el.innerText || el.textContent).join(" ")), 120),
      links: linked,
    });
  }
  return out;
}
"""
)

FIND_LISTS_JS = "(limit) => {\n" + DOM_HELPERS_JS + "\nreturn listCandidates(limit);\n}"


@dataclass(frozen=True)
class ListCandidate:
    """A repeated list: `item` matches exactly its `count` items, `container` their parent.

    An item spread over sibling elements (a title row and a tag row) is its first element,
    which `item` matches, plus the following siblings `siblings` names: a selector (those
    matching it, up to the next item) or a count (that many).
    """

    container: str
    item: str
    count: int
    signature: str
    """The first item's tag and classes, then its children's (`li.result > h3.title, p`), or
    its sibling members' (`tr.athing + tr`)."""
    sample: str
    """The first item's text, cut short."""
    links: int
    """How many of the items hold (or are) a link."""
    siblings: str | int | None = None
    weak: bool = False
    """In navigation, a sidebar or a form, or a dozen short links (a menu): rarely the list."""
    place: str = "main"
    """Where it is: "main", "navigation" (nav, header, footer, menus), "sidebar" or "form"."""


def candidate_from(raw: dict[str, Any]) -> ListCandidate:
    """A candidate from the in-page finder's JSON."""
    return ListCandidate(
        container=raw["container"],
        item=raw["item"],
        count=int(raw["count"]),
        signature=raw["signature"],
        sample=raw["sample"],
        links=int(raw["links"]),
        siblings=raw.get("siblings"),
        weak=bool(raw.get("weak")),
        place=raw.get("place", "main"),
    )


async def find_lists(page: Page, limit: int = 5) -> list[ListCandidate]:
    """The page's repeated lists, best first (at most `limit`); none on a page without one."""
    found = await page.evaluate(FIND_LISTS_JS, limit)
    return [candidate_from(raw) for raw in found if raw["count"] > 0]
