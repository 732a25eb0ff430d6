"""The scrape agent: from a URL and a task to a verified recipe, then the items.

Phases, each a PhaseStarted / PhaseFinished pair with its duration: "load" (Chromium opens the
page), "plan" (the offline planner, and with a model the StrategyPlanner given the offline
findings as hints; every probe a ToolCall / ToolResult), "generators" (filter / sort / search
fragments, only when the strategy asks for them), "recipe" (bindings + commands, dry-run on two
items, one repair) and "list" (the recipe interpreter; items stream into the table). The strategy
and the recipe are recorded as Artifacts (the strategy again, as version 2, once generators
proved fragments: it then carries them as {filterTarget, filterOption, fragment} JSON); the
recipe can be saved for `tui-agent recipe run`, which needs no model.

Every wait for a page to render (after load, clicks and page changes) is capped by `wait`
seconds and shown as it goes. A task in a language the offline patterns do not read is read by
the model when there is one; with a model, details no selector names are parsed into fields
by it (see recipe.details_parser). A next page that fails after items were saved ends the
session "partial", keeping them.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlparse

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from tui_agent.agents.recipe_run import LOAD_TIMEOUT_MS, extract_phase
from tui_agent.events import (
    Artifact,
    Error,
    Event,
    Log,
    PhaseFinished,
    PhaseStarted,
    SessionEnded,
)
from tui_agent.llm.client import LLM
from tui_agent.web.browser import Browser, BrowserError
from tui_agent.web.generate import (
    FragmentsOutcome,
    FragmentsPhase,
    RecipeOutcome,
    RecipeWriter,
)
from tui_agent.web.navigation import goto
from tui_agent.web.page_wait import WAIT_CAP
from tui_agent.web.phase import Phase, PhaseRun
from tui_agent.web.plan import (
    Fragment,
    OfflinePlanner,
    PlanOutcome,
    Strategy,
    StrategyPlanner,
    TaskIntent,
    intent_prompt,
    known_language,
    parse_intent,
    read_intent,
)
from tui_agent.web.probe import Probes
from tui_agent.web.recipe import DetailsCache, DetailsParser, RecipeFile, RecipeInterpreter

DEFAULT_MAX_TOOL_CALLS = 16
OutcomeT = TypeVar("OutcomeT")


class _Failed(Exception):
    """A phase failed: its message ends the session."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind


def page_name(url: str) -> str:
    """`/panel on 127.0.0.1:8000`: the path first (what tells one page of a site from
    another, even where a title is cut short), then the host."""
    parts = urlparse(url)
    if not parts.netloc:
        return url
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.path.rstrip('/') or '/'}{query} on {parts.netloc}"


@dataclass(frozen=True)
class TaskReading:
    """The task's intent as the run uses it, and the item cap that follows from it."""

    intent: TaskIntent
    max_items: int | None


@dataclass(frozen=True)
class _Written:
    """The recipe accepted, and how many items its dry run saved."""

    recipe: RecipeFile
    tried: int

    def summary(self) -> str:
        return f"dry run saved {self.tried} items"


class ScrapeAgent:
    """Runs the phases of one scrape; `run()` yields the session's events after SessionStarted."""

    def __init__(
        self,
        url: str,
        task: str,
        *,
        llm: LLM | None,
        offline_first: bool = True,
        max_items: int | None,
        max_items_given: bool = False,
        save_recipe: Path | None = None,
        max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS,
        wait: float = WAIT_CAP,
        parse_details: bool = False,
        cache: DetailsCache | None = None,
    ) -> None:
        self.url = url
        self.task = task
        self.llm = llm
        self.offline_first = offline_first or llm is None
        self.max_items = max_items
        self.max_items_given = max_items_given
        self.save_recipe = save_recipe
        self.max_tool_calls = max_tool_calls
        self.wait = wait
        self.parse_details = parse_details
        self.parser = DetailsParser(llm, cache) if llm is not None and cache is not None else None
        self.intent: TaskIntent = parse_intent(task)
        """The task's intent as the offline patterns read it."""

    async def run(self, browser: Browser | None = None) -> AsyncIterator[Event]:
        """The session's events, in `browser` (not yet started; a default one if None)."""
        browser = browser or Browser()
        try:
            async for event in self._phases(browser):
                yield event
        except _Failed as failure:
            yield Error(message=failure.message, kind=failure.kind)
            yield SessionEnded(status="failed", stopped_reason="error", summary=failure.message)
        finally:
            await browser.close()

    async def _phases(self, browser: Browser) -> AsyncIterator[Event]:
        yield PhaseStarted(phase="load", detail=self.url)
        began = time.monotonic()
        try:
            try:
                await browser.start()
            except BrowserError as exc:
                raise _Failed(str(exc), "BrowserError") from None
            page = await self._open(browser)
        except _Failed:
            yield PhaseFinished(phase="load", ok=False, duration=time.monotonic() - began)
            raise
        summary = f'"{await page.title()}" ({page.url})'
        yield PhaseFinished(phase="load", duration=time.monotonic() - began, summary=summary)
        reading = PhaseRun(self._read_task(), TaskReading)
        async for event in reading:
            yield event
        intent, max_items = reading.outcome.intent, reading.outcome.max_items
        planned = PhaseRun(self._plan(page, intent), Strategy)
        async for event in self._timed("plan", self.task, planned, _strategy_summary):
            yield event
        strategy = planned.outcome
        assert strategy.list_item is not None
        fragments: list[Fragment] = []
        if strategy.needed_generators:
            needed = list(strategy.needed_generators)
            generators = FragmentsPhase(
                page,
                self.url,
                self.task,
                needed,
                item_selector=strategy.list_item,
                item_siblings=strategy.list_item_siblings,
                llm=self.llm,
                intent=intent,
                wait=self.wait,
            )
            made = PhaseRun(generators.run(), FragmentsOutcome)
            async for event in self._timed("generators", ", ".join(needed), made, lambda _: ""):
                yield event
            fragments = made.outcome.fragments
            if made.outcome.failure:
                yield Log(level="warning", message=made.outcome.failure)
            if fragments:
                yield self._strategy_with(strategy, fragments)
        written = PhaseRun(self._recipe(browser, strategy, fragments, max_items), _Written)
        detail = "bindings + commands, dry run"
        async for event in self._timed("recipe", detail, written, _Written.summary):
            yield event
        await page.context.close()
        run_page = await self._open(browser)
        interpreter = RecipeInterpreter(
            run_page,
            written.outcome.recipe,
            max_items=max_items,
            crashed=lambda: browser.crashed,
            wait=self.wait,
            parser=self.parser,
        )
        async for event in extract_phase(interpreter):
            yield event

    async def _timed(
        self,
        phase: str,
        detail: str,
        work: PhaseRun[OutcomeT],
        summary: Callable[[OutcomeT], str],
    ) -> AsyncIterator[Event]:
        """`work`'s events between PhaseStarted and PhaseFinished (its summary line from the
        outcome); a _Failed ends it not ok."""
        yield PhaseStarted(phase=phase, detail=detail)
        began = time.monotonic()
        try:
            async for event in work:
                yield event
        except _Failed:
            yield PhaseFinished(phase=phase, ok=False, duration=time.monotonic() - began)
            raise
        duration = time.monotonic() - began
        yield PhaseFinished(phase=phase, duration=duration, summary=summary(work.outcome))

    async def _open(self, browser: Browser) -> Page:
        """A fresh page on the URL; a _Failed naming why it could not load."""
        try:
            page = await browser.page()
            response = await goto(page, self.url, timeout=LOAD_TIMEOUT_MS)
        except (BrowserError, PlaywrightError) as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            message = (
                reason if isinstance(exc, BrowserError) else f"cannot load {self.url}: {reason}"
            )
            raise _Failed(message, "PageLoadError") from None
        if response is not None and response.status >= 400:
            message = f"{self.url} answered HTTP {response.status} {response.status_text}".strip()
            raise _Failed(f"{message}: not a page to plan on", "PageLoadError")
        return page

    async def _read_task(self) -> Phase[TaskReading]:
        """The task's intent: read offline in the languages the patterns know; by the model
        (when there is one) for a task in another language."""
        offline = TaskReading(self.intent, self.max_items)
        if self.llm is None or known_language(self.task):
            yield offline
            return
        reply = await self.llm.complete(
            intent_prompt(self.task), want_json=True, purpose="task intent"
        )
        yield reply.call
        intent = read_intent(reply.text)
        if intent is None:
            yield Log(
                level="warning",
                message=f"the model's reading of the task is not usable ({reply.text[:80]!r}): "
                f"reading it offline ({self.intent.describe()})",
            )
            yield offline
            return
        max_items = self.max_items
        if not self.max_items_given and intent.max_items is not None:
            max_items = intent.max_items
        yield Log(message=f"task intent (read by the model): {intent.describe()}")
        yield TaskReading(intent, max_items)

    def _strategy_with(self, strategy: Strategy, fragments: list[Fragment]) -> Artifact:
        """The strategy again, now carrying the verified fragments in the FilterGenerator's
        JSON shape ({filterTarget, filterOption, fragment})."""
        shapes = [
            {"generator": fragment.generator, **fragment.to_spec_json()} for fragment in fragments
        ]
        content = (
            strategy.to_markdown()
            + "\n### GENERATOR FRAGMENTS\n```json\n"
            + json.dumps(shapes, indent=2, ensure_ascii=False)
            + "\n```\n"
        )
        described = "; ".join(fragment.description for fragment in fragments)
        return Artifact(
            name="strategy",
            content=content,
            format="markdown",
            version=2,
            origin="generators (verified fragments)",
            summary=f"{_strategy_summary(strategy)} · {described}",
        )

    async def _plan(self, page: Page, intent: TaskIntent) -> Phase[Strategy]:
        """The offline planner (unless --planner llm), then the model given its findings."""
        probes = Probes(page, wait=self.wait)
        chosen: PlanOutcome | None = None
        origin = "offline planner"
        if self.offline_first:
            offline = OfflinePlanner(probes, self.task, self.url, wait=self.wait, intent=intent)
            planned = PhaseRun(offline.run(), PlanOutcome)
            async for event in planned:
                yield event
            chosen = planned.outcome
            if chosen.failure and self.llm is not None:
                yield Log(level="warning", message=f"offline planner: {chosen.failure}")
        if self.llm is not None:
            planner = StrategyPlanner(
                self.llm,
                probes,
                self.task,
                self.url,
                max_tool_calls=self.max_tool_calls,
                hints=chosen.strategy if chosen else None,
            )
            modelled = PhaseRun(planner.run(), PlanOutcome)
            async for event in modelled:
                yield event
            if modelled.outcome.strategy is not None:
                chosen, origin = modelled.outcome, f"model planner ({self.llm.model})"
            elif chosen is not None and chosen.strategy is not None:
                yield Log(
                    level="warning",
                    message=f"model planner: {modelled.outcome.failure}; "
                    "using the offline planner's strategy",
                )
            else:
                raise _Failed(f"no strategy: {modelled.outcome.failure}", "PlannerFailed")
        if chosen is None or chosen.strategy is None:
            why = chosen.failure if chosen else "the offline planner found no list to extract"
            raise _Failed(f"no strategy: {why}", "PlannerFailed")
        strategy = chosen.strategy
        yield Artifact(
            name="strategy",
            content=chosen.output or strategy.to_markdown(),
            format="markdown",
            origin=origin,
            summary=_strategy_summary(strategy),
        )
        yield strategy

    async def _recipe(
        self,
        browser: Browser,
        strategy: Strategy,
        fragments: list[Fragment],
        max_items: int | None,
    ) -> Phase[_Written]:
        generator = RecipeWriter(
            browser,
            self.url,
            strategy,
            self.task,
            fragments=fragments,
            max_items=max_items,
            llm=self.llm,
            wait=self.wait,
            parser=self.parser,
            parse_details=self.parse_details,
        )
        written = PhaseRun(generator.run(), RecipeOutcome)
        async for event in written:
            yield event
        recipe = written.outcome.recipe
        if recipe is None:
            raise _Failed(f"no recipe: {written.outcome.failure}", "RecipeFailed")
        text = json.dumps(recipe.to_json(), indent=2, ensure_ascii=False)
        tried = len(written.outcome.dry_run_items)
        yield Artifact(
            name="recipe",
            content=text,
            format="json",
            origin="recipe generator" + (f" ({self.llm.model})" if self.llm else " (offline)"),
            summary=f"{len(recipe.recipe.commands)} commands; dry run: {tried} items",
        )
        if self.save_recipe is not None:
            try:
                Path(self.save_recipe).write_text(text + "\n", encoding="utf-8")
            except OSError as exc:
                yield Log(level="warning", message=f"could not save the recipe: {exc}")
            else:
                yield Log(
                    message=f"saved the recipe to {self.save_recipe} "
                    f"(run it again without a model: tui-agent recipe run "
                    f"{self.save_recipe} --url {self.url})"
                )
        yield _Written(recipe, tried)


def _strategy_summary(strategy: Strategy) -> str:
    fields = sorted({*strategy.details_fields, *strategy.item_fields})
    growth = (
        "pagination"
        if strategy.pagination_button
        else "load more"
        if strategy.load_more_button
        else "infinite scroll"
        if strategy.scroll_loads_more
        else "one page"
    )
    return (
        f"{strategy.list_item} · {strategy.click_behavior or 'no click'} · {growth} · "
        f"{len(fields)} fields"
    )
