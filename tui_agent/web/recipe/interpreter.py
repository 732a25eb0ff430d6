"""The recipe interpreter: a recipe's commands run in a Playwright page, as a stream of events.

Abstract targets resolve through the bindings. Every command is a ToolCall / ToolResult pair
and every saved item an ItemsExtracted of its own, so items stream out as they are read.
A failing item is logged (the selector and the item named) and skipped; a list that never
shows an item fails the run, naming LIST_ITEM and what the page shows instead. The stream ends
with the run's `RunOutcome` (see web.phase): its items, how it stopped or why it failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from tui_agent.events import Event, ItemsExtracted, Log, ToolCall, ToolResult
from tui_agent.web.page_wait import PROGRESS_EVERY, WAIT_CAP
from tui_agent.web.phase import Phase
from tui_agent.web.recipe import conditions
from tui_agent.web.recipe.details_parser import DetailsParser
from tui_agent.web.recipe.format import (
    Click,
    ClickIfExists,
    Condition,
    End,
    ExtractDetails,
    ForEachItemInList,
    MarkDone,
    Press,
    RecipeFile,
    Repeat,
    Save,
    Scroll,
    Select,
    TypeText,
    WaitFor,
)
from tui_agent.web.recipe.identity import ItemFinder, NextItem
from tui_agent.web.recipe.page_actions import ItemRun, Outcome, PageActions
from tui_agent.web.recipe.run_outcome import RunFailure, RunOutcome, StopReason
from tui_agent.web.recipe.step_failures import (
    BrowserGone,
    CommandFailed,
    HardFailure,
    ItemMoved,
    first_line,
)
from tui_agent.web.tool_events import tool_result

__all__ = ["RecipeInterpreter"]

NAVIGATING = ("Execution context was destroyed", "navigation", "Navigation")
"""Words of the errors a page gives while it is replaced by a navigation."""
MOVED_TRIES = 3
"""How often an item whose element left the page (a re-render) is found again and retried."""


class _Stop(Exception):
    def __init__(self, reason: StopReason) -> None:
        super().__init__(reason)
        self.reason = reason


class RecipeInterpreter:
    """Runs one recipe in `page`: `run()` yields its events, then its RunOutcome.

    `give_up_after` stops the run (stopped_reason "gave_up") once more soft failures than that
    happened (details that block the list would fail every item after the first).
    """

    def __init__(
        self,
        page: Page,
        recipe: RecipeFile,
        *,
        max_items: int | None = None,
        crashed: Callable[[], bool] = lambda: False,
        wait: float = WAIT_CAP,
        parser: DetailsParser | None = None,
        give_up_after: int | None = None,
    ) -> None:
        self.page = page
        self.bindings = recipe.bindings
        self.recipe = recipe.recipe
        self.max_items = max_items if max_items is not None else recipe.recipe.config.max_items
        self.give_up_after = give_up_after
        self._items: list[dict[str, Any]] = []
        self._failed = 0
        self._skipped: list[str] = []
        self._processed = 0
        """Items the loops went through, over the whole run (every page)."""
        self._commands = 0
        self._pages = 1
        """The page of the list being read (1, then one more per next-page click)."""
        self._most_shown = 0
        self._end_reached = False
        self._crashed = crashed
        self._parser = parser
        self._unparsed_said = False
        self._actions = PageActions(page, recipe.bindings, wait=wait)
        self._finder = ItemFinder(page, recipe.bindings)
        self._started = 0
        self._progress = 0
        """Items done, list growth and list changes so far: REPEAT stops when it stalls."""
        self._seen_items = False

    async def run(self) -> Phase[RunOutcome]:
        """The events of the whole recipe, then its outcome (the items saved so far stay in
        it when the run fails)."""
        reason: StopReason | None = None
        failure: RunFailure | None = None
        try:
            async for event in self._block(self.recipe.commands, None):
                yield event
            reason = "list_exhausted"
        except _Stop as stop:
            reason = stop.reason
        except HardFailure as exc:
            failure = RunFailure("RecipeFailed", str(exc))
        except BrowserGone as exc:
            failure = RunFailure("BrowserGone", str(exc))
        except PlaywrightError as exc:  # outside any one command: the run cannot go on
            error = self._classify(exc)
            gone = isinstance(error, BrowserGone)
            failure = RunFailure("BrowserGone" if gone else "RecipeFailed", str(error))
        yield RunOutcome(
            items=list(self._items),
            stopped_reason=reason,
            failure=failure,
            failed=self._failed,
            skipped=list(self._skipped),
            commands=self._commands,
            pages=self._pages,
            most_shown=self._most_shown,
            end_reached=self._end_reached,
        )

    async def _block(self, commands: list[Any], item: ItemRun | None) -> AsyncIterator[Event]:
        for command in commands:
            async for event in self._command(command, item):
                yield event

    def _call(self, name: str, arguments: dict[str, Any], item: int | None) -> ToolCall:
        self._commands += 1
        return ToolCall(call_id=f"c{self._commands}", name=name, arguments=arguments, item=item)

    async def _command(self, command: Any, item: ItemRun | None) -> AsyncIterator[Event]:
        step = item.ordinal if item else 0
        call = self._call(command.type, command.arguments(), item.ordinal if item else None)
        yield call
        began = time.monotonic()
        if isinstance(command, ForEachItemInList | Repeat):
            facts: dict[str, Any] = {"summary": ""}
            if isinstance(command, ForEachItemInList):
                loop = self._for_each(command, facts)
            else:
                loop = self._repeat(command, item, facts)
            try:
                async for event in loop:
                    yield event
            except _Stop as stop:
                yield tool_result(
                    call, began, f"{facts.pop('summary')}; stopped: {stop.reason}", facts
                )
                raise
            except HardFailure as exc:
                yield tool_result(call, began, str(exc), facts, ok=False)
                raise
            yield tool_result(call, began, facts.pop("summary"), facts)
            return
        work = asyncio.ensure_future(self._guarded(self._simple(command, item)))
        try:
            while not (await asyncio.wait({work}, timeout=PROGRESS_EVERY))[0]:
                waited = time.monotonic() - began
                what = self._actions.waiting or f"{command.type} to finish"
                yield Log(level="info", message=f"waiting for {what}: {waited:.1f} s")
            output, facts = work.result()
        except CommandFailed as exc:
            yield tool_result(
                call, began, str(exc), {"item": item.ref.key} if item else {}, ok=False
            )
            if item is None:
                raise HardFailure(f"{command.type} failed: {exc}") from None
            raise
        except HardFailure as exc:
            yield tool_result(call, began, str(exc), ok=False)
            raise
        finally:
            self._actions.waiting = ""
            if not work.done():
                work.cancel()
                with contextlib.suppress(asyncio.CancelledError, PlaywrightError):
                    await work
        if isinstance(command, ExtractDetails) and command.parse and item is not None:
            async for event in self._parse(item, facts):
                yield event
        yield tool_result(call, began, output, facts)
        if isinstance(command, Save) and item is not None and item.record is not None:
            yield ItemsExtracted(items=[item.record], step=step)
        if isinstance(command, End):
            self._end_reached = True
            raise _Stop("list_exhausted")

    async def _guarded(self, work: Awaitable[Any]) -> Any:
        """Await `work`; a dead browser is BrowserGone, other Playwright errors CommandFailed."""
        try:
            return await work
        except PlaywrightError as exc:
            raise self._classify(exc) from exc

    def _classify(self, exc: PlaywrightError) -> Exception:
        if self._crashed() or self.page.is_closed() or "has been closed" in str(exc):
            return BrowserGone("Chromium exited while the recipe ran (crashed or killed)")
        return CommandFailed(first_line(exc))

    async def _simple(self, command: Any, item: ItemRun | None) -> Outcome:
        actions = self._actions
        match command:
            case WaitFor(target="list", changed=False):
                await actions.wait_for_list(command.timeout)
                shown = (await self._next()).shown
                self._most_shown = max(self._most_shown, shown)
                return f"list loaded: {shown} items shown", {"shown": shown}
            case WaitFor():
                return await actions.wait_for(command, item)
            case Click(selector=None) if item is not None:
                return await actions.click_item(command, item)
            case Click():
                return await actions.click_selector(command, item)
            case ExtractDetails() if item is not None:
                return await actions.extract(item)
            case Save() if item is not None:
                return self._save(command, item)
            case MarkDone() if item is not None:
                self._finder.done(item.ref.key)
                return f"{item.describe()} done", {"item": item.ref.key}
            case Scroll():
                output, facts = await actions.scroll(command)
                self._progress += facts["grew"]
                return output, facts
            case ClickIfExists():
                try:
                    output, facts = await actions.click_if_exists(command)
                except HardFailure as exc:
                    raise HardFailure(f"page {self._pages + 1}: {exc}") from None
                self._progress += facts.get("changed", False)
                if command.selector is None and facts.get("changed"):
                    self._pages += 1
                    facts["page"] = self._pages
                return output, facts
            case TypeText() | Select() | Press():
                return await actions.interact(command)
            case End():
                return "end of the recipe", {}
        raise CommandFailed(f"{command.type} only works inside FOR_EACH_ITEM_IN_LIST")

    def _save(self, command: Save, item: ItemRun) -> Outcome:
        if item.record is None:
            raise CommandFailed("nothing to save: EXTRACT_DETAILS did not run for this item")
        self._items.append(item.record)
        output = f"saved {item.describe()} as {command.as_} #{len(self._items)}"
        return output, {"saved": len(self._items)}

    async def _next(self) -> NextItem:
        """The list's next unprocessed item; a navigation in progress is waited out."""
        for attempt in range(3):
            try:
                return await self._finder.next()
            except PlaywrightError as exc:
                error = self._classify(exc)
                if isinstance(error, BrowserGone):
                    raise error from exc
                if attempt == 2 or not any(word in str(exc) for word in NAVIGATING):
                    selector = self.bindings.LIST_ITEM
                    raise HardFailure(f'LIST_ITEM "{selector}" cannot be used: {error}') from exc
                await self.page.wait_for_load_state("domcontentloaded")
        raise AssertionError("unreachable")

    # -- loops -------------------------------------------------------------------------------

    async def _for_each(
        self, command: ForEachItemInList, facts: dict[str, Any]
    ) -> AsyncIterator[Event]:
        """Items one by one, the first shown one not done each time, until none is left.

        Its summary counts over the whole run, not only this page's pass."""
        moved: Counter[str] = Counter()
        while True:
            facts["summary"] = (
                f"{self._processed} items processed: {len(self._items)} saved, "
                f"{self._failed} failed"
            )
            self._check_max()
            found = await (self._next() if self._seen_items else self._first_items(command))
            if found.ref is None:
                return
            self._started += 1
            assert found.element is not None
            item = ItemRun(
                ref=found.ref,
                ordinal=self._started,
                element=found.element,
                list_url=self.page.url,
            )
            try:
                async for event in self._block(command.body, item):
                    yield event
            except ItemMoved as exc:
                moved[item.ref.key] += 1
                if moved[item.ref.key] < MOVED_TRIES:
                    self._started -= 1  # the number goes to the item found next
                    yield Log(level="info", message=f"{exc}: finding it again")
                    continue
                self._failed += 1
                yield self._soft_failure(f"{item.describe()} skipped: {exc} ({MOVED_TRIES} times)")
                self._give_up_if_too_many()
            except CommandFailed as exc:
                self._failed += 1
                yield self._soft_failure(f"{item.describe()} skipped: {exc}")
                self._give_up_if_too_many()
            finally:
                with contextlib.suppress(PlaywrightError):
                    await item.element.dispose()
            self._finder.done(item.ref.key)
            self._progress += 1
            self._processed += 1
            async for event in self._leave(item):
                yield event

    async def _first_items(self, command: ForEachItemInList) -> NextItem:
        found = await self._next()
        if not found.shown:
            condition = Condition(exists=self.bindings.LIST_ITEM)
            await self._actions.wait_for_list(command.timeout, condition)
            found = await self._next()
        self._seen_items = found.shown > 0
        return found

    def _check_max(self) -> None:
        if self.max_items is not None and len(self._items) >= self.max_items:
            raise _Stop("max_items")

    def _soft_failure(self, message: str) -> Log:
        """The warning a soft failure is shown as; it is kept for the outcome too."""
        self._skipped.append(message)
        return Log(level="warning", message=message)

    def _give_up_if_too_many(self) -> None:
        if self.give_up_after is not None and len(self._skipped) > self.give_up_after:
            raise _Stop("gave_up")

    async def _parse(self, item: ItemRun, facts: dict[str, Any]) -> AsyncIterator[Event]:
        """Have the model read DETAILS_SCHEMA's fields from the details' text (when there is a
        parser); fields a selector read keep their value."""
        schema = self.bindings.DETAILS_SCHEMA
        if item.record is None or not schema:
            return
        if self._parser is None:
            if not self._unparsed_said:
                self._unparsed_said = True
                yield Log(
                    level="info",
                    message="EXTRACT_DETAILS asks a model to read "
                    f"{', '.join(schema)} from the details' text, and no model is configured: "
                    "the text is kept unparsed",
                )
            return
        parsed = await self._parser.parse(self.recipe.id, schema, item.record.get("text") or "")
        if parsed.call is not None:
            yield parsed.call
        for name, value in parsed.fields.items():
            if item.record.get(name) in (None, ""):
                item.record[name] = value
        facts["parsed"] = "cache" if parsed.cached else "model"
        if parsed.error:
            facts["parse_error"] = parsed.error
            yield Log(level="info", message=f"{item.describe()}: {parsed.error}")

    async def _leave(self, item: ItemRun) -> AsyncIterator[Event]:
        """Close the details (CLOSE_DETAILS) or go back to the list after a navigation."""
        if self.page.url == item.list_url:
            problem = await self._guarded(self._actions.close_details())
            if problem:
                yield self._soft_failure(f"{item.describe()}: {problem}")
                self._give_up_if_too_many()
            return
        call = self._call("BACK", {"url": item.list_url}, item.ordinal)
        yield call
        began = time.monotonic()
        try:
            output, facts = await self._guarded(self._actions.back(item))
        except CommandFailed as exc:
            yield ToolResult(call_id=call.call_id, name="BACK", output=str(exc), ok=False)
            raise HardFailure(f"BACK to {item.list_url} failed: {exc}") from None
        yield tool_result(call, began, output, facts)

    async def _repeat(
        self, command: Repeat, item: ItemRun | None, facts: dict[str, Any]
    ) -> AsyncIterator[Event]:
        """The body again and again: `times` times, or until `until` holds or nothing changes."""
        limit = command.times or command.max_iterations
        iteration = 0
        why = f"{limit} iterations done"
        while iteration < limit:
            mark = self._progress
            async for event in self._block(command.body, item):
                yield event
            iteration += 1
            facts["summary"] = f"{iteration} iterations"
            if command.times is None and self._progress == mark:
                why = "an iteration changed nothing (the list is exhausted)"
                break
            if command.until is not None and await self._guarded(
                conditions.holds(self.page, command.until)
            ):
                why = f"until {command.until.describe()} holds"
                break
        facts["summary"] = f"{iteration} iterations; {why}"
