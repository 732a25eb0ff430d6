"""The in-page JavaScript of the planner's tools (tui_agent.web.probe.tools), one script a use.

CONTENT_HELPERS_JS extends list_finder's DOM helpers with the verified content selectors;
INSTALL_JS watches the page before a click, ANALYZE_JS says what the click changed and
DETAILS_EXIT_JS whether the details shown now cover the list, and what closes them.
"""

from tui_agent.web.page_js import CONTROL_WORDS_JS, MEMBERS_JS
from tui_agent.web.probe.list_finder import DOM_HELPERS_JS

CONTENT_HELPERS_JS = (
    DOM_HELPERS_JS
    + r"""
const within = (base, rel) => (base.includes(",") ? ":is(" + base + ")" : base) + " " + rel;
// The first selector (relative to `root`) whose first match inside root is `el`.
function relSelector(el, root) {
  const first = (sel) => firstIn(root, sel) === el;
  const tag = tagOf(el);
  const classes = classesOf(el);
  const options = [...classes.map((c) => "." + esc(c)), ...classes.map((c) => tag + "." + esc(c))];
  const prop = el.getAttribute("itemprop");
  if (prop) options.push("[itemprop=\"" + prop.replace(/["\\]/g, "\\$&") + "\"]");
  options.push(tag, tag + ":nth-of-type(" + nthOfType(el) + ")");
  if (el.parentElement && el.parentElement !== root) {
    const up = relSelector(el.parentElement, root);
    if (up) options.push(up + " > " + tag + ":nth-of-type(" + nthOfType(el) + ")");
  }
  return options.find(first) || null;
}
const LABELLED = /^[\p{Lu}\p{Lo}][\p{L}\p{N} ]{0,30}[:\uff1a]\s*\S/u;
// Candidate selectors for the meaningful content inside `root`, each tested in the page.
function contentSelectors(root, base, limit) {
  const out = [];
  const seen = new Set();
  for (const el of [...root.querySelectorAll("*")].slice(0, 800)) {
    if (out.length >= limit) break;
    if (skipped(el) || !shown(el) || el.closest("button, [role=button]")) continue;
    const tag = el.tagName;
    const text = collapse(el.textContent);
    let kind = null;
    let attribute = null;
    let label = null;
    if (/^H[1-6]$/.test(tag) || el.getAttribute("role") === "heading") kind = "heading";
    else if (tag === "A" && el.getAttribute("href")) { kind = "link"; attribute = "href"; }
    else if (tag === "IMG" && el.getAttribute("src")) { kind = "image"; attribute = "src"; }
    else if (tag === "TIME") kind = "date";
    else if (tag === "DD") {
      kind = "labelled";
      let dt = el.previousElementSibling;
      while (dt && dt.tagName !== "DT") dt = dt.previousElementSibling;
      label = dt ? collapse(dt.textContent) : null;
    } else if (LABELLED.test(text) && text.length < 120 && el.children.length <= 2) {
      kind = "labelled";
      label = text.split(/[:\uff1a]/)[0];
    } else if (el.children.length === 0 && text
               && (classesOf(el).length || el.hasAttribute("itemprop"))) {
      kind = "value";
    }
    if (!kind || (!text && !attribute)) continue;
    const rel = relSelector(el, root);
    if (!rel || seen.has(rel) || (kind === "value" && rel.includes(":nth-of-type"))) continue;
    seen.add(rel);
    const selector = within(base, rel);
    const value = attribute && !text ? el.getAttribute(attribute) : text;
    out.push({
      selector, relative: rel, count: countIn(document, selector),
      relative_count: countIn(document, rel), in_element: countIn(root, rel),
      text: cut(value || "", 80), kind, attribute, label,
    });
  }
  return out;
}
"""
)

CHECK_JS = """(selector) => {
  try { return { count: document.querySelectorAll(selector).length, error: null }; }
  catch (e) { return { count: 0, error: String(e.message || e) }; }
}"""

# [item, siblings, selector]: how many items (spread over siblings) hold a match of selector.
COUNT_IN_ITEMS_JS = (
    "([item, siblings, selector]) => {\n"
    + MEMBERS_JS
    + r"""
let count = 0;
try {
  for (const el of document.querySelectorAll(item)) {
    if (allInMembers(membersOf(el, siblings, item), selector).length) count += 1;
  }
} catch (e) { return 0; }
return count;
}"""
)

REACH_HELPERS_JS = r"""
// The element a user's click in the middle of `el` lands on (undefined: not in view).
const hitAt = (el) => {
  const box = el.getBoundingClientRect();
  const x = box.left + box.width / 2, y = box.top + box.height / 2;
  if (box.width <= 0 || box.height <= 0 || x < 0 || y < 0 || x >= innerWidth
      || y >= innerHeight) return undefined;
  return document.elementFromPoint(x, y);
};
const reaches = (el) => { const hit = hitAt(el); return !!hit && el.contains(hit); };
"""

INSTALL_JS = (
    "({ selector, item }) => {\n"
    + DOM_HELPERS_JS
    + REACH_HELPERS_JS
    + r"""
const target = document.querySelector(selector);
let scope = target;
if (item) { try { scope = target.closest(item) || target; } catch (e) { scope = target; } }
const hidden = [];
for (const el of document.body.querySelectorAll("*")) {
  if (hidden.length >= 300) break;
  if (skipped(el) || shown(el) || (el.parentElement && !shown(el.parentElement))) continue;
  if (collapse(el.textContent) || el.querySelector("img")) hidden.push(el);
}
const state = { added: [], addedCount: 0, removed: 0, attributes: 0, texts: 0,
  last: performance.now(), title: document.title };
const observer = new MutationObserver((records) => {
  for (const r of records) {
    if (r.type === "childList") {
      for (const n of r.addedNodes) {
        if (n.nodeType !== 1 || SKIP_TAGS.has(n.tagName)) continue;
        state.added.push(n);
        state.addedCount += 1 + n.getElementsByTagName("*").length;
      }
      for (const n of r.removedNodes) {
        if (n.nodeType === 1) state.removed += 1 + n.getElementsByTagName("*").length;
      }
    } else if (r.type === "attributes") state.attributes += 1;
    else state.texts += 1;
  }
  state.last = performance.now();
});
observer.observe(document.documentElement,
  { childList: true, subtree: true, attributes: true, characterData: true });
let members = [scope];
if (item) { try { members = [...document.querySelectorAll(item)].slice(0, 60); } catch (e) {} }
const reachable = members.filter(reaches);
window.__tuiProbe = { observer, state, target, scope, hidden, reachable, appeared: null };
return { scoped: !!item && scope.matches(item) };
}"""
)

QUIET_JS = """() => {
  const probe = window.__tuiProbe;
  return probe ? performance.now() - probe.state.last : -1;
}"""

ANALYZE_JS = (
    "({ item, list }) => {\n"
    + CONTENT_HELPERS_JS
    + r"""
const probe = window.__tuiProbe;
const { state, scope } = probe;
const isItem = (n) => !!list && n.matches(list);
const connected = state.added.filter((n) => n.isConnected);
const newItems = connected.filter((n) => n !== scope && isItem(n)).length;
const inOtherItem = (n) => !!list && !!n.closest(list) && !scope.contains(n);
const added = connected.filter((n) => !isItem(n) && !inOtherItem(n));
const top = added.filter((n) => !added.some((o) => o !== n && o.contains(n)));
const meaningful = top.filter((n) => shown(n)
  && (collapse(n.textContent) || n.querySelector("img")));
const revealed = probe.hidden.filter((el) => el.isConnected && shown(el));
const scopeLive = scope && scope.isConnected;
const nodes = [...meaningful, ...revealed];
const inside = scopeLive ? nodes.filter((n) => scope !== n && scope.contains(n)) : [];
const outside = nodes.filter((n) => !inside.includes(n) && !(scopeLive && n.contains(scope)));
const commonAncestor = (list) => {
  let a = list[0];
  while (a && !list.every((n) => a.contains(n))) a = a.parentElement;
  return a;
};
const pick = (list, stop) => {
  if (!list.length) return null;
  let el = list.length === 1 ? list[0] : commonAncestor(list);
  if (!el || el === document.body || el === document.documentElement || el === stop) {
    el = [...list].sort((a, b) => b.textContent.length - a.textContent.length)[0];
  }
  for (let a = el, up = 0; a && up < 3; a = a.parentElement, up++) {
    if (a === stop || a === document.body) break;
    if (cleanId(a.id) || classesOf(a).length) return a;
  }
  return el;
};
const panel = pick(outside, null);
const expanded = panel ? null : pick(inside, scope);
const el = panel || expanded;
let selector = null;
let absolute = null;
if (panel) {
  selector = uniqueSelector(panel);
  absolute = selector;
} else if (expanded) {
  selector = relSelector(expanded, scope) || uniqueSelector(expanded, scope);
  absolute = item ? within(item, selector) : uniqueSelector(expanded);
}
probe.appeared = el;
return {
  behavior: panel ? "shows_panel" : expanded ? "inline" : "nothing",
  selector, absolute,
  count: absolute ? countIn(document, absolute) : 0,
  text: el ? cut(collapse(el.innerText || el.textContent), 240) : "",
  content: el ? contentSelectors(el, absolute, 25) : [],
  added: state.addedCount, removed: state.removed, attributes: state.attributes,
  texts: state.texts, title_before: state.title, title: document.title,
  scope_live: !!scopeLive, new_items: newItems,
};
}"""
)

APPEARED_GONE_JS = (
    "() => {\n"
    + DOM_HELPERS_JS
    + """
const probe = window.__tuiProbe;
const el = probe && probe.appeared;
return !el || !el.isConnected || !shown(el);
}"""
)

DETAILS_EXIT_JS = (
    "() => {\n"
    + DOM_HELPERS_JS
    + REACH_HELPERS_JS
    + r"""
const probe = window.__tuiProbe;
const details = probe.appeared;
// The list items a click reached before, that something laid over them now catches instead.
const blocked = probe.reachable.filter((el) => el.isConnected && hitAt(el) && !reaches(el));
let layer = blocked.length ? hitAt(blocked[0]) : null;
while (layer && layer.parentElement && layer.parentElement !== document.body
       && !layer.parentElement.contains(blocked[0])) layer = layer.parentElement;
// The details' close control: in them, or in the layers around them (a dialog's backdrop).
const CLICKABLE = "button, a, [role=button], input[type=button]";
const CLOSE_LABEL = /\b(close|dismiss)\b/i;
const CLOSE_TEXT = /^([\u00d7\u2715\u2716\u2573xX]|(close|dismiss)\b.{0,20})$/i;
const CLOSE_CLASS = /(^|[-_])(close|dismiss)(?![a-z])|[a-z](Close|Dismiss)(?![a-z])/;
const roots = [];
for (let a = details, up = 0; a && up < 4 && a !== document.body; a = a.parentElement, up++) {
  if (probe.scope && a.contains(probe.scope)) break;
  roots.push(a);
}
let best = null;
for (const root of roots) {
  const found = root.querySelectorAll(CLICKABLE + ", [aria-label], [title], [class*=lose], "
    + "[class*=ismiss], [data-dismiss], [data-bs-dismiss]");
  for (const raw of found) {
    const outer = raw.closest(CLICKABLE);
    const el = outer && root.contains(outer) ? outer : raw;
    if (!shown(el) || (el.tagName === "A"
        && !/^(#|javascript:|$)/i.test(el.getAttribute("href") || ""))) continue;
    const label = collapse(el.getAttribute("aria-label") || el.getAttribute("title") || "");
    const text = collapse(el.innerText || el.value || "");
    let score = CLOSE_LABEL.test(label) || CLOSE_TEXT.test(text) ? 3 : 0;
    if (!score && ([...el.classList].some((c) => CLOSE_CLASS.test(c))
        || el.hasAttribute("data-dismiss") || el.hasAttribute("data-bs-dismiss"))) score = 2;
    if (score && el.matches(CLICKABLE)) score += 1;
    if (score > (best ? best.score : 0)) best = { el, score, text: cut(label || text, 40) };
  }
  if (best) break;
}
const close = best && uniqueSelector(best.el);
return {
  covers: blocked.length > 0, blocked: blocked.length, checked: probe.reachable.length,
  blocker: layer ? uniqueSelector(layer) : null,
  close: close ? { selector: close, count: countIn(document, close), text: best.text } : null,
};
}"""
)

REACHED_JS = (
    "() => {\n"
    + DOM_HELPERS_JS
    + REACH_HELPERS_JS
    + """
const probe = window.__tuiProbe;
const el = probe && probe.appeared;
const gone = !el || !el.isConnected || !shown(el);
return gone && probe.reachable.every((item) => !item.isConnected || !hitAt(item) || reaches(item));
}"""
)
"""Whether the details are gone and every list item a click reached before is reachable again."""

CLEANUP_JS = """() => {
  const probe = window.__tuiProbe;
  if (probe) probe.observer.disconnect();
  delete window.__tuiProbe;
}"""

PAGE_MAIN_JS = (
    "() => {\n"
    + CONTENT_HELPERS_JS
    + r"""
const main = document.querySelector("main, [role=main]") || document.body;
const h1 = main.querySelector("h1") || document.querySelector("h1");
let best = null;
for (let a = h1 ? h1.parentElement : null; a && a !== main; a = a.parentElement) {
  if (a === document.body) break;
  if (cleanId(a.id) || classesOf(a).length) best = a;
}
best = best || main;
const selector = uniqueSelector(best);
return {
  selector, count: countIn(document, selector),
  heading: h1 ? cut(collapse(h1.textContent), 120) : "",
  text: cut(collapse(best.innerText || best.textContent), 240),
  content: contentSelectors(best, selector, 25),
};
}"""
)

DESCRIBE_JS = (
    "(selector) => {\n"
    + CONTENT_HELPERS_JS
    + r"""
const all = document.querySelectorAll(selector);
const el = all[0];
const kids = [...el.children].filter((k) => !SKIP_TAGS.has(k.tagName)).slice(0, 15);
const children = kids.map((kid) => {
  const rel = relSelector(kid, el) || "> " + tagOf(kid) + ":nth-of-type(" + nthOfType(kid) + ")";
  const text = cut(collapse(kid.innerText || kid.textContent), 80);
  const path = within(selector, rel);
  return { tag: tagOf(kid), selector: path, text, count: countIn(document, path) };
});
return {
  count: all.length, text: cut(collapse(el.innerText || el.textContent), 300),
  child_count: el.children.length, children, content: contentSelectors(el, selector, 30),
};
}"""
)

SCROLL_JS = (
    "({ target, item }) => {\n"
    + DOM_HELPERS_JS
    + r"""
const items = item ? document.querySelectorAll(item) : [];
let scroller = null;
if (target === "list" && items.length) {
  for (let a = items[items.length - 1].parentElement; a; a = a.parentElement) {
    if (a === document.body) break;
    const style = getComputedStyle(a);
    if (/(auto|scroll)/.test(style.overflowY) && a.scrollHeight > a.clientHeight + 2) {
      scroller = a;
      break;
    }
  }
}
if (items.length) items[items.length - 1].scrollIntoView({ block: "end" });
if (scroller) scroller.scrollTop = scroller.scrollHeight;
else window.scrollTo(0, document.scrollingElement.scrollHeight);
const atEnd = scroller
  ? Math.ceil(scroller.scrollTop + scroller.clientHeight) >= scroller.scrollHeight - 2
  : Math.ceil(window.scrollY + window.innerHeight) >= document.scrollingElement.scrollHeight - 2;
return { scroller: scroller ? uniqueSelector(scroller) : null, at_end: atEnd };
}"""
)

CONTROLS_JS = (
    "() => {\n"
    + DOM_HELPERS_JS
    + CONTROL_WORDS_JS
    + r"""
const MORE = new RegExp("^(?:(?:load|show|view|see)\\s+more\\b.*|more(?:\\s+(?:results|items"
  + "|products|posts))?|(?:ver|cargar|mostrar)\\s+m\u00e1s.*|(?:voir|afficher|charger)\\s+plus.*"
  + "|mehr\\s+(?:laden|anzeigen).*|(?:carregar|ver|mostrar)\\s+mais.*)$", "i");
const CLICKABLE = "a, button, [role=button], [role=link], input[type=button], "
  + "input[type=submit], [onclick]";
// Also any short element a click listener was added to (a script's "Next" span or item).
const listened = window.__tuiClickable
  ? [...document.body.querySelectorAll("span, li, div, i, b, strong, em, p, td")]
    .filter((el) => window.__tuiClickable.has(el) && !el.matches(CLICKABLE)) : [];
const all = [...document.querySelectorAll(CLICKABLE), ...listened].filter(shown);
const controls = all.filter((el) => !looksDisabled(el));
const stable = (sel) => !/:nth-(of-type|child)/.test(sel);
// A selector for a control whose own selector is positional: its kind of clickable inside the
// closest ancestor that has a stable name (the text then tells it apart on every page).
const scopedClickable = (el) => {
  for (let a = el.parentElement, up = 0; a && a !== document.body && up < 5;
       a = a.parentElement, up++) {
    const name = uniqueSelector(a);
    if (stable(name)) return name + " " + tagOf(el);
  }
  return tagOf(el);
};
const found = (el, how, scoped = true) => {
  if (!el) return null;
  const selector = uniqueSelector(el);
  const fixed = stable(selector) || !scoped;
  return {
    selector: fixed ? selector : scopedClickable(el), text: cut(labelOf(el), 60),
    stable: fixed, how, numbered: how === "page number",
  };
};
const byNumber = () => {
  for (const mark of currentPages()) {
    const number = Number(labelOf(mark));
    let box = mark.parentElement;
    for (let up = 0; box && up < 3 && box !== document.body; up++, box = box.parentElement) {
      const next = controls.find((el) => box.contains(el) && el !== mark
        && labelOf(el) === String(number + 1));
      if (next) return next;
    }
  }
  return null;
};
// The page's own `<link rel=next>` (in its head) names the address the next-page link has.
const head = document.querySelector("link[rel~=next][href]");
const linked = head && controls.find((el) => el.href === head.href
  && !PAGE_NUMBER.test(labelOf(el)));
const rel = controls.find((el) => el.matches("[rel~=next]"));
const words = controls.find((el) => saysNext(el));
const next = rel || words || linked;
const how = rel || (linked && !words) ? "rel=next" : next ? "its words" : "page number";
const more = controls.find((el) => MORE.test(labelOf(el)));
const disabledNext = all.find((el) => looksDisabled(el) && saysNext(el));
return {
  pagination: found(next || byNumber(), how), load_more: found(more, "its words", false),
  next_disabled: !next && !!disabledNext,
};
}"""
)
