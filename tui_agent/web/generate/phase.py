"""The filter / sort / search phase: the fragments a task needs, each proved in the browser.

`GeneratorPhase(page, url, task, needed, item_selector=...)` reads the task's intent, finds the
page's controls, runs one generator per need (`fragments.py`) and, when several succeed, proves
them together on one page.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from playwright.async_api import Page

from tui_agent.events import Event, Log
from tui_agent.llm.client import LLM
from tui_agent.web.generate.fragments import (
    FilterGenerator,
    FragmentGenerator,
    SearchGenerator,
    SortGenerator,
)
from tui_agent.web.generate.list_checks import Check
from tui_agent.web.generate.proof import ProofBench
from tui_agent.web.page_wait import WAIT_CAP
from tui_agent.web.plan import Fragment, GeneratorName, TaskIntent, parse_intent


class GeneratorPhase:
    """The fragments the task's filters, sort and search need, each verified.

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
        item_siblings: str | int | None = None,
        llm: LLM | None = None,
        intent: TaskIntent | None = None,
        wait: float = WAIT_CAP,
    ) -> None:
        self.url = url
        self.task = task
        self.needed = needed
        self.intent: TaskIntent = intent or parse_intent(task)
        self.fragments: list[Fragment] = []
        self.error: str | None = None
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
        self, generators: list[FragmentGenerator], errors: list[str]
    ) -> AsyncIterator[Event]:
        bench = self._bench
        async for event in bench.read():
            yield event
        bench.baseline = bench.items
        async for event in bench.find():
            yield event
        generators = [split for generator in generators for split in self._split(generator)]
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

    def _split(self, generator: FragmentGenerator) -> list[FragmentGenerator]:
        """A filter of several words no control names as a whole ("outdoor eco") becomes one
        filter per word that a control does name ("outdoor", "eco")."""
        if not isinstance(generator, FilterGenerator) or generator.candidates():
            return [generator]
        words = generator.value.split()
        parts = [FilterGenerator(self._bench, self.task, word) for word in words]
        named = [part for part in parts if part.candidates()]
        return named if len(words) > 1 and named else [generator]

    async def _together(
        self, done: list[FragmentGenerator], errors: list[str]
    ) -> AsyncIterator[Event]:
        """Run every verified fragment in turn and check all of them on the final list."""
        bench = self._bench
        commands = [command for g in done if g.fragment for command in g.fragment.commands]

        def check_all(items: list[dict[str, Any]]) -> Check:
            checks = [g.check(g.chosen, items) for g in done if g.chosen is not None]
            return Check(all(c.ok for c in checks), "; ".join(c.evidence for c in checks))

        async for event in bench.prove(
            "check_together", {"fragments": len(done)}, commands, check_all
        ):
            yield event
        if not bench.verdict.ok:
            errors.append(f"the fragments work alone but not together: {bench.verdict.evidence}")
