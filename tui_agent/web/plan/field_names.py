"""Named fields from a block of a page: which element holds the title, the price, the date...

`CANDIDATES_JS` collects, in the page, every shown element of a block (a list item, a details
panel, a detail page's main content) with what hints at its meaning: class names, `itemprop`
and `data-field` attributes, a `dt`/`th`/"Label:" label or its table column's header, heading
tags, links (and the folder their address files them under: /tag/, /category/), images, and a
selector relative to the block whose first match is that element. An element whose value is
its child elements after a lead ("By <a>Ada</a>", "Tags: <a>x</a> <a>y</a>") is read by a
selector naming those children, all of them when there are several. `name_fields` then names
them in Python: the strongest hint per name wins (the task's own word > itemprop > data
attribute > class name > label > tag > value pattern), values that fit the name's pattern
beat those that do not, a link that only points ("(about)", "read more", "1") names nothing,
and a single element beats a repeated one (a tag list's container over one of its tags).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from tui_agent.web.page_js import MEMBERS_JS
from tui_agent.web.plan.strategy import StrategyField

POINTER_WORDS = (
    "about|more|read more|read on|continue|continue reading|details?|view|view details|view more"
    "|see more|see details|learn more|show more|more info|info|permalink|link|open|go"
    "|leer m\u00e1s|ver m\u00e1s|m\u00e1s|ver|detalles|mehr|weiterlesen|plus|voir|voir plus"
    "|lire la suite|en savoir plus|saiba mais|ver mais|leia mais"
)
POINTER_SOURCE = r"^[\s(\[]*(?:" + POINTER_WORDS + r"|#?\d*)[\s)\].\u2026\u00bb\u203a\u2192>#:]*$"
"""A link text that only points somewhere ("(about)", "read more", "details", "more…", "»",
"#", "1"): never an item's title nor any field's value."""
POINTER = re.compile(POINTER_SOURCE, re.IGNORECASE)

# arg: {root: selector, index: which match of it, inner: selector inside it that is the block
# (or null), item: mark the main link (a list item's link to its details), siblings: the
# block's sibling members (LIST_ITEM_SIBLINGS of an item spread over siblings, or null)}.
# Returns null when the block is not there, else its candidates in document order.
CANDIDATES_JS = (
    "(arg) => {\n"
    + MEMBERS_JS
    + f"const POINTER = new RegExp({json.dumps(POINTER_SOURCE)}, 'iu');\n"
    + r"""
  const outer = [...document.querySelectorAll(arg.root)][arg.index || 0];
  const root = outer && arg.inner ? outer.querySelector(arg.inner) : outer;
  if (!root) return null;
  const members = arg.inner ? [root] : membersOf(root, arg.siblings, arg.root);
  const inBlock = (el) => members.some((m) => m.contains(el));
  const clean = (text) => (text || "").replace(/\s+/g, " ").trim();
  const SKIP = "script, style, template, noscript, svg, button, select, option, input, " +
    "textarea, form, nav, iframe, canvas";
  const DATA = ["data-field", "data-name", "data-testid", "data-test", "data-qa"];
  const STATE = new RegExp("^(is-|has-|js-)|^(active|selected|current|open|opened|expanded|" +
    "collapsed|show|shown|hidden|visible|focus|hover|disabled|loading|loaded|new)$");
  const goodClass = (c) => c.length <= 40 && !STATE.test(c) && !/\d{3,}/.test(c) &&
    /^[A-Za-z_][\w-]*$/.test(c);
  const shown = (el) => el.checkVisibility ? el.checkVisibility() : el.offsetParent !== null;
  const left = (el) => el.closest(SKIP) !== null && inBlock(el.closest(SKIP));
  const quote = (value) => '"' + value.replace(/["\\]/g, "\\$&") + '"';
  const simple = (el) => {
    const tag = el.tagName.toLowerCase();
    const out = [];
    const prop = el.getAttribute("itemprop");
    if (prop) out.push(`[itemprop=${quote(prop)}]`);
    for (const name of DATA) {
      const value = el.getAttribute(name);
      if (value) out.push(`[${name}=${quote(value)}]`);
    }
    const classes = [...el.classList].filter(goodClass).map((c) => "." + CSS.escape(c));
    out.push(...classes, ...classes.map((c) => tag + c));
    if (classes.length > 1) out.push(tag + classes.join(""));
    out.push(tag);
    return out;
  };
  const firstIs = (selector, el) => {
    try { return allInMembers(members, selector)[0] === el; } catch { return false; }
  };
  const paths = new Map();
  // The block-relative selector whose first match is `el` (null: none can name it).
  const path = (el) => {
    if (el === root) return ":scope";
    if (paths.has(el)) return paths.get(el);
    let found = simple(el).find((selector) => firstIs(selector, el)) || null;
    if (!found && !members.includes(el)) {
      const parent = el.parentElement;
      const base = path(parent);
      const same = [...parent.children].filter((c) => c.tagName === el.tagName);
      const nth = `${el.tagName.toLowerCase()}:nth-of-type(${same.indexOf(el) + 1})`;
      const own = simple(el)[0];
      found = base === null ? null
        : [`${base} > ${own}`, `${base} > ${nth}`].find((s) => firstIs(s, el)) || null;
    }
    paths.set(el, found);
    return found;
  };
  const labels = new Set();
  const textOf = (el) => clean(el.innerText);
  const labelOf = (el) => {
    if (el.tagName === "DD") {
      let dt = el.previousElementSibling;
      while (dt && dt.tagName !== "DT") dt = dt.previousElementSibling;
      if (dt && dt !== members[0]) { labels.add(dt); return textOf(dt); }
    }
    if (el.tagName === "TD" || el.tagName === "TH") {
      const id = (el.getAttribute("headers") || "").trim().split(/\s+/)[0];
      const named = id ? document.getElementById(id) : null;
      if (named && !named.contains(el)) { labels.add(named); return headerText(named); }
      const th = el.parentElement.querySelector("th");
      if (el.tagName === "TD" && th && el.parentElement.children.length === 2) {
        labels.add(th);
        return textOf(th);
      }
      const head = columnHeader(el);
      if (head) { labels.add(head); return headerText(head) || null; }
    }
    const prev = el.previousElementSibling;
    const headers = prev && prev.tagName === "TH" && el.tagName === "TH";
    if (prev && !headers && !prev.children.length && !members.includes(prev)) {
      const text = textOf(prev);
      const tagged = ["LABEL", "DT", "TH"].includes(prev.tagName);
      if (text.length <= 40 && (tagged || COLON_END.test(text))) {
        labels.add(prev);
        return text.replace(COLON_END, "").trim();
      }
    }
    return null;
  };
  // A column's header: the cell at the same column of the table's head row (its last row in
  // <thead>, else a row of <th> only), when both rows are as wide.
  const width = (row) => [...row.cells].reduce((n, c) => n + (c.colSpan || 1), 0);
  const columnHeader = (cell) => {
    const row = cell.parentElement;
    const table = cell.closest("table");
    if (!table || row.tagName !== "TR") return null;
    const heads = table.tHead ? [...table.tHead.rows] : [];
    const head = heads.length ? heads[heads.length - 1] : [...table.rows].find(
      (r) => r.cells.length > 1 && [...r.cells].every((c) => c.tagName === "TH"));
    if (!head || head === row || head.contains(cell) || width(head) !== width(row)) return null;
    let column = 0;
    for (const c of row.cells) { if (c === cell) break; column += c.colSpan || 1; }
    let at = 0;
    for (const c of head.cells) { if (at === column) return c; at += c.colSpan || 1; }
    return null;
  };
  const MARKS = /[\u25b2-\u25bf\u2191\u2193\u21c5\u2195\u2b06\u2b07]/gu;
  const headerText = (th) => clean(th.getAttribute("data-column") || textOf(th))
    .replace(MARKS, "").replace(/^[^\p{L}]+/u, "").replace(COLON_END, "").trim();
  // A label written before the value in the same element: "<b>Año:</b> 2019", "Precio: 12 €".
  const COLON_END = /\s*[:\uff1a\ufe55\ufe13]$/u;
  const INLINE = /^([^:\uff1a\n]{1,40}?)\s*([:\uff1a])\s*(\S[\s\S]*)$/u;
  const LINE_BREAKERS = "div, p, li, ul, ol, dl, table, section, article, br, h1, h2, h3, h4, "
    + "h5, h6";
  const inlineLabel = (el) => {
    if (/^(H[1-6]|A|BUTTON|LABEL|DT|TH|TIME)$/.test(el.tagName) || el.children.length > 4
        || el.querySelector(LINE_BREAKERS)) return null;
    const found = textOf(el).match(INLINE);
    if (!found) return null;
    const name = found[1].trim();
    const head = el.firstElementChild;
    const leading = [...el.childNodes].find((n) => n.nodeType === 1 || n.textContent.trim());
    const marked = head !== null && leading === head
      && /^(B|STRONG|SPAN|EM|I|SMALL|LABEL)$/.test(head.tagName)
      && textOf(head).replace(COLON_END, "").trim() === name;
    const plain = leading && leading.nodeType === 3 && name.split(/\s+/).length <= 3
      && /^[\p{Lu}\p{Lo}]/u.test(name);
    if (!marked && !plain) return null;
    if (marked) labels.add(head);
    return { label: name, prefix: name + found[2], value: found[3] };
  };
  // An element whose value is its child elements: one after a lead word ("By <a>Ada</a>",
  // "In <a>Code</a>."), or several of one kind, links, items or one class ("tags: <a>maps</a>
  // <a>stars</a>"): read by a selector naming them (all of them for several); null when the
  // element's text is more than them, a lead and separators.
  const SEPARATOR = /^[\s,;|/\u00b7\u2022&+]*$/u;
  const AFTER = /^[\s.,;:!?)\]]*$/u;
  const PART = /^(A|SPAN|SMALL|B|STRONG|EM|I|ABBR|TIME|LI|CODE|MARK|CITE|BDI|DATA)$/;
  const kind = (el) => el.tagName + [...el.classList].sort().map((c) => "." + c).join("");
  const partsOf = (el) => {
    if (members.includes(el) || /^(H[1-6]|A|BUTTON|LABEL|DT|TIME|ABBR)$/.test(el.tagName)) {
      return null;
    }
    const kids = [...el.children].filter((c) => shown(c) && textOf(c));
    if (!kids.length || kids.length > 40 || !PART.test(kids[0].tagName)) return null;
    if (kids.some((c) => kind(c) !== kind(kids[0]) || c.querySelector(LINE_BREAKERS)
        || textOf(c).length > 80)) return null;
    const group = ["A", "LI"].includes(kids[0].tagName) || kids[0].classList.length > 0;
    if (kids.length > 1 && !group) return null;
    let lead = "";
    let seen = 0;
    for (const node of el.childNodes) {
      if (node.nodeType === 1 && kids.includes(node)) seen += 1;
      if (node.nodeType !== 3) continue;
      if (!seen) lead += node.data;
      else if (!(seen < kids.length ? SEPARATOR : AFTER).test(node.data)) return null;
    }
    lead = clean(lead);
    const colon = lead.match(/^([^:\uff1a\d]{1,30}?)\s*[:\uff1a]$/u);
    const word = !colon && /^\p{L}[\p{L}' ]{0,15}$/u.test(lead) && lead.split(" ").length <= 2;
    if (lead && !(colon && colon[1].split(" ").length <= 3) && !word) return null;
    const base = path(el);
    if (base === null) return null;
    const inside = (s) => {
      try { return [...el.querySelectorAll(":scope > " + s)]; } catch { return []; }
    };
    const part = simple(kids[0]).find((s) => {
      const found = inside(s);
      return kids.every((k) => found.includes(k)) && found.every((f) => kids.includes(f)
        || !textOf(f));
    });
    const selector = part ? `${base} > ${part}` : null;
    if (!selector || !firstIs(selector, kids[0])) return null;
    return {
      selector, count: kids.length, text: kids.map(textOf).join(", "),
      label: colon ? colon[1] : null, lead: word ? lead : null,
    };
  };
  const real = (a) => !/^\s*(#|javascript:)/i.test(a.getAttribute("href") || "#");
  const repeats = (el) => {
    const key = [...el.classList].sort().join(" ");
    if (!key || !el.parentElement) return 1;
    return [...el.parentElement.children].filter(
      (c) => c.tagName === el.tagName && [...c.classList].sort().join(" ") === key).length;
  };
  // The main link names the item: in a heading, else with text that is not a pointer
  // ("(about)", "read more", "1"), nor one of a group (a tag among tags), nor the value of a
  // label ("Tags: <a>", "By <a>"); else any link.
  const labelled = (a) => {
    const parts = a.parentElement ? partsOf(a.parentElement) : null;
    return parts !== null && (parts.label !== null || parts.lead !== null);
  };
  let main = null;
  if (arg.item) {
    const links = allInMembers(members, "a[href]").filter((a) => real(a) && !left(a));
    const naming = links.filter(
      (a) => !POINTER.test(textOf(a)) && repeats(a) === 1 && !labelled(a));
    main = root.matches("a[href]") && real(root) ? root :
      naming.find((a) => a.closest("h1, h2, h3, h4, h5, h6")) ||
      naming.find((a) => textOf(a).length >= 3) ||
      links.find((a) => repeats(a) === 1) || links[0] || null;
  }
  const all = members.flatMap((m) => [m, ...m.querySelectorAll("*")]).slice(0, 600);
  const index = new Map();
  const out = [];
  const elements = [];
  for (const el of all) {
    if (el !== root && (left(el) || !shown(el))) continue;
    let label = el === root ? null : labelOf(el);
    let text = textOf(el).slice(0, 300);
    let prefix = null;
    const parts = el === root ? null : partsOf(el);
    if (parts) {
      text = parts.text.slice(0, 300);
      label = label || parts.label;
    }
    const inline = el === root || label || parts ? null : inlineLabel(el);
    if (inline) {
      label = inline.label;
      prefix = inline.prefix;
      text = inline.value.slice(0, 300);
    }
    const href = el.matches("a[href]") && real(el) ? el.href : null;
    const src = el.tagName === "IMG" ? (el.currentSrc || el.src || null) : null;
    if (el === root && el !== main) continue;
    if (!text && !href && !src) continue;
    const ancestors = [];
    for (let up = el.parentElement; up && inBlock(up); up = up.parentElement) {
      if (index.has(up)) ancestors.push(index.get(up));
    }
    // A labelled value no selector names alone is still found by its label when read.
    const selector = parts ? parts.selector : path(el) ?? (prefix ? simple(el)[0] : null);
    if (selector === null) continue;
    const attributes = {};
    for (const name of ["itemprop", ...DATA, "datetime"]) {
      const value = el.getAttribute(name);
      if (value) attributes[name] = value;
    }
    index.set(el, out.length);
    elements.push(el);
    out.push({
      index: out.length, selector, tag: el.tagName.toLowerCase(), text,
      classes: [...el.classList].filter(goodClass), attributes, label, prefix, href, src,
      repeated: members.includes(el) ? 1 : repeats(el), ancestors, main_link: el === main,
      lead: parts ? parts.lead : null, parts: parts ? parts.count : 0,
      cell: /^(TD|TH)$/.test(el.tagName) && members.includes(el.parentElement),
    });
  }
  return out.filter((c) => !labels.has(elements[c.index]));
"""
    + "}"
)


@dataclass(frozen=True)
class Candidate:
    """One element of a block, as CANDIDATES_JS describes it."""

    index: int
    selector: str
    tag: str
    text: str = ""
    classes: tuple[str, ...] = ()
    attributes: dict[str, str] = field(default_factory=dict)
    label: str | None = None
    prefix: str | None = None
    """The label as written before the value in the same element ("Año:"), dropped on read."""
    href: str | None = None
    src: str | None = None
    repeated: int = 1
    """How many siblings share its tag and classes (a tag among tags: more than 1)."""
    ancestors: tuple[int, ...] = ()
    """Indexes of the candidates that contain this one."""
    main_link: bool = False
    """The block's main link (a list item's link to its details)."""
    lead: str | None = None
    """A word written before the value with no colon ("By" of "By Ada"): names it only when
    it means a known field."""
    parts: int = 0
    """The value is child elements the selector names: how many (several: read them all)."""
    cell: bool = False
    """A cell of a table row that is the block (the first with text may be its title)."""

    @classmethod
    def from_page(cls, data: dict[str, Any]) -> Candidate:
        return cls(
            index=data["index"],
            selector=data["selector"],
            tag=data["tag"],
            text=data.get("text") or "",
            classes=tuple(data.get("classes") or ()),
            attributes=dict(data.get("attributes") or {}),
            label=data.get("label"),
            prefix=data.get("prefix"),
            href=data.get("href"),
            src=data.get("src"),
            repeated=data.get("repeated", 1),
            ancestors=tuple(data.get("ancestors") or ()),
            main_link=bool(data.get("main_link")),
            lead=data.get("lead"),
            parts=data.get("parts") or 0,
            cell=bool(data.get("cell")),
        )


FIELD_ORDER = (
    "title",
    "price",
    "currency",
    "rating",
    "date",
    "seller",
    "category",
    "tags",
    "description",
    "url",
    "image",
)
"""The usual names, in the order a record shows them (other names follow, A-Z)."""

SYNONYMS: dict[str, tuple[str, ...]] = {
    "title": ("title", "headline", "heading", "productname", "itemname"),
    "price": ("price", "cost", "amount", "fee", "msrp", "offerprice", "saleprice"),
    "currency": ("currency", "pricecurrency", "curr"),
    "rating": ("rating", "ratingvalue", "score", "stars"),
    "date": (
        "date",
        "posted",
        "published",
        "listed",
        "updated",
        "created",
        "datetime",
        "pubdate",
        "datepublished",
        "datecreated",
        "added",
        "since",
    ),
    "seller": ("seller", "vendor", "merchant", "soldby", "shop", "store", "retailer"),
    "category": ("category", "categories", "department", "genre", "section"),
    "tags": ("tags", "keywords", "labels"),
    "description": ("description", "desc", "summary", "excerpt", "blurb", "abstract", "synopsis"),
    "url": ("url", "permalink", "href"),
    "image": ("image", "img", "photo", "picture", "thumbnail"),
    "author": ("author", "by", "byline", "writer", "creator"),
    "brand": ("brand", "manufacturer", "make"),
    "company": ("company", "employer", "organization", "organisation"),
    "location": ("location", "city", "place", "region", "address"),
    "salary": ("salary", "pay", "compensation", "wage"),
    "availability": ("availability", "stock", "instock"),
    "reviews": ("reviews", "reviewcount", "ratingcount"),
    "sku": ("sku", "mpn", "gtin", "isbn"),
    "condition": ("condition",),
}
"""Canonical field name -> the words (class-name tokens, labels, itemprops) that mean it."""
WEAK: dict[str, str] = {"name": "title", "link": "url", "time": "date", "tag": "tags"}
"""Words that hint at a name only when nothing stronger does ("seller-name" is a seller; one
"tag" of a list of tags is a weaker "tags" than the list itself)."""
_WORDS = {word: name for name, words in SYNONYMS.items() for word in words}

PRICE = re.compile(
    r"^(?:[$€£¥₹]\s?\d[\d,]*(?:\.\d{1,2})?|\d[\d,.]*\s?(?:[$€£¥₹]|USD|EUR|GBP|kr|zł))$"
)
PRICE_LOOSE = re.compile(r"[$€£¥₹]\s?\d|\d\s?(?:[$€£¥₹]|USD|EUR|GBP)\b")
CURRENCY = re.compile(r"^(?:USD|EUR|GBP|JPY|CHF|CAD|AUD|NZD|CNY|INR|SEK|NOK|DKK|PLN|CZK|BRL)$")
DATE = re.compile(
    r"^(?:\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+Z?)?|\d{1,2}[/.]\d{1,2}[/.]\d{2,4}"
    r"|(?:\d{1,2}\s)?[A-Z][a-z]{2,8}\.?\s\d{1,2}(?:st|nd|rd|th)?,?\s\d{4}"
    r"|\d{1,2}\s[A-Z][a-z]{2,8}\s\d{4})$"
)
RATING = re.compile(r"^(?:10(?:\.0)?|\d\.\d{1,2}|\d\s*(?:/\s*(?:5|10)|stars?|out of 5))$")
_SPLIT = re.compile(r"[-_\s:\uff1a/·.,()]+|(?<=[a-z])(?=[A-Z])")
_NOT_WORD = re.compile(r"[\W_]+")
MAX_NAME = 40
"""Characters a field name made from a label keeps at most."""
VALUE_KINDS = (("price", PRICE), ("currency", CURRENCY), ("date", DATE), ("rating", RATING))


def words(text: str) -> list[str]:
    """The lower-case words of a class name or label ("field-price" -> ["field", "price"]), in
    any script ("Año de publicación" -> ["año", "de", "publicación"])."""
    text = unicodedata.normalize("NFKC", text.strip())
    return [word.lower() for word in _SPLIT.split(text) if word]


def _tokens(text: str) -> list[str]:
    """The words of `text` with only their letters and digits left."""
    return [token for word in words(text) if (token := _NOT_WORD.sub("", word))]


def canonical(text: str) -> tuple[str, bool] | None:
    """The field name `text` (a class, label or attribute value) means, and whether strongly.

    The last strong word wins ("card-price" -> price, "price-currency" -> currency), then a
    joined pair ("sold-by" -> seller), then the whole ("productName" -> title); weak words
    ("name", "link", "time") count only when no strong one is there.
    """
    tokens = _tokens(text)
    whole = "".join(tokens)
    if whole in _WORDS:
        return _WORDS[whole], True
    for first, second in zip(reversed(tokens[:-1]), reversed(tokens[1:]), strict=True):
        if first + second in _WORDS:
            return _WORDS[first + second], True
    for token in reversed(tokens):
        for form in (token, token.removesuffix("s"), re.sub(r"ies$", "y", token)):
            if form in _WORDS:
                return _WORDS[form], True
    for token in reversed(tokens):
        if token in WEAK:
            return WEAK[token], False
    return None


def label_name(label: str) -> str | None:
    """A label's field name: a known one ("Listed" -> date), else its words in snake_case,
    letters of any script kept ("Año de publicación" -> año_de_publicación, "価格" -> 価格)."""
    known = canonical(label)
    if known is not None:
        return known[0]
    tokens = _tokens(label)
    if not tokens or len(tokens) > 4 or not tokens[0][0].isalpha():
        return None
    name = "_".join(tokens)
    return name if len(name) <= MAX_NAME else None


def value_kind(text: str) -> str | None:
    """The field a value looks like on its own: price, currency, date or rating (else None)."""
    return next((name for name, pattern in VALUE_KINDS if pattern.match(text.strip())), None)


def fit(name: str, candidate: Candidate, attribute: str | None) -> int:
    """How well the candidate's value suits `name`: 2 exactly, 1 plausibly, 0 not at all (a
    link's pointer text such as "(about)" is no value, and no title anywhere)."""
    if attribute == "href":
        return 2 if candidate.href else 0
    if attribute == "src":
        return 2 if candidate.src else 0
    text = candidate.text
    if not text or (POINTER.match(text) and (candidate.href or name == "title")):
        return 0
    patterns = dict(VALUE_KINDS)
    if name in patterns:
        if patterns[name].match(text):
            return 2
        if name == "price":
            return 1 if PRICE_LOOSE.search(text) else 0
        if name == "currency":
            return 1 if len(text) <= 5 else 0
        return 1 if re.search(r"\d", text) and len(text) <= 40 else 0
    if name == "title":
        return 2 if 2 <= len(text) <= 200 and re.search(r"[^\W\d_]", text) else 0
    if name == "description":
        return 2 if len(text) >= 20 else 1
    return 1


@dataclass(frozen=True)
class Hint:
    """A reason to call a candidate `name`: how strong it is, and what is read (text or attr)."""

    name: str
    strength: int
    attribute: str | None = None


def hints(candidate: Candidate) -> list[Hint]:
    """Every name the candidate's markup or value suggests, strongest reasons scoring most."""
    found: list[Hint] = []

    def add(named: tuple[str, bool] | None, strong: int, weak: int) -> None:
        if named is not None:
            found.append(Hint(named[0], strong if named[1] else weak))

    prop = candidate.attributes.get("itemprop")
    if prop:
        add(canonical(prop) or (label_name(prop) or prop.lower(), True), 7, 4)
    for key, value in candidate.attributes.items():
        if key.startswith("data-"):
            add(canonical(value), 6, 3)
    for css_class in candidate.classes:
        add(canonical(css_class), 5, 2)
    if candidate.label:
        name = label_name(candidate.label)
        if name:
            found.append(Hint(name, 4))
    if candidate.lead:
        add(canonical(candidate.lead), 4, 4)
    if candidate.href and not candidate.main_link:
        add(_link_kind(candidate.href), 3, 3)
    if candidate.tag == "time" or "datetime" in candidate.attributes:
        found.append(Hint("date", 3))
    if candidate.tag in ("h1", "h2", "h3", "h4"):
        found.append(Hint("title", 3))
    if candidate.main_link:
        found += [Hint("url", 6, "href"), Hint("title", 1)]
    kind = value_kind(candidate.text)
    if kind:
        found.append(Hint(kind, 1))
    return [_reading(hint, candidate) for hint in found]


def _link_kind(href: str) -> tuple[str, bool] | None:
    """The field a link's address files its text under: "/tag/maps.html" -> tags,
    "/category/code.html" -> category (a folder of the path, the last one meaning most)."""
    folders = urlsplit(href).path.split("/")[:-1]
    return next((named for f in reversed(folders) if f and (named := canonical(f))), None)


def _marks(candidate: Candidate) -> set[str]:
    """The words of the candidate's markup and labels (class names, attributes, label)."""
    texts = [*candidate.classes, *candidate.attributes.values(), candidate.label or ""]
    found = {token for text in texts for token in _tokens(text)}
    return found | {"".join(_tokens(text)) for text in texts}


def _reading(hint: Hint, candidate: Candidate) -> Hint:
    """What is read for the name: a link's href for url, an image's src for image."""
    if hint.name == "url" and candidate.href:
        return Hint(hint.name, hint.strength, "href")
    if hint.name == "image" and candidate.src:
        return Hint(hint.name, hint.strength, "src")
    return hint


def name_fields(
    candidates: Sequence[Candidate], wanted: Sequence[str] = ()
) -> dict[str, StrategyField]:
    """The best candidate for each name suggested, no element (and reading) used twice.

    `wanted` are the names the task asks for ("genre", "year"): an element whose markup says
    one is named so first, and a found name one of them means ("category" for "genre") takes
    the task's word. A table row's first cell with text is its title when nothing else is.
    """
    asked = [name for name in map(task_name, wanted) if name and _means(name) != "url"]
    first_cell = next(
        (c for c in candidates if c.cell and c.parts <= 1 and fit("title", c, None) == 2), None
    )
    scored = []
    for candidate in candidates:
        extra = [Hint("title", 0)] if candidate is first_cell else []
        marks = _marks(candidate) if asked else set()
        extra += [Hint(name, 8) for name in asked if set(name.split("_")) <= marks]
        extra += [Hint(name, 8) for name in asked if name.replace("_", "") in marks]
        for hint in [*hints(candidate), *extra]:
            if hint.name == "image" and hint.attribute is None:
                continue
            how_well = fit(hint.name, candidate, hint.attribute)
            if how_well == 0:
                continue
            depth = len(candidate.ancestors)
            score = (candidate.repeated == 1, hint.strength, how_well, depth, -candidate.index)
            scored.append((score, hint, candidate))
    scored.sort(key=lambda entry: entry[0], reverse=True)
    chosen: dict[str, StrategyField] = {}
    used: set[tuple[int, str | None]] = set()
    for _, hint, candidate in scored:
        key = (candidate.index, hint.attribute)
        if hint.name in chosen or key in used:
            continue
        text = hint.attribute is None
        chosen[hint.name] = StrategyField(
            selector=candidate.selector,
            attribute=hint.attribute,
            prefix=candidate.prefix if text else None,
            all=text and candidate.parts > 1,
        )
        used.add(key)
    return ordered(in_task_words(chosen, asked))


def _means(name: str) -> str | None:
    """The known field a name means, strongly or weakly ("link" -> url), or None."""
    known = canonical(name)
    return known[0] if known else None


def task_name(word: str) -> str | None:
    """A task's field word as a field name in its own words ("birth date" -> birth_date)."""
    tokens = _tokens(word)
    name = "_".join(tokens)
    return name if tokens and tokens[0][0].isalpha() and len(name) <= MAX_NAME else None


def in_task_words(
    fields: dict[str, StrategyField], asked: Sequence[str]
) -> dict[str, StrategyField]:
    """`fields` with a name the task says in other words renamed to them (category -> genre
    when the task asks for "genre"), order kept. The item's url keeps its name (the planner
    clicks it, the record's link is it)."""
    renamed: dict[str, str] = {}
    for word in asked:
        meant = _means(word)
        if word not in fields and meant is not None and meant not in asked:
            renamed.setdefault(meant, word)
    return {renamed.get(name, name): spec for name, spec in fields.items()}


def ordered(fields: dict[str, StrategyField]) -> dict[str, StrategyField]:
    """Fields in FIELD_ORDER, other names after them A-Z."""
    rank = {name: number for number, name in enumerate(FIELD_ORDER)}
    return dict(sorted(fields.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0])))


def merge_fields(samples: Iterable[dict[str, StrategyField]]) -> dict[str, StrategyField]:
    """Fields named in several samples (items): per name, the selector most samples chose,
    reading all its matches when it matched several in any sample (a tag list whose first
    items have one tag)."""
    votes: dict[str, Counter[StrategyField]] = {}
    several: set[tuple[str, StrategyField]] = set()
    for sample in samples:
        for name, spec in sample.items():
            one = spec.model_copy(update={"all": False})
            votes.setdefault(name, Counter())[one] += 1
            if spec.all:
                several.add((name, one))
    chosen = {name: counter.most_common(1)[0][0] for name, counter in votes.items()}
    return ordered(
        {
            name: spec.model_copy(update={"all": True}) if (name, spec) in several else spec
            for name, spec in chosen.items()
        }
    )


def scoped(selector: str, scope: str) -> str:
    """A block-relative selector made to work from `scope` (the block's own selector)."""
    if selector == ":scope":
        return scope
    if selector.startswith(":scope"):
        return scope + selector.removeprefix(":scope")
    return f"{scope} {selector}"
