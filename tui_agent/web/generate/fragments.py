"""Filter, sort and search generators: recipe fragments that change the list as the task asks.

Each generator finds candidate controls among the page's (`controls.py`), writes the fragment
for one (SELECT / TYPE, then CLICK the submit or PRESS Enter, then WAIT_FOR the items; or CLICK
a checkbox, radio button, link, button or, once its toggle opened the menu, a dropdown's entry,
then WAIT_FOR the list to change) and keeps it only once `ProofBench.prove` ran it on a freshly
loaded page and the list changed as asked:
filter -> every item shows the chosen option, sort -> the items' values are in order, search ->
every item contains the term. With an `llm`, the model picks the control when no heuristic
match exists; its answer is checked against the controls found and proved the same way. Each
generator's `run()` is a phase (see web.phase) ending with its `FragmentOutcome`.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from tui_agent.events import Log
from tui_agent.llm.json_object import json_object_in
from tui_agent.web.generate.controls import (
    Control,
    Option,
    filter_controls,
    filter_matches,
    search_inputs,
    sort_matches,
)
from tui_agent.web.generate.list_checks import Check, check_filter, check_search, check_sort
from tui_agent.web.generate.proof import ProofBench
from tui_agent.web.phase import Phase, PhaseRun
from tui_agent.web.plan import SORT_KEYS, Fragment, GeneratorName

MAX_CANDIDATES = 3
"""Controls / options tried per need before giving up (each try is a page load)."""
KIND_WORDS = {
    "checkbox": "checkbox",
    "radio": "radio button",
    "links": "link in",
    "buttons": "button in",
    "dropdown": "dropdown",
    "input": "input",
    "select": "select",
}
"""How a description names the kind of control a fragment works."""


def option_label(option: Option) -> str:
    """An option's label without a trailing count ("Kitchen (60)" -> "Kitchen")."""
    return re.sub(r"\s*[(\[]\s*\d[\d,.]*\s*[)\]]\s*$", "", option.label).strip() or option.label


@dataclass(frozen=True)
class Candidate:
    """A control and what to do with it: an option to choose, or (inputs) None."""

    control: Control
    option: Option | None = None


@dataclass(frozen=True)
class FragmentOutcome:
    """A generator's verified fragment and the candidate it applies, or why there is none."""

    fragment: Fragment | None = None
    chosen: Candidate | None = None
    failure: str | None = None
    """One line, set exactly when there is no fragment."""


@dataclass(frozen=True)
class _Pick:
    """The model's pick of a control, or why there is none."""

    candidate: Candidate | None
    problem: str = ""


def _click(option: Option) -> dict[str, Any]:
    """The CLICK on an option that is clicked (a box, a link, a button, a menu entry)."""
    assert option.selector is not None
    command: dict[str, Any] = {"type": "CLICK", "selector": option.selector}
    if option.text:
        command["text"] = option.text
    return command


def _fragment_commands(
    candidate: Candidate, text: str | None, item_selector: str, *, twice: bool = False
) -> list[list[dict[str, Any]]]:
    """The ways to apply a candidate, most likely first: via its submit, or on its own (and,
    `twice`, clicked twice: a sort button whose first click orders the other way)."""
    control, option = candidate.control, candidate.option
    if control.kind not in ("select", "input"):
        assert option is not None
        changed = {"type": "WAIT_FOR", "target": "list", "changed": True}
        steps = [_click(option)]
        if control.kind == "dropdown" and control.opens:
            opened = {"type": "WAIT_FOR", "condition": {"exists": control.opens}}
            steps = [{"type": "CLICK", "selector": control.selector}, opened, *steps]
        variants = []
        if control.submit:
            variants.append([*steps, {"type": "CLICK", "selector": control.submit}, changed])
        variants.append([*steps, changed])
        if twice:
            variants.append([*steps, changed, *steps, changed])
        return variants
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


class FragmentGenerator(ABC):
    """Find candidates, write their fragments, keep the first that runs and is verified."""

    name: GeneratorName
    purpose: str

    def __init__(self, bench: ProofBench, task: str) -> None:
        self.bench = bench
        self.task = task

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
        """The fragment's description and option (`filterOption`)."""

    def text(self) -> str | None:
        """What a TYPE command types (search only)."""
        return None

    def variants(self, candidate: Candidate) -> list[list[dict[str, Any]]]:
        """The command lists that may apply `candidate`, most likely first."""
        return _fragment_commands(candidate, self.text(), self.bench.item_selector)

    async def run(self) -> Phase[FragmentOutcome]:
        """Try the candidates (or the model's pick): the first whose fragment is proved."""
        candidates = self.candidates()[:MAX_CANDIDATES]
        if not candidates:
            picked = PhaseRun(self._ask_model(), _Pick)
            async for event in picked:
                yield event
            if picked.outcome.candidate is None:
                failure = f"{self.name} could not {self.want()}: {picked.outcome.problem}"
                yield Log(level="warning", message=failure)
                yield FragmentOutcome(failure=failure)
                return
            candidates = [picked.outcome.candidate]
        tried = []
        for candidate in candidates:
            for commands in self.variants(candidate):
                proved = PhaseRun(self._prove(candidate, commands), Check)
                async for event in proved:
                    yield event
                verdict = proved.outcome
                if verdict.ok:
                    description, option = self.describe(candidate)
                    fragment = Fragment(
                        generator=self.name,
                        description=description,
                        target=candidate.control.selector,
                        option=option,
                        commands=commands,
                        verified=True,
                        evidence=verdict.evidence,
                    )
                    yield Log(message=f"{self.name}: {description}: {verdict.evidence}")
                    yield FragmentOutcome(fragment, candidate)
                    return
                tried.append(verdict.evidence)
        failure = f"{self.name} could not {self.want()}: " + "; ".join(dict.fromkeys(tried))
        yield Log(level="warning", message=failure)
        yield FragmentOutcome(failure=failure)

    def _prove(self, candidate: Candidate, commands: list[dict[str, Any]]) -> Phase[Check]:
        """Prove the candidate's fragment on a freshly loaded page."""
        return self.bench.prove(
            f"check_{self.purpose}",
            {"want": self.want()},
            commands,
            lambda items: self.check(candidate, items),
        )

    async def _ask_model(self) -> Phase[_Pick]:
        """No heuristic match: the model (if any) picks one of the controls found."""
        offered = self.offered()
        if not offered:
            kind = "text inputs" if self.purpose == "search" else "select controls"
            yield _Pick(None, f"the page has no {kind}")
            return
        if self.bench.llm is None:
            found = "; ".join(control.brief() for control in offered)
            yield _Pick(None, f"nothing on the page matches (found {found})")
            return
        reply = await self.bench.llm.complete(
            self._prompt(offered), want_json=True, purpose=f"{self.purpose} control"
        )
        yield reply.call
        candidate, problem = self._read_answer(reply.text, offered)
        if candidate is not None:
            yield Log(message=f"{self.name}: the model chose {self.describe(candidate)[0]}")
        yield _Pick(candidate, problem)

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
        answer = json_object_in(text)
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


class FilterGenerator(FragmentGenerator):
    """Narrows the list to one value: a select option whose label or value names it."""

    name: GeneratorName = "FilterGenerator"
    purpose = "filter"

    def __init__(self, bench: ProofBench, task: str, value: str) -> None:
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
        return check_filter(option_label(candidate.option), self.bench.baseline, after)

    def describe(self, candidate: Candidate) -> tuple[str, str]:
        assert candidate.option is not None
        label, selector = option_label(candidate.option), candidate.control.selector
        kind = candidate.control.kind
        how = (
            f"with `{selector}`"
            if kind == "select"
            else f"with the {KIND_WORDS[kind]} `{selector}`"
        )
        return f"filter to {label!r} {how}", candidate.option.value


class SortGenerator(FragmentGenerator):
    """Orders the list: a select option whose meaning is the wanted order."""

    name: GeneratorName = "SortGenerator"
    purpose = "sort"

    def __init__(self, bench: ProofBench, task: str, sort: str) -> None:
        super().__init__(bench, task)
        self.sort = sort

    def want(self) -> str:
        return f"sort the list by {SORT_KEYS[self.sort]}"

    def offered(self) -> list[Control]:
        return [control for control in self.bench.controls if control.kind != "input"]

    def candidates(self) -> list[Candidate]:
        return [Candidate(c, o) for c, o in sort_matches(self.bench.controls, self.sort)]

    def variants(self, candidate: Candidate) -> list[list[dict[str, Any]]]:
        toggles = candidate.control.kind in ("buttons", "links")
        return _fragment_commands(candidate, None, self.bench.item_selector, twice=toggles)

    def check(self, candidate: Candidate, after: list[dict[str, Any]]) -> Check:
        return check_sort(self.sort, after)

    def describe(self, candidate: Candidate) -> tuple[str, str]:
        assert candidate.option is not None
        label, selector = candidate.option.label, candidate.control.selector
        kind = candidate.control.kind
        how = (
            f"with `{selector}`"
            if kind == "select"
            else f"with the {KIND_WORDS[kind]} `{selector}`"
        )
        return f"sort by {label!r} {how}", candidate.option.value


class SearchGenerator(FragmentGenerator):
    """Searches the list: types the term into the search box and submits it."""

    name: GeneratorName = "SearchGenerator"
    purpose = "search"

    def __init__(self, bench: ProofBench, task: str, term: str) -> None:
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
