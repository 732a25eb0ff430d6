"""The filter / sort / search phase: the fragments a task needs, each proved in the browser.

`FragmentsPhase(page, url, task, needed, item_selector=...)` reads the task's intent, finds the
page's controls, runs one generator per need (`fragments.py`) and, when several succeed, proves
them together on one page. A page that shows no list until its form is used gets the form's
fragments instead (filled from the task as the planner did, kept once the list then shows).
Its `run()` is a phase (see web.phase) ending with the `FragmentsOutcome`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import Page

from tui_agent.events import Log
from tui_agent.llm.client import LLM
from tui_agent.web.generate.fragments import (
    Candidate,
    FilterGenerator,
    FragmentGenerator,
    FragmentOutcome,
    SearchGenerator,
    SortGenerator,
)
from tui_agent.web.generate.list_checks import Check
from tui_agent.web.generate.proof import LOAD_TIMEOUT_MS, ControlsFound, ListRead, ProofBench
from tui_agent.web.navigation import goto
from tui_agent.web.page_wait import WAIT_CAP
from tui_agent.web.phase import Phase, PhaseRun
from tui_agent.web.plan import Fragment, GeneratorName, TaskIntent, parse_intent
from tui_agent.web.plan.page_forms import FormFill, fill_form
from tui_agent.web.recipe import CommandFailed


@dataclass(frozen=True)
class FragmentsOutcome:
    """The verified fragments (in run order: filters, sort, search) and why each need that got
    none got none."""

    fragments: list[Fragment] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def failure(self) -> str | None:
        """One line naming every need that got no fragment; None when each got one."""
        return "; ".join(self.problems) or None


class FragmentsPhase:
    """The fragments the task's filters, sort and search need, each verified."""

    def __init__(
        self,
        page: Page,
        url: str,
        task: str,
        needed: list[GeneratorName],
        *,
        item_selector: str,
        item_siblings: str | int | None = None,
        llm: LLM | None = None,
        intent: TaskIntent | None = None,
        wait: float = WAIT_CAP,
    ) -> None:
        self.url = url
        self.task = task
        self.needed = needed
        self.intent: TaskIntent = intent or parse_intent(task)
        self._bench = ProofBench(
            page, url, item_selector, llm, item_siblings=item_siblings, wait=wait
        )

    def _generators(self) -> tuple[list[FragmentGenerator], list[str]]:
        """The generators to run, and the needs the task gives nothing to work with."""
        bench, intent, task = self._bench, self.intent, self.task
        generators: list[FragmentGenerator] = []
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

    async def run(self) -> Phase[FragmentsOutcome]:
        """The events of finding, running and checking every fragment, then what they gave."""
        bench = self._bench
        yield Log(message=f"task intent: {self.intent.describe()}")
        arrived = PhaseRun(bench.arrive(), Check)
        async for event in arrived:
            yield event
        if not arrived.outcome.ok:  # the list may show only once the page's form is used
            formed = PhaseRun(self._form_first(), FragmentsOutcome)
            async for event in formed:
                yield event
            if formed.outcome.fragments:
                yield formed.outcome
                return
        generators, problems = self._generators()
        for problem in problems:
            yield Log(level="warning", message=problem)
        if not generators:
            yield FragmentsOutcome(problems=problems)
            return
        if not arrived.outcome.ok:  # a list later than the page settled: waited for longer
            loaded = PhaseRun(bench.load(), Check)
            async for event in loaded:
                yield event
            if not loaded.outcome.ok:
                problem = f"the list ({bench.item_selector}) did not appear at {self.url}"
                yield FragmentsOutcome(problems=[*problems, problem])
                return
        generated = PhaseRun(self._generate(generators), FragmentsOutcome)
        async for event in generated:
            yield event
        outcome = generated.outcome
        yield FragmentsOutcome(outcome.fragments, [*problems, *outcome.problems])

    async def _form_first(self) -> Phase[FragmentsOutcome]:
        """The list shows only once the page's form is used: fill it from the task (as the
        planner did), and keep its fragments when the list then shows."""
        bench = self._bench
        filled = FormFill()

        async def work() -> tuple[str, dict[str, Any]]:
            nonlocal filled
            await goto(bench.page, self.url, wait_until="load", timeout=LOAD_TIMEOUT_MS)
            filled = await fill_form(bench.page, self.task, self.intent, wait=bench.wait)
            if not filled.steps:
                raise CommandFailed("no form control on the page is named by the task")
            await bench.actions.wait_for_list(max(LOAD_TIMEOUT_MS, int(bench.wait * 1000)))
            return filled.describe(), {"steps": len(filled.steps)}

        used = PhaseRun(bench.step("fill_form", {"url": self.url}, work), Check)
        async for event in used:
            yield event
        if not used.outcome.ok:
            problem = f"the list ({bench.item_selector}) did not appear at {self.url}"
            yield FragmentsOutcome(problems=[f"{problem}: {used.outcome.evidence}"])
            return
        listed = PhaseRun(bench.read(), ListRead)
        async for event in listed:
            yield event
        shown = len(listed.outcome.items)
        evidence = f"the form gave a list of {shown} items"
        fragments = [
            fragment.model_copy(update={"verified": bool(shown), "evidence": evidence})
            for fragment in filled.fragments()
        ]
        for fragment in fragments:
            yield Log(message=f"{fragment.generator}: {fragment.description}: {evidence}")
        yield FragmentsOutcome(fragments if shown else [], [] if shown else [evidence])

    async def _generate(self, generators: list[FragmentGenerator]) -> Phase[FragmentsOutcome]:
        bench = self._bench
        listed = PhaseRun(bench.read(), ListRead)
        async for event in listed:
            yield event
        bench.baseline = listed.outcome.items
        found = PhaseRun(bench.find(), ControlsFound)
        async for event in found:
            yield event
        bench.controls = found.outcome.controls
        generators = [split for generator in generators for split in self._split(generator)]
        fragments: list[Fragment] = []
        problems: list[str] = []
        done: list[tuple[FragmentGenerator, Candidate]] = []
        for generator in generators:
            ran = PhaseRun(generator.run(), FragmentOutcome)
            async for event in ran:
                yield event
            outcome = ran.outcome
            if outcome.fragment is not None and outcome.chosen is not None:
                fragments.append(outcome.fragment)
                done.append((generator, outcome.chosen))
            if outcome.failure:
                problems.append(outcome.failure)
        if len(done) > 1:
            together = PhaseRun(self._together(done, fragments), Check)
            async for event in together:
                yield event
            if not together.outcome.ok:
                evidence = together.outcome.evidence
                problems.append(f"the fragments work alone but not together: {evidence}")
        async for event in PhaseRun(bench.load(), Check):  # leave the page as it was found
            yield event
        yield FragmentsOutcome(fragments, problems)

    def _split(self, generator: FragmentGenerator) -> list[FragmentGenerator]:
        """A filter of several words no control names as a whole ("outdoor eco") becomes one
        filter per word that a control does name ("outdoor", "eco")."""
        if not isinstance(generator, FilterGenerator) or generator.candidates():
            return [generator]
        words = generator.value.split()
        parts = [FilterGenerator(self._bench, self.task, word) for word in words]
        named: list[FragmentGenerator] = [part for part in parts if part.candidates()]
        return named if len(words) > 1 and named else [generator]

    async def _together(
        self, done: list[tuple[FragmentGenerator, Candidate]], fragments: list[Fragment]
    ) -> Phase[Check]:
        """Run every verified fragment in turn and check all of them on the final list."""
        commands = [command for fragment in fragments for command in fragment.commands]

        def check_all(items: list[dict[str, Any]]) -> Check:
            checks = [generator.check(chosen, items) for generator, chosen in done]
            return Check(all(c.ok for c in checks), "; ".join(c.evidence for c in checks))

        async for item in self._bench.prove(
            "check_together", {"fragments": len(done)}, commands, check_all
        ):
            yield item
