"""Phase 2: recipe fragments that filter, sort or search the list, each proved in the browser.

`GeneratorPhase(page, url, task, needed, item_selector=...)` reads the task's intent, finds the
page's controls (tui_agent.web.controls) and lets one generator per need write candidate
fragments (SELECT / TYPE, then CLICK the submit or PRESS Enter, then WAIT_FOR the items). A
fragment is kept only once it ran on a freshly loaded page and the list changed as asked:
filter -> every item shows the chosen option, sort -> the items' values are in order, search ->
every item contains the term. With an `llm`, the model picks the control when no heuristic
match exists; its answer is checked against the controls found and verified the same way.
"""

from __future__ import annotations

import itertools
import json
import re
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from tui_agent.events import Event, Log, ToolCall, ToolResult
from tui_agent.llm.client import LLM
from tui_agent.web.actions import PageActions
from tui_agent.web.controls import (
    Control,
    Option,
    filter_controls,
    filter_matches,
    find_controls,
    search_inputs,
    sort_matches,
)
from tui_agent.web.failures import CommandFailed, HardFailure, first_line
from tui_agent.web.recipe import (
    Bindings,
    Click,
    Press,
    RecipeError,
    Select,
    TypeText,
    WaitFor,
    parse_recipe,
)
from tui_agent.web.strategy import Fragment, GeneratorName
from tui_agent.web.task_intent import SORT_KEYS, TaskIntent, parse_intent, sort_field

LOAD_TIMEOUT_MS = 15_000
MAX_CANDIDATES = 2
"""Controls / options tried per need before giving up (each try is a page load)."""

READ_LIST_JS = r"""
(selector) => [...document.querySelectorAll(selector)].map((el) => {
  const clean = (text) => (text || "").replace(/\s+/g, " ").trim();
  const pick = (css, attributes) => {
    const found = el.querySelector(css);
    if (!found) return null;
    for (const name of attributes) {
      const value = found.getAttribute(name);
      if (value) return value;
    }
    return clean(found.innerText) || null;
  };
  return {
    text: clean(el.innerText),
    price: pick('[itemprop=price], [data-price], [class*="price" i]', ["content", "data-price"]),
    rating: pick(
      '[itemprop=ratingValue], [data-rating], [class*="rating" i], [class*="stars" i]',
      ["content", "data-rating"]),
    date: pick(
      'time[datetime], [itemprop=datePublished], [itemprop=dateCreated], [class*="date" i], time',
      ["datetime", "content"]),
    title: pick(
      '[itemprop=name], h1, h2, h3, h4, h5, h6, [class*="title" i], [class*="name" i], a[href]',
      ["content"]),
  };
})
"""


# -- reading values off the items -------------------------------------------------------------

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_PRICE_IN_TEXT = re.compile(r"[$€£¥]\s?\d[\d,]*(?:\.\d+)?|\d[\d,]*(?:\.\d+)?\s?(?:USD|EUR|GBP)")
_RATING_IN_TEXT = re.compile(r"(\d+(?:\.\d+)?)\s*(?:/\s*(?:5|10)\b|out of\b|stars?\b|★)", re.I)
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_DATE_FORMATS = ("%b %d, %Y", "%B %d, %Y", "%d %b %Y", "%d %B %Y", "%Y/%m/%d")


def _number(text: str | None) -> float | None:
    match = _NUMBER.search(text or "")
    if not match:
        return None
    raw = match.group(0)
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", raw):
        raw = raw.replace(",", "")
    elif re.fullmatch(r"\d+,\d{1,2}", raw):
        raw = raw.replace(",", ".")
    try:
        return float(raw)
    except ValueError:
        return None


def _price(item: dict[str, Any]) -> float | None:
    if item["price"]:
        return _number(item["price"])
    match = _PRICE_IN_TEXT.search(item["text"])
    return _number(match.group(0)) if match else None


def _rating(item: dict[str, Any]) -> float | None:
    for text in (item["rating"], item["text"]):
        if not text:
            continue
        match = _RATING_IN_TEXT.search(text)
        value = _number(match.group(1)) if match else None
        if value is None and text is item["rating"]:
            value = _number(text)
            if value is None and "★" in text:
                value = float(text.count("★"))
        if value is not None and value <= 10:
            return value
    return None


def _date(item: dict[str, Any]) -> date | None:
    for text in (item["date"], item["text"]):
        if not text:
            continue
        iso = _ISO_DATE.search(text)
        if iso:
            return date(*map(int, iso.groups()))
        for layout in _DATE_FORMATS:
            try:
                return datetime.strptime(text.strip(), layout).date()
            except ValueError:
                continue
    return None


def _title(item: dict[str, Any]) -> str | None:
    return item["title"] or item["text"] or None


_READERS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "price": _price,
    "rating": _rating,
    "date": _date,
    "title": _title,
}


# -- the checks ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Check:
    """Whether the list after a fragment is what was asked, and the evidence either way."""

    ok: bool
    evidence: str


def _shows(text: str, wanted: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(wanted.casefold())}(?!\w)", text.casefold()) is not None


def check_filter(label: str, before: list[dict[str, Any]], after: list[dict[str, Any]]) -> Check:
    """Every item shows `label`, and the list is not the one before (the filter did work)."""
    if not after:
        return Check(False, f"{len(before)} -> 0 items: the filter emptied the list")
    missing = [item for item in after if not _shows(item["text"], label)]
    if missing:
        example = missing[0]["text"][:80]
        return Check(False, f"{len(missing)} of {len(after)} items do not show {label!r} "
                            f"(e.g. {example!r})")  # fmt: skip
    already = bool(before) and all(_shows(item["text"], label) for item in before)
    if already and len(before) == len(after):
        return Check(False, f"the list already showed only {label!r}: nothing to prove")
    return Check(True, f"{len(before)} -> {len(after)} items, all {label}")


def check_search(term: str, before: list[dict[str, Any]], after: list[dict[str, Any]]) -> Check:
    """Every item contains every word of `term`, and the list narrowed."""
    words = term.casefold().split()
    if not after:
        return Check(False, f"{len(before)} -> 0 items: the search found nothing")
    missing = [item for item in after if not all(w in item["text"].casefold() for w in words)]
    if missing:
        example = missing[0]["text"][:80]
        return Check(False, f"{len(missing)} of {len(after)} items do not contain {term!r} "
                            f"(e.g. {example!r})")  # fmt: skip
    if len(after) >= len(before) and all(
        all(w in item["text"].casefold() for w in words) for item in before
    ):
        return Check(False, f"every item contained {term!r} before the search: nothing to prove")
    return Check(True, f"{len(before)} -> {len(after)} items, all containing {term!r}")


def check_sort(sort: str, after: list[dict[str, Any]]) -> Check:
    """The items' values of the sort's field (read from each item) are in its order."""
    field, descending = sort_field(sort)
    read = _READERS[field]
    read_all = [(index, read(item)) for index, item in enumerate(after)]
    present = [(index, value) for index, value in read_all if value is not None]
    if len(present) < 2 or len(present) < 0.8 * len(after):
        return Check(False, f"could read the {field} of only {len(present)} of {len(after)} items")
    values = [value for _, value in present]
    keys = [value.casefold() for value in values] if field == "title" else values
    # Titles may be sorted with or without regard to case: either order is the asked one.
    if _ordered(keys, descending) or (field == "title" and _ordered(values, descending)):
        return Check(True, f"{len(after)} items by {SORT_KEYS[sort]}: {values[0]} ... {values[-1]}")
    wrong = next(
        position
        for position, (a, b) in enumerate(itertools.pairwise(keys), 1)
        if (b > a if descending else b < a)
    )
    (before, first), (index, second) = present[wrong - 1], present[wrong]
    return Check(
        False,
        f"item {index + 1} ({second}) comes after item {before + 1} ({first}): "
        f"not {SORT_KEYS[sort]}",
    )


def _ordered(values: list[Any], descending: bool) -> bool:
    return all((a >= b) if descending else (a <= b) for a, b in itertools.pairwise(values))


# -- the browser bench --------------------------------------------------------------------------


class _Bench:
    """The generators' browser work, each action a ToolCall / ToolResult pair."""

    def __init__(self, page: Page, url: str, item_selector: str, llm: LLM | None) -> None:
        self.page = page
        self.url = url
        self.item_selector = item_selector
        self.llm = llm
        self.bindings = Bindings(LIST_ITEM=item_selector)
        self.actions = PageActions(page, self.bindings)
        self.baseline: list[dict[str, Any]] = []
        self.controls: list[Control] = []
        self.items: list[dict[str, Any]] = []
        self.ok = False
        """Whether the last step succeeded."""
        self._calls = 0

    async def step(
        self, name: str, arguments: dict[str, Any], work: Callable[[], Awaitable[tuple[str, Any]]]
    ) -> AsyncIterator[Event]:
        """One traced action; afterwards `self.ok` says whether it worked."""
        self._calls += 1
        call = ToolCall(call_id=f"gen{self._calls}", name=name, arguments=arguments)
        yield call
        began = time.monotonic()
        facts: dict[str, Any] = {}
        try:
            output, facts = await work()
            self.ok = True
        except (CommandFailed, HardFailure, PlaywrightError) as exc:
            output, self.ok = first_line(exc), False
        yield ToolResult(
            call_id=call.call_id,
            name=name,
            output=output,
            facts=facts,
            ok=self.ok,
            duration=time.monotonic() - began,
        )

    async def load(self) -> AsyncIterator[Event]:
        """Load the URL afresh and wait for the list's items (self.ok False if they never come)."""

        async def work() -> tuple[str, dict[str, Any]]:
            await self.page.goto(self.url, wait_until="domcontentloaded", timeout=LOAD_TIMEOUT_MS)
            await self.actions.wait_for_list(LOAD_TIMEOUT_MS)
            return f"loaded {self.url}", {"url": self.page.url}

        async for event in self.step("load_page", {"url": self.url}, work):
            yield event

    async def read(self) -> AsyncIterator[Event]:
        """Read the list's items into `self.items`."""

        async def work() -> tuple[str, dict[str, Any]]:
            self.items = await self.page.evaluate(READ_LIST_JS, self.item_selector)
            first = self.items[0]["text"][:60] if self.items else ""
            shown = f"{len(self.items)} items" + (f", the first: {first!r}" if first else "")
            return shown, {"count": len(self.items)}

        self.items = []
        async for event in self.step("read_list", {"selector": self.item_selector}, work):
            yield event

    async def find(self) -> AsyncIterator[Event]:
        """Find the page's controls into `self.controls`."""

        async def work() -> tuple[str, dict[str, Any]]:
            self.controls = await find_controls(self.page)
            lines = [control.describe() for control in self.controls] or ["no form controls"]
            selects = sum(control.kind == "select" for control in self.controls)
            facts = {"selects": selects, "inputs": len(self.controls) - selects}
            return "\n".join(lines), facts

        async for event in self.step("find_controls", {}, work):
            yield event

    async def run_commands(self, commands: list[dict[str, Any]]) -> AsyncIterator[Event]:
        """Run fragment commands in order; stops at the first that fails (self.ok False)."""
        try:
            recipe = parse_recipe(
                {
                    "bindings": {"LIST_ITEM": self.item_selector},
                    "recipe": {"id": "fragment", "name": "fragment", "commands": commands},
                },
                "the fragment",
            )
        except RecipeError as exc:
            yield Log(level="warning", message=str(exc).replace("\n", " "))
            self.ok = False
            return
        for command, written in zip(recipe.recipe.commands, commands, strict=True):
            async for event in self.step(written["type"], written, self._action(command)):
                yield event
            if not self.ok:
                return

    def _action(self, command: Any) -> Callable[[], Awaitable[tuple[str, Any]]]:
        async def work() -> tuple[str, Any]:
            if isinstance(command, WaitFor):
                return await self.actions.wait_for(command, None)
            if isinstance(command, Click):
                return await self.actions.click_selector(command, None)
            assert isinstance(command, TypeText | Select | Press)
            return await self.actions.interact(command)

        return work

    def report(self, name: str, expect: dict[str, Any], verdict: Check) -> list[Event]:
        """A check's ToolCall / ToolResult pair: what was expected, and the evidence."""
        self._calls += 1
        call = ToolCall(call_id=f"gen{self._calls}", name=name, arguments=expect)
        result = ToolResult(call_id=call.call_id, name=name, output=verdict.evidence, ok=verdict.ok)
        return [call, result]


# -- the generators -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """A control and what to do with it: an option to choose, or (inputs) None."""

    control: Control
    option: Option | None = None


def _fragment_commands(
    candidate: Candidate, text: str | None, item_selector: str
) -> list[list[dict[str, Any]]]:
    """The ways to apply a candidate, most likely first: via its submit, or on its own."""
    control, option = candidate.control, candidate.option
    if option is not None:
        value = (
            {"value": option.value}
            if sum(o.value == option.value for o in control.options) == 1
            else {"label": option.label}
        )
        first: dict[str, Any] = {"type": "SELECT", "selector": control.selector, **value}
    else:
        first = {"type": "TYPE", "selector": control.selector, "text": text or ""}
    wait = {"type": "WAIT_FOR", "condition": {"exists": item_selector}}
    enter = {"type": "PRESS", "selector": control.selector, "key": "Enter"}
    variants = []
    if control.submit:
        variants.append([first, {"type": "CLICK", "selector": control.submit}, wait])
    variants.append([first, enter, wait] if option is None else [first, wait])
    return variants


class _Generator(ABC):
    """Find candidates, write their fragments, keep the first that runs and is verified."""

    name: GeneratorName
    purpose: str

    def __init__(self, bench: _Bench, task: str) -> None:
        self.bench = bench
        self.task = task
        self.fragment: Fragment | None = None
        self.chosen: Candidate | None = None
        self.error: str | None = None
        self._verdict = Check(False, "not run")
        self._model_choice: list[Candidate] = []

    @abstractmethod
    def want(self) -> str:
        """What the generator is asked to do, in words."""

    @abstractmethod
    def offered(self) -> list[Control]:
        """The controls the model may choose from when no heuristic match exists."""

    @abstractmethod
    def candidates(self) -> list[Candidate]:
        """Heuristic matches, best first."""

    @abstractmethod
    def check(self, candidate: Candidate, after: list[dict[str, Any]]) -> Check:
        """Whether the list after the candidate's fragment is what was asked."""

    @abstractmethod
    def describe(self, candidate: Candidate) -> tuple[str, str]:
        """The fragment's description and option (the spec's filterOption)."""

    def text(self) -> str | None:
        """What a TYPE command types (search only)."""
        return None

    async def run(self) -> AsyncIterator[Event]:
        """Try the candidates (or the model's pick); sets `fragment`, `chosen` or `error`."""
        candidates = self.candidates()[:MAX_CANDIDATES]
        if not candidates:
            async for event in self._ask_model():
                yield event
            candidates = self._model_choice
            if not candidates:
                return
        tried = []
        for candidate in candidates:
            for commands in _fragment_commands(candidate, self.text(), self.bench.item_selector):
                async for event in self._verify(candidate, commands):
                    yield event
                if self._verdict.ok:
                    description, option = self.describe(candidate)
                    self.chosen = candidate
                    self.fragment = Fragment(
                        generator=self.name,
                        description=description,
                        target=candidate.control.selector,
                        option=option,
                        commands=commands,
                        verified=True,
                        evidence=self._verdict.evidence,
                    )
                    yield Log(message=f"{self.name}: {description}: {self._verdict.evidence}")
                    return
                tried.append(self._verdict.evidence)
        self.error = f"{self.name} could not {self.want()}: " + "; ".join(dict.fromkeys(tried))
        yield Log(level="warning", message=self.error)

    async def _verify(
        self, candidate: Candidate, commands: list[dict[str, Any]]
    ) -> AsyncIterator[Event]:
        """Load the page afresh, run the fragment, read the list and check it."""
        bench = self.bench
        self._verdict = Check(False, f"{bench.url} did not show the list again")
        async for event in bench.load():
            yield event
        if not bench.ok:
            return
        async for event in bench.run_commands(commands):
            yield event
        if not bench.ok:
            self._verdict = Check(False, f"the fragment {_summary(commands)} did not run")
            return
        async for event in bench.read():
            yield event
        self._verdict = self.check(candidate, bench.items)
        for event in bench.report(f"check_{self.purpose}", {"want": self.want()}, self._verdict):
            yield event

    async def _ask_model(self) -> AsyncIterator[Event]:
        """No heuristic match: the model (if any) picks one of the controls found."""
        offered = self.offered()
        problem = ""
        if not offered:
            kind = "text inputs" if self.purpose == "search" else "select controls"
            problem = f"the page has no {kind}"
        elif self.bench.llm is None:
            found = "; ".join(control.brief() for control in offered)
            problem = f"nothing on the page matches (found {found})"
        else:
            reply = await self.bench.llm.complete(
                self._prompt(offered), want_json=True, purpose=f"{self.purpose} control"
            )
            yield reply.call
            candidate, problem = self._read_answer(reply.text, offered)
            if candidate is not None:
                yield Log(message=f"{self.name}: the model chose {self.describe(candidate)[0]}")
                self._model_choice = [candidate]
                return
        self.error = f"{self.name} could not {self.want()}: {problem}"
        yield Log(level="warning", message=self.error)

    def _prompt(self, offered: list[Control]) -> list[dict[str, str]]:
        listing = "\n".join(f"- {control.describe()}" for control in offered)
        if self.purpose == "search":
            answer = '{"selector": "<the search input\'s selector>"}'
        else:
            answer = '{"selector": "<the select\'s selector>", "value": "<the option\'s value>"}'
        return [
            {
                "role": "system",
                "content": "You help a web scraper use a page's list controls. "
                "Reply with one JSON object and nothing else.",
            },
            {
                "role": "user",
                "content": f"Task: {self.task}\nWanted: {self.want()}\n"
                f"Controls on the page:\n{listing}\n\n"
                f"Answer {answer} for the control that does this, or "
                '{"selector": null, "reason": "<why>"} if none does.',
            },
        ]

    def _read_answer(self, text: str, offered: list[Control]) -> tuple[Candidate | None, str]:
        answer = _json_object(text)
        if answer is None:
            return None, f"the model's answer is not a JSON object: {text[:120]!r}"
        selector = answer.get("selector")
        if not selector:
            reason = answer.get("reason") or "no reason given"
            return None, f"the model found no control for it ({reason})"
        control = next((c for c in offered if _same(c.selector, str(selector))), None)
        if control is None:
            return None, f"the model named {selector!r}, which is not one of the controls found"
        if self.purpose == "search":
            return Candidate(control), ""
        value = str(answer.get("value", ""))
        option = control.option(value) or next(
            (o for o in control.options if o.label == value), None
        )
        if option is None:
            return None, f"the model chose option {value!r}, which {selector!r} does not have"
        return Candidate(control, option), ""


def _same(selector: str, named: str) -> bool:
    """The same selector, however the model quoted or spaced it."""
    return re.sub(r"[\s\"']", "", selector) == re.sub(r"[\s\"']", "", named)


def _summary(commands: list[dict[str, Any]]) -> str:
    return " -> ".join(command["type"] for command in commands)


def _json_object(text: str) -> dict[str, Any] | None:
    match = re.search(r"\{.*\}", text, re.DOTALL)
    if not match:
        return None
    try:
        value = json.loads(match.group(0))
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


class FilterGenerator(_Generator):
    """Narrows the list to one value: a select option whose label or value names it."""

    name: GeneratorName = "FilterGenerator"
    purpose = "filter"

    def __init__(self, bench: _Bench, task: str, value: str) -> None:
        super().__init__(bench, task)
        self.value = value

    def want(self) -> str:
        return f"filter the list to {self.value!r}"

    def offered(self) -> list[Control]:
        return filter_controls(self.bench.controls)

    def candidates(self) -> list[Candidate]:
        return [Candidate(c, o) for c, o in filter_matches(self.bench.controls, self.value)]

    def check(self, candidate: Candidate, after: list[dict[str, Any]]) -> Check:
        assert candidate.option is not None
        return check_filter(candidate.option.label, self.bench.baseline, after)

    def describe(self, candidate: Candidate) -> tuple[str, str]:
        assert candidate.option is not None
        label, selector = candidate.option.label, candidate.control.selector
        return f"filter to {label!r} with `{selector}`", candidate.option.value


class SortGenerator(_Generator):
    """Orders the list: a select option whose meaning is the wanted order."""

    name: GeneratorName = "SortGenerator"
    purpose = "sort"

    def __init__(self, bench: _Bench, task: str, sort: str) -> None:
        super().__init__(bench, task)
        self.sort = sort

    def want(self) -> str:
        return f"sort the list by {SORT_KEYS[self.sort]}"

    def offered(self) -> list[Control]:
        return [control for control in self.bench.controls if control.kind == "select"]

    def candidates(self) -> list[Candidate]:
        return [Candidate(c, o) for c, o in sort_matches(self.bench.controls, self.sort)]

    def check(self, candidate: Candidate, after: list[dict[str, Any]]) -> Check:
        return check_sort(self.sort, after)

    def describe(self, candidate: Candidate) -> tuple[str, str]:
        assert candidate.option is not None
        label, selector = candidate.option.label, candidate.control.selector
        return f"sort by {label!r} with `{selector}`", candidate.option.value


class SearchGenerator(_Generator):
    """Searches the list: types the term into the search box and submits it."""

    name: GeneratorName = "SearchGenerator"
    purpose = "search"

    def __init__(self, bench: _Bench, task: str, term: str) -> None:
        super().__init__(bench, task)
        self.term = term

    def want(self) -> str:
        return f"search for {self.term!r}"

    def offered(self) -> list[Control]:
        return [control for control in self.bench.controls if control.kind == "input"]

    def candidates(self) -> list[Candidate]:
        return [Candidate(control) for control in search_inputs(self.bench.controls)]

    def text(self) -> str:
        return self.term

    def check(self, candidate: Candidate, after: list[dict[str, Any]]) -> Check:
        return check_search(self.term, self.bench.baseline, after)

    def describe(self, candidate: Candidate) -> tuple[str, str]:
        return f"search for {self.term!r} in `{candidate.control.selector}`", self.term


# -- the phase ----------------------------------------------------------------------------------


class GeneratorPhase:
    """Phase 2: the fragments the task's filters, sort and search need, each verified.

    After `run()`: `fragments` (verified ones, in run order: filters, sort, search), `intent`,
    and `error` (one line naming every need that got no fragment, else None).
    """

    def __init__(
        self,
        page: Page,
        url: str,
        task: str,
        needed: list[GeneratorName],
        *,
        item_selector: str,
        llm: LLM | None = None,
    ) -> None:
        self.url = url
        self.task = task
        self.needed = needed
        self.intent: TaskIntent = parse_intent(task)
        self.fragments: list[Fragment] = []
        self.error: str | None = None
        self._bench = _Bench(page, url, item_selector, llm)

    def _generators(self) -> tuple[list[_Generator], list[str]]:
        """The generators to run, and the needs the task gives nothing to work with."""
        bench, intent, task = self._bench, self.intent, self.task
        generators: list[_Generator] = []
        problems = []
        if "FilterGenerator" in self.needed:
            generators += [FilterGenerator(bench, task, value) for value in intent.filters]
            if not intent.filters:
                problems.append(
                    "FilterGenerator is needed but the task names no value to filter by"
                )
        if "SortGenerator" in self.needed:
            if intent.sort:
                generators.append(SortGenerator(bench, task, intent.sort))
            else:
                problems.append("SortGenerator is needed but the task names no order to sort by")
        if "SearchGenerator" in self.needed:
            if intent.search:
                generators.append(SearchGenerator(bench, task, intent.search))
            else:
                problems.append(
                    "SearchGenerator is needed but the task names nothing to search for"
                )
        return generators, problems

    async def run(self) -> AsyncIterator[Event]:
        """The events of finding, running and checking every fragment."""
        bench = self._bench
        yield Log(message=f"task intent: {self.intent.describe()}")
        generators, errors = self._generators()
        for problem in errors:
            yield Log(level="warning", message=problem)
        if generators:
            async for event in bench.load():
                yield event
            if not bench.ok:
                errors.append(f"the list ({bench.item_selector}) did not appear at {self.url}")
            else:
                async for event in self._generate(generators, errors):
                    yield event
        self.error = "; ".join(errors) or None

    async def _generate(
        self, generators: list[_Generator], errors: list[str]
    ) -> AsyncIterator[Event]:
        bench = self._bench
        async for event in bench.read():
            yield event
        bench.baseline = bench.items
        async for event in bench.find():
            yield event
        for generator in generators:
            async for event in generator.run():
                yield event
            if generator.fragment is not None:
                self.fragments.append(generator.fragment)
            if generator.error:
                errors.append(generator.error)
        done = [generator for generator in generators if generator.chosen is not None]
        if len(done) > 1:
            async for event in self._together(done, errors):
                yield event
        async for event in bench.load():  # leave the page as it was found
            yield event

    async def _together(self, done: list[_Generator], errors: list[str]) -> AsyncIterator[Event]:
        """Run every verified fragment in turn and check all of them on the final list."""
        bench = self._bench
        async for event in bench.load():
            yield event
        commands = [command for g in done if g.fragment for command in g.fragment.commands]
        async for event in bench.run_commands(commands):
            yield event
        if bench.ok:
            async for event in bench.read():
                yield event
            checks = [g.check(g.chosen, bench.items) for g in done if g.chosen is not None]
            verdict = Check(
                all(check.ok for check in checks), "; ".join(c.evidence for c in checks)
            )
        else:
            verdict = Check(
                False, f"the fragments {_summary(commands)} did not run one after another"
            )
        for event in bench.report("check_together", {"fragments": len(done)}, verdict):
            yield event
        if not verdict.ok:
            errors.append(f"the fragments work alone but not together: {verdict.evidence}")
