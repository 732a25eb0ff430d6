"""A page's list controls found generically: selects, boxes, links, buttons, dropdowns, inputs.

`find_controls(page)` reads every shown control that could change the list, with a selector
that matches it alone (or, for a link or a menu entry that has none, a selector plus its
text), its label, its options and the button that submits it. The matchers rank them for a
task: `filter_matches` (an option whose label or value is the wanted value), `sort_matches`
(an option whose meaning is the wanted order: "Price: low to high" for "price_asc", "Precio ↑")
and `search_inputs` (inputs that look like a search box).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any, Literal

from playwright.async_api import Page

from tui_agent.web.generate.control_scripts import FIND_CONTROLS_JS
from tui_agent.web.generate.dropdowns import open_dropdowns
from tui_agent.web.plan import sort_field
from tui_agent.web.plan.page_forms import SORT_NAMES
from tui_agent.web.plan.page_forms import is_placeholder as is_placeholder_option

ControlKind = Literal["select", "input", "checkbox", "radio", "links", "buttons", "dropdown"]
KIND_ORDER: tuple[ControlKind, ...] = (
    "select", "radio", "checkbox", "dropdown", "buttons", "links", "input"
)  # fmt: skip
"""The order controls are tried in when they match equally well."""


@dataclass(frozen=True)
class Option:
    """One choice of a control: the value sent (a select's value, a box's value, a link's
    address) and the label shown; for anything but a select, what to click: `selector`, and
    `text` when the selector names several (a link or a menu entry found by what it reads)."""

    value: str
    label: str
    selected: bool = False
    selector: str | None = None
    text: str | None = None


@dataclass(frozen=True)
class Control:
    """A shown form control and the button that applies it (None: none found)."""

    kind: ControlKind
    selector: str
    label: str
    name: str
    options: tuple[Option, ...] = ()
    placeholder: str = ""
    input_type: str = ""
    submit: str | None = None
    in_search_form: bool = False
    opens: str | None = None
    """A dropdown's menu (shown once `selector` is clicked), where its options are."""
    distance: int = 0
    """How far (in ancestors) the control is from the list: nearer ones are tried first."""

    def describe(self) -> str:
        """One line: selector, label and its options as value=label."""
        title = self.label or self.placeholder or self.name or "(unlabelled)"
        line = f"{self.kind} `{self.selector}` {title!r}"
        if self.options:
            line += ": " + ", ".join(f"{o.value!r}={o.label!r}" for o in self.options[:12])
            if len(self.options) > 12:
                line += f" (+{len(self.options) - 12} more)"
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


def control_from(raw: dict[str, Any]) -> Control:
    """A control from the in-page finder's JSON."""
    return Control(**{**raw, "options": tuple(Option(**option) for option in raw["options"])})


async def find_controls(page: Page, item: str | None = None) -> list[Control]:
    """Every shown, enabled control of the page that could change its list (selects, text
    inputs, checkbox and radio groups, groups of links or buttons, dropdowns that open on a
    click, each opened once to read its options), outside the list items (`item`), in
    document order."""
    found: list[dict[str, Any]] = await page.evaluate(FIND_CONTROLS_JS, {"item": item})
    controls = [control_from(raw) for raw in found]
    return controls + await open_dropdowns(page, item)


# -- words -------------------------------------------------------------------------------------


def _words(text: str) -> list[str]:
    """Lower-case words of any script, camelCase and snake_case split: "sortBy price-asc" ->
    4 words, "Jardín" -> ["jardín"]; a trailing count ("Kitchen (12)") is left out."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", _COUNT.sub("", text))
    return re.findall(r"[^\W_]+", spaced.lower())


_COUNT = re.compile(r"\s*[(\[]\s*\d[\d,.]*\s*[)\]]\s*$")


def _norm(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def is_placeholder(option: Option) -> bool:
    """An option that means "no filter" ("All categories", "Choose...", value "")."""
    return is_placeholder_option(option.value, option.label)


def is_sort_control(control: Control) -> bool:
    """A control that orders the list: named or labelled sort/order, or options that sort."""
    if control.kind == "input":
        return False
    if SORT_NAMES & set(_words(f"{control.name} {control.label} {control.selector}")):
        return True
    sorting = sum(1 for option in control.options if _sort_meaning(option) is not None)
    return sorting >= 2 or (sorting == 1 and len(control.options) == 1)


def _rank(control: Control) -> tuple[int, int]:
    """Controls that match equally well: nearer the list first, then by KIND_ORDER."""
    return control.distance, KIND_ORDER.index(control.kind)


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
    """Options of the controls that do not sort (selects, boxes, links, buttons, dropdowns)
    that name `wanted`: best match first, then the control nearest the list."""
    scored = [
        (score, _rank(control), index, control, option)
        for index, control in enumerate(controls)
        if control.kind != "input" and not is_sort_control(control)
        for option in control.options
        if (score := _filter_score(wanted, option)) > 0
    ]
    scored.sort(key=lambda entry: (-entry[0], entry[1], entry[2]))
    return [(control, option) for *_, control, option in scored]


def filter_controls(controls: list[Control]) -> list[Control]:
    """The controls that could filter the list (every one with options that does not sort)."""
    return [c for c in controls if c.kind != "input" and not is_sort_control(c)]


# -- sorting -----------------------------------------------------------------------------------

_FIELD_WORDS = {
    "price": {"price", "cost", "cheap", "cheapest", "expensive", "priciest", "pricing",
              "precio", "barato", "caro", "prix", "cher", "preis", "günstig", "teuer",
              "preço", "preco", "valor"},
    "rating": {"rating", "rated", "review", "star", "score", "valoración", "valorado",
               "puntuación", "note", "noté", "avis", "bewertung", "bewertet", "sterne",
               "avaliação", "avaliado", "nota", "estrella", "estrela"},
    "date": {"date", "newest", "new", "latest", "recent", "recently", "oldest", "old", "added",
             "listed", "published", "posted", "arrival", "earliest", "fecha", "reciente",
             "nuevo", "antiguo", "récent", "nouveau", "ancien", "datum", "neu", "neueste",
             "alt", "data", "recente", "novo", "antigo"},
    "title": {"name", "title", "alphabetical", "alphabetically", "az", "za", "nombre",
              "título", "nom", "titre", "titel", "alphabetisch", "nome", "alfabético"},
}  # fmt: skip
_DEFAULT_DESCENDING = {"price": False, "rating": True, "date": True, "title": False}
_ASCENDING_PHRASE = re.compile(
    r"\bleast\s+expensive\b|[↑▲⬆]|\bde\s+menor\s+a\s+mayor\b|\bdo\s+menor\s+para\s+o\s+maior\b"
    r"|\b(?:low\w*|cheap\w*|old\w*|a)\s*(?:to|-|→|\u2013)\s*(?:high\w*|expensive|new\w*|z)\b",
    re.I,
)
_DESCENDING_PHRASE = re.compile(
    r"[↓▼⬇]|\bde\s+mayor\s+a\s+menor\b|\bdo\s+maior\s+para\s+o\s+menor\b"
    r"|\b(?:high\w*|expensive|new\w*|z)\s*(?:to|-|→|\u2013)\s*(?:low\w*|cheap\w*|old\w*|a)\b",
    re.I,
)
_ASCENDING_WORDS = {"asc", "ascending", "low", "lowest", "cheap", "cheapest", "increasing",
                    "oldest", "old", "earliest", "az", "up", "worst", "ascendente", "menor",
                    "barato", "antiguo", "croissant", "moins", "aufsteigend", "günstigste",
                    "niedrigste", "crescente", "antigo"}  # fmt: skip
_DESCENDING_WORDS = {"desc", "descending", "high", "highest", "expensive", "priciest",
                     "decreasing", "newest", "new", "latest", "recent", "best", "top", "za",
                     "down", "most", "descendente", "mayor", "caro", "reciente", "mejor",
                     "décroissant", "récent", "meilleur", "absteigend", "teuerste", "neueste",
                     "beste", "decrescente", "maior", "recente", "melhor"}  # fmt: skip


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
        if control.kind == "input":
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
                scored.append((score, _rank(control), index, control, option))
    scored.sort(key=lambda entry: (-entry[0], entry[1], entry[2]))
    return [(control, option) for *_, control, option in scored]


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
