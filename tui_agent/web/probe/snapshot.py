"""A compact outline of a page for a model: landmarks, headings, controls and the list.

Scripts, styles and SVG are dropped, hidden elements skipped, texts cut short; the page's
repeated list shows its first items and then "... N more like this", and any other long run
of similar siblings is folded the same way. Each line names the element by a stable
selector (`#id`, `tag.class`, or `tag[name=...]`). The outline stops at `max_tokens`
(about four characters a token) and says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_agent.web.probe.list_finder import DOM_HELPERS_JS, candidate_from

if TYPE_CHECKING:
    from playwright.async_api import Page

    from tui_agent.web.probe.list_finder import ListCandidate

CHARS_PER_TOKEN = 4

OUTLINE_JS = (
    "(opts) => {\n"
    + DOM_HELPERS_JS
    + r"""
const lists = listCandidates(3);
const listItems = new Set();
const listSelector = new Map();
for (const c of lists.slice(0, 1)) {
  for (const el of document.querySelectorAll(c.item)) {
    listItems.add(el);
    listSelector.set(el, c.item);
  }
}
const LANDMARKS = new Set(["HEADER", "NAV", "MAIN", "ASIDE", "FOOTER", "SECTION", "ARTICLE",
  "FORM", "DIALOG", "TABLE", "UL", "OL", "DL", "FIELDSET"]);
const LEAVES = new Set(["A", "BUTTON", "H1", "H2", "H3", "H4", "H5", "H6", "SELECT", "TEXTAREA",
  "IMG", "INPUT", "SUMMARY", "OPTION"]);
const SHOWN_ATTRS = ["name", "type", "role", "aria-label", "rel", "placeholder", "aria-expanded"];
const lines = [];
const stableName = (el) => {
  if (cleanId(el.id)) return tagOf(el) + "#" + esc(el.id);
  const classes = classesOf(el).slice(0, 2);
  return tagOf(el) + classes.map((c) => "." + esc(c)).join("");
};
const ownText = (el) => {
  const own = [...el.childNodes].filter((n) => n.nodeType === 3).map((n) => n.textContent);
  const text = collapse(own.join(" "));
  return /[\p{L}\p{N}]/u.test(text) ? text : "";
};
function describe(el) {
  let line = stableName(el);
  const attrs = SHOWN_ATTRS.filter((a) => el.hasAttribute(a))
    .map((a) => "[" + a + "=" + cut(el.getAttribute(a), 30) + "]");
  line += attrs.join("");
  const tag = el.tagName;
  if (tag === "SELECT") {
    const options = [...el.options].map((o) => collapse(o.textContent));
    line += " options: " + cut(options.slice(0, 8).join(" | "), 120);
    if (options.length > 8) line += " (" + options.length + " in all)";
  } else if (tag === "INPUT" || tag === "TEXTAREA") {
    if (el.value) line += ' value="' + cut(el.value, 40) + '"';
  } else if (tag === "IMG") {
    line += ' alt="' + cut(el.getAttribute("alt") || "", 60) + '"';
  } else {
    const text = LEAVES.has(tag) ? collapse(el.textContent) : ownText(el);
    if (text) line += ' "' + cut(text, 80) + '"';
  }
  if (tag === "A" && el.getAttribute("href")) line += " -> " + cut(el.getAttribute("href"), 60);
  return line;
}
const printable = (el) => LANDMARKS.has(el.tagName) || LEAVES.has(el.tagName)
  || cleanId(el.id) || el.hasAttribute("role") || ownText(el).length > 0
  || el.tagName === "LABEL" || listItems.has(el);
function walk(el, depth) {
  if (SKIP_TAGS.has(el.tagName) || !shown(el)) return;
  let inner = depth;
  if (printable(el)) {
    lines.push("  ".repeat(depth) + describe(el));
    inner = depth + 1;
    if (LEAVES.has(el.tagName)) return;
  }
  walkChildren(el, inner);
}
function walkChildren(el, depth) {
  const kids = [...el.children].filter((k) => !SKIP_TAGS.has(k.tagName));
  const seen = new Map();
  let listShown = 0;
  let listRest = 0;
  let listSel = "";
  for (const kid of kids) {
    if (listItems.has(kid)) {
      listShown += 1;
      if (listShown <= 2) {
        if (listShown === 1) {
          lines.push("  ".repeat(depth) + "[LIST ITEM `" + listSelector.get(kid) + "`]");
        }
        walk(kid, depth);
      } else { listRest += 1; listSel = listSelector.get(kid); }
      continue;
    }
    const key = simple(kid);
    const n = (seen.get(key) || 0) + 1;
    seen.set(key, n);
    if (n <= 4) walk(kid, depth);
  }
  if (listRest > 0) {
    lines.push("  ".repeat(depth) + "... " + listRest + " more like this (`" + listSel + "`)");
  }
  for (const [key, n] of seen) {
    if (n > 4) lines.push("  ".repeat(depth) + "... " + (n - 4) + " more " + key);
  }
}
walk(document.body, 0);
return { lines, lists, title: document.title, url: location.href };
}"""
)


def outline_text(
    title: str, url: str, lists: list[ListCandidate], lines: list[str], max_tokens: int
) -> str:
    """The outline with its header, cut to `max_tokens` with a note when the cap was hit."""
    head = [f"PAGE: {title} — {url}"]
    if lists:
        head.append("REPEATED LISTS (item selector: count, verified in the page):")
        head += [
            f"- `{c.item}`: {c.count} in `{c.container}` ({c.links} with links): {c.sample[:80]}"
            for c in lists
        ]
    else:
        head.append("REPEATED LISTS: none found")
    every = [*head, "OUTLINE:", *lines]
    budget = max_tokens * CHARS_PER_TOKEN
    text = "\n".join(every)
    if len(text) <= budget:
        return text
    kept: list[str] = []
    size = 0
    longest_note = len(_cut_note(max_tokens, len(every)))
    for line in every:
        if size + len(line) + 1 + longest_note > budget:
            break
        kept.append(line)
        size += len(line) + 1
    note = _cut_note(max_tokens, len(every) - len(kept))
    return "\n".join([*kept, note])[:budget]


def _cut_note(max_tokens: int, omitted: int) -> str:
    return f"[snapshot cut at its cap of ~{max_tokens} tokens: {omitted} more lines not shown]"


async def dom_snapshot(page: Page, max_tokens: int = 2500) -> str:
    """A pruned outline of `page` of at most `max_tokens` (estimated at 4 chars a token)."""
    found = await page.evaluate(OUTLINE_JS, {})
    lists = [candidate_from(raw) for raw in found["lists"] if raw["count"] > 0]
    return outline_text(found["title"], found["url"], lists, found["lines"], max_tokens)
