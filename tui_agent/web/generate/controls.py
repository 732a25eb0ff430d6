"""A page's list controls found generically: selects with their options, text inputs, submits.

`find_controls(page)` reads every shown <select> and text input with a selector that matches
it alone, its label, its options and the button that submits it. The matchers rank them for a
task: `filter_matches` (an option whose label or value is the wanted value), `sort_matches`
(an option whose meaning is the wanted order: "Price: low to high" for "price_asc") and
`search_inputs` (inputs that look like a search box).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any, Literal

from playwright.async_api import Page

from tui_agent.web.plan import sort_field

FIND_CONTROLS_JS = r"""
() => {
  const visible = (el) => {
    if (!el.checkVisibility({visibilityProperty: true})) return false;
    const box = el.getBoundingClientRect();
    return box.width > 0 && box.height > 0;
  };
  const esc = (text) => CSS.escape(text);
  const quote = (text) => '"' + text.replace(/\\/g, "\\\\").replace(/"/g, '\\"') + '"';
  const unique = (selector) => {
    try { return document.querySelectorAll(selector).length === 1; } catch { return false; }
  };
  const selectorOf = (el) => {
    const tag = el.tagName.toLowerCase();
    const tries = [];
    if (el.id) tries.push("#" + esc(el.id));
    const name = el.getAttribute("name");
    if (name) tries.push(`${tag}[name=${quote(name)}]`);
    for (const cls of el.classList) tries.push(`${tag}.${esc(cls)}`);
    const form = el.form && el.form.id ? "#" + esc(el.form.id) : null;
    if (form && name) tries.push(`${form} ${tag}[name=${quote(name)}]`);
    const found = tries.find(unique);
    if (found) return found;
    const parts = [];
    for (let node = el; node && node !== document.documentElement; node = node.parentElement) {
      if (node.id) { parts.unshift("#" + esc(node.id)); break; }
      const parent = node.parentElement;
      const same = [...parent.children].filter((child) => child.tagName === node.tagName);
      const part = node.tagName.toLowerCase();
      parts.unshift(same.length > 1 ? `${part}:nth-of-type(${same.indexOf(node) + 1})` : part);
      if (unique(parts.join(" > "))) break;
    }
    return parts.join(" > ");
  };
  const clean = (text) => (text || "").replace(/\s+/g, " ").trim();
  const labelOf = (el) => {
    const texts = [];
    for (const label of el.labels || []) {
      let text = "";
      for (const node of label.childNodes) {
        if (node.nodeType === 3) text += node.textContent;
        else if (!node.matches("select, input, textarea, button")) text += node.textContent;
      }
      texts.push(text);
    }
    texts.push(el.getAttribute("aria-label"), el.getAttribute("title"));
    return clean(texts.filter(Boolean).join(" "));
  };
  const isSubmit = (el) =>
    (el.tagName === "BUTTON" && el.type === "submit") ||
    (el.tagName === "INPUT" && ["submit", "image"].includes(el.type));
  const APPLY = /\b(apply|search|go|filter|submit|update|find|show|refine|ok)\b/i;
  const submitOf = (el) => {
    if (el.form) {
      const button = [...el.form.elements].find((b) => isSubmit(b) && visible(b));
      return button ? selectorOf(button) : null;
    }
    let scope = el.parentElement;
    for (let depth = 0; scope && depth < 4; depth++, scope = scope.parentElement) {
      const button = [...scope.querySelectorAll("button, input[type=button], [role=button]")]
        .find((b) => visible(b) && APPLY.test(b.innerText || b.value || b.ariaLabel || ""));
      if (button) return selectorOf(button);
    }
    return null;
  };
  const common = (el) => ({
    selector: selectorOf(el),
    label: labelOf(el),
    name: el.getAttribute("name") || el.id || "",
    submit: submitOf(el),
    in_search_form: !!el.closest("[role=search]"),
  });
  const controls = [];
  for (const el of document.querySelectorAll("select")) {
    if (!visible(el) || el.disabled || el.multiple) continue;
    const options = [...el.options]
      .filter((option) => !option.disabled)
      .map((option) => ({
        value: option.value, label: clean(option.label || option.text), selected: option.selected,
      }));
    controls.push({kind: "select", ...common(el), options, placeholder: "", input_type: ""});
  }
  const TEXT_TYPES = ["", "text", "search"];
  for (const el of document.querySelectorAll("input")) {
    const type = (el.getAttribute("type") || "").toLowerCase();
    if (!TEXT_TYPES.includes(type) || !visible(el) || el.disabled || el.readOnly) continue;
    controls.push({
      kind: "input", ...common(el), options: [],
      placeholder: el.getAttribute("placeholder") || "", input_type: type || "text",
    });
  }
  return controls;
}
"""


@dataclass(frozen=True)
class Option:
    """One choice of a select: the value sent and the label shown."""

    value: str
    label: str
    selected: bool = False


@dataclass(frozen=True)
class Control:
    """A shown form control and the button that applies it (None: none found)."""

    kind: Literal["select", "input"]
    selector: str
    label: str
    name: str
    options: tuple[Option, ...] = ()
    placeholder: str = ""
    input_type: str = ""
    submit: str | None = None
    in_search_form: bool = False

    def describe(self) -> str:
        """One line: selector, label and (for a select) its options as value=label."""
        title = self.label or self.placeholder or self.name or "(unlabelled)"
        line = f"{self.kind} `{self.selector}` {title!r}"
        if self.options:
            line += ": " + ", ".join(f"{o.value!r}={o.label!r}" for o in self.options)
        if self.submit:
            line += f" (applied by `{self.submit}`)"
        return line

    def brief(self) -> str:
        """Selector and choices, for a one-line message: `select[name=x]` (A, B)."""
        if self.options:
            return f"`{self.selector}` ({', '.join(o.label for o in self.options)})"
        return f"`{self.selector}`" + (f" {self.placeholder!r}" if self.placeholder else "")

    def option(self, value: str) -> Option | None:
        return next((option for option in self.options if option.value == value), None)


async def find_controls(page: Page) -> list[Control]:
    """Every shown, enabled select and text input of the page, in document order."""
    found: list[dict[str, Any]] = await page.evaluate(FIND_CONTROLS_JS)
    return [
        Control(**{**raw, "options": tuple(Option(**option) for option in raw["options"])})
        for raw in found
    ]


# -- words -------------------------------------------------------------------------------------


def _words(text: str) -> list[str]:
    """Lower-case words, camelCase and snake_case split: "sortBy price-asc" -> 4 words."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    return re.findall(r"[a-z0-9]+", spaced.lower())


def _norm(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


_PLACEHOLDER = re.compile(r"^\s*(?:all\b|any\b|select\b|choose\b|none\b|-+|\W*$)", re.IGNORECASE)
_SORT_NAMES = {"sort", "sortby", "order", "orderby", "ordering", "sorting", "sorted"}


def is_placeholder(option: Option) -> bool:
    """An option that means "no filter" ("All categories", "Choose...", value "")."""
    return option.value == "" or bool(_PLACEHOLDER.match(option.label))


def is_sort_control(control: Control) -> bool:
    """A select that orders the list: named or labelled sort/order, or options that sort."""
    if control.kind != "select":
        return False
    if _SORT_NAMES & set(_words(f"{control.name} {control.label} {control.selector}")):
        return True
    sorting = sum(1 for option in control.options if _sort_meaning(option) is not None)
    return sorting >= 2


# -- filters -----------------------------------------------------------------------------------


def _filter_score(wanted: str, option: Option) -> int:
    target = [_norm(word) for word in _words(wanted)]
    if not target or is_placeholder(option):
        return 0
    for text in (option.label, option.value):
        if [_norm(word) for word in _words(text)] == target:
            return 3
    label = {_norm(word) for word in _words(f"{option.label} {option.value}")}
    if set(target) <= label:
        return 2
    joined = " ".join(target)
    ratio = difflib.SequenceMatcher(None, joined, " ".join(map(_norm, _words(option.label))))
    return 1 if ratio.ratio() >= 0.85 else 0


def filter_matches(controls: list[Control], wanted: str) -> list[tuple[Control, Option]]:
    """Options of the non-sort selects that name `wanted`, best match first."""
    scored = [
        (score, index, control, option)
        for index, control in enumerate(controls)
        if control.kind == "select" and not is_sort_control(control)
        for option in control.options
        if (score := _filter_score(wanted, option)) > 0
    ]
    scored.sort(key=lambda entry: (-entry[0], entry[1]))
    return [(control, option) for _, _, control, option in scored]


def filter_controls(controls: list[Control]) -> list[Control]:
    """The selects that could filter the list (every select that does not sort it)."""
    return [c for c in controls if c.kind == "select" and not is_sort_control(c)]


# -- sorting -----------------------------------------------------------------------------------

_FIELD_WORDS = {
    "price": {"price", "cost", "cheap", "cheapest", "expensive", "priciest", "pricing"},
    "rating": {"rating", "rated", "review", "star", "score"},
    "date": {"date", "newest", "new", "latest", "recent", "recently", "oldest", "old", "added",
             "listed", "published", "posted", "arrival", "earliest"},
    "title": {"name", "title", "alphabetical", "alphabetically", "az", "za"},
}  # fmt: skip
_DEFAULT_DESCENDING = {"price": False, "rating": True, "date": True, "title": False}
_ASCENDING_PHRASE = re.compile(
    r"\bleast\s+expensive\b"
    r"|\b(?:low\w*|cheap\w*|old\w*|a)\s*(?:to|-|→|\u2013)\s*(?:high\w*|expensive|new\w*|z)\b",
    re.I,
)
_DESCENDING_PHRASE = re.compile(
    r"\b(?:high\w*|expensive|new\w*|z)\s*(?:to|-|→|\u2013)\s*(?:low\w*|cheap\w*|old\w*|a)\b", re.I
)
_ASCENDING_WORDS = {"asc", "ascending", "low", "lowest", "cheap", "cheapest", "increasing",
                    "oldest", "old", "earliest", "az", "up", "worst"}  # fmt: skip
_DESCENDING_WORDS = {"desc", "descending", "high", "highest", "expensive", "priciest",
                     "decreasing", "newest", "new", "latest", "recent", "best", "top", "za",
                     "down", "most"}  # fmt: skip


def _sort_meaning(option: Option) -> tuple[str, bool | None] | None:
    """(field, descending or None when unsaid) that an option sorts by, or None."""
    text = f"{option.label} {option.value.replace('_', ' ').replace('-', ' - ')}"
    words = {_norm(word) for word in _words(text)} | set(_words(text))
    field = next((name for name, vocabulary in _FIELD_WORDS.items() if words & vocabulary), None)
    if field is None:
        return None
    if _ASCENDING_PHRASE.search(option.label) or _ASCENDING_PHRASE.search(text):
        return field, False
    if _DESCENDING_PHRASE.search(option.label) or _DESCENDING_PHRASE.search(text):
        return field, True
    ascending, descending = bool(words & _ASCENDING_WORDS), bool(words & _DESCENDING_WORDS)
    if ascending != descending:
        return field, descending
    return field, None


def sort_matches(controls: list[Control], sort: str) -> list[tuple[Control, Option]]:
    """Options whose meaning is the order `sort` (a SORT_KEYS key), best match first.

    An option that says its direction ("Price: low to high") beats one that leaves it to the
    field's usual order ("Price"); the opposite direction never matches.
    """
    field, descending = sort_field(sort)
    scored = []
    for index, control in enumerate(controls):
        if control.kind != "select":
            continue
        for option in control.options:
            meaning = _sort_meaning(option)
            if meaning is None or meaning[0] != field:
                continue
            said = meaning[1]
            if said is None:
                score = 2 if _DEFAULT_DESCENDING[field] == descending else 1
            else:
                score = 3 if said == descending else 0
            if score:
                scored.append((score, index, control, option))
    scored.sort(key=lambda entry: (-entry[0], entry[1]))
    return [(control, option) for _, _, control, option in scored]


# -- search ------------------------------------------------------------------------------------

_SEARCH_NAMES = {"q", "query", "search", "s", "keyword", "keywords", "term", "k", "searchterm"}


def _search_score(control: Control) -> int:
    words = set(_words(f"{control.name} {control.label} {control.placeholder}"))
    score = 3 if control.input_type == "search" else 0
    score += 2 if control.name.lower() in _SEARCH_NAMES else 0
    score += 2 if words & {"search", "find", "keyword", "keywords", "query"} else 0
    score += 1 if control.in_search_form else 0
    return score


def search_inputs(controls: list[Control]) -> list[Control]:
    """Text inputs that look like a search box, most search-like first."""
    scored = [(_search_score(c), i, c) for i, c in enumerate(controls) if c.kind == "input"]
    scored.sort(key=lambda entry: (-entry[0], entry[1]))
    return [control for score, _, control in scored if score > 0]
