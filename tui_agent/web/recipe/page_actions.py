"""What each recipe command does in the page: waits, clicks, reads, scrolls, form input.

Each action returns an English line and its facts, or raises CommandFailed naming the binding
or selector that did not work (HardFailure when the list itself is missing).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from playwright.async_api import ElementHandle, Page
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeout

from tui_agent.web.recipe import conditions
from tui_agent.web.recipe.diagnose import describe_page
from tui_agent.web.recipe.extract import EXTRACT_JS, details_args
from tui_agent.web.recipe.identity import ItemRef
from tui_agent.web.recipe.model import (
    Bindings,
    Click,
    ClickIfExists,
    Condition,
    Press,
    Scroll,
    Select,
    TypeText,
    WaitFor,
)
from tui_agent.web.recipe.step_failures import CommandFailed, HardFailure, ItemMoved, seconds

Outcome = tuple[str, dict[str, Any]]
BACK_TIMEOUT_MS = 30_000


@dataclass
class ItemRun:
    """The item a FOR_EACH_ITEM_IN_LIST body works on."""

    ref: ItemRef
    ordinal: int
    element: ElementHandle
    list_url: str
    record: dict[str, Any] | None = None

    def describe(self) -> str:
        return f"item {self.ordinal} {self.ref.describe()}"


class PageActions:
    """The page-side work of the commands, with targets resolved through `bindings`."""

    def __init__(self, page: Page, bindings: Bindings) -> None:
        self.page = page
        self.bindings = bindings
        self._stopped_growing: conditions.Signature | None = None

    # -- waiting ---------------------------------------------------------------------------

    async def wait_for(self, command: WaitFor, item: ItemRun | None) -> Outcome:
        timeout = command.timeout
        if command.condition is not None:
            described = command.condition.describe()
            await self._wait(command.condition, timeout, f"condition {described}")
            return f"{described}: holds", {}
        if command.target == "page":
            condition = self.bindings.page_loaded()
            await self._wait(condition, timeout, f"PAGE_LOADED ({condition.describe()})")
            return f"page loaded: {self.page.url}", {"url": self.page.url}
        if command.target == "list":
            await self.wait_for_list(timeout)
            return "list loaded", {}
        assert item is not None
        return await self._wait_for_details(item, timeout)

    async def _wait(
        self,
        condition: Condition,
        timeout: int,
        what: str,
        scope: ElementHandle | None = None,
    ) -> None:
        try:
            await conditions.wait(self.page, condition, timeout, scope=scope)
        except PlaywrightTimeout:
            raise CommandFailed(f"{what} did not hold within {seconds(timeout)}") from None

    async def wait_for_list(self, timeout: int, condition: Condition | None = None) -> None:
        """Wait for LIST_LOADED (or `condition`); a HardFailure says what the page shows."""
        try:
            await conditions.wait(self.page, condition or self.bindings.list_loaded(), timeout)
        except PlaywrightTimeout:
            raise HardFailure(await self.no_list_message(timeout)) from None

    async def no_list_message(self, timeout: int) -> str:
        selector = self.bindings.LIST_ITEM
        seen = await describe_page(self.page)
        custom = self.bindings.LIST_LOADED
        if custom is not None:
            waited = f"LIST_LOADED ({custom.describe()}) did not hold within {seconds(timeout)}"
            return f'{waited} (LIST_ITEM "{selector}"); at {seen}'
        waited = f"matched nothing within {seconds(timeout)}"
        return f'no list items: LIST_ITEM "{selector}" {waited} at {seen}'

    async def _wait_for_details(self, item: ItemRun, timeout: int) -> Outcome:
        behaviour = self.bindings.CLICK_BEHAVIOR
        condition = self.bindings.details_loaded()
        if behaviour == "inline":
            condition = condition or Condition(exists=":scope > *")
            what = f"DETAILS ({condition.describe()}) in {item.describe()}"
            await self._wait(condition, timeout, what, item.element)
            return f"details shown in {item.describe()}", {}
        if behaviour == "navigates":
            condition = condition or self.bindings.page_loaded()
            await self._wait(condition, timeout, f"DETAILS_LOADED ({condition.describe()})")
            return f"details page loaded: {self.page.url}", {"url": self.page.url}
        assert condition is not None and self.bindings.DETAILS_PANEL is not None
        panel = (self.bindings.DETAILS_PANEL, item.ref.panel)
        try:
            await conditions.wait(self.page, condition, timeout, panel=panel)
        except PlaywrightTimeout:
            if await conditions.holds(self.page, condition):
                raise CommandFailed(
                    f'DETAILS_PANEL "{panel[0]}" still showed the previous details '
                    f"{seconds(timeout)} after the click"
                ) from None
            raise CommandFailed(
                f"DETAILS_LOADED ({condition.describe()}) did not hold within {seconds(timeout)}"
            ) from None
        return f"details shown for {item.describe()}", {}

    # -- clicking ----------------------------------------------------------------------------

    async def click_item(self, command: Click, item: ItemRun) -> Outcome:
        url = self.page.url
        try:
            await item.element.click(timeout=command.timeout)
        except PlaywrightTimeout:
            raise CommandFailed(
                f'LIST_ITEM "{self.bindings.LIST_ITEM}" {item.describe()} could not be clicked '
                f"within {seconds(command.timeout)}"
            ) from None
        except PlaywrightError as exc:
            if "not attached" not in str(exc):
                raise
            raise ItemMoved(f"{item.describe()} left the page before the click") from None
        if self.bindings.CLICK_BEHAVIOR == "navigates":
            try:
                await self.page.wait_for_url(
                    lambda now: now != url, wait_until="commit", timeout=command.timeout
                )
            except PlaywrightTimeout:
                raise CommandFailed(
                    f"clicking {item.describe()} did not navigate within "
                    f"{seconds(command.timeout)} (CLICK_BEHAVIOR navigates)"
                ) from None
        return f"clicked {item.describe()}", {"item": item.ref.key}

    async def click_selector(self, command: Click, item: ItemRun | None) -> Outcome:
        assert command.selector is not None
        try:
            if item is not None and command.within == "item":
                inside = await item.element.wait_for_selector(
                    command.selector, timeout=command.timeout
                )
                assert inside is not None  # state "visible" never gives None
                await inside.click(timeout=command.timeout)
            else:
                await self.page.locator(command.selector).first.click(timeout=command.timeout)
        except PlaywrightTimeout:
            raise CommandFailed(
                f'"{command.selector}" could not be clicked within {seconds(command.timeout)}'
            ) from None
        await self._settle()
        return f'clicked "{command.selector}"', {}

    async def click_if_exists(self, command: ClickIfExists) -> Outcome:
        """Click a shown, enabled match and wait for the list to change (facts: changed)."""
        selector = command.selector or self.bindings.NEXT_PAGE_BUTTON
        assert selector is not None
        index = await self.page.evaluate(conditions.FIND_ENABLED_JS, selector)
        if index < 0:
            return f'no shown, enabled "{selector}": nothing clicked', {"clicked": False}
        before = await conditions.list_signature(self.page, self.bindings)
        try:
            await self.page.locator(selector).nth(index).click(timeout=command.timeout)
        except PlaywrightTimeout:
            raise CommandFailed(
                f'"{selector}" could not be clicked within {seconds(command.timeout)}'
            ) from None
        try:
            await conditions.wait_list_changed(self.page, self.bindings, before, command.timeout)
        except PlaywrightTimeout:
            waited = seconds(command.timeout)
            output = f'clicked "{selector}" but the list did not change within {waited}'
            return output, {"clicked": True, "changed": False}
        await self._settle()
        return f'clicked "{selector}": the list changed', {"clicked": True, "changed": True}

    async def interact(self, command: TypeText | Select | Press) -> Outcome:
        try:
            if isinstance(command, TypeText):
                target = self.page.locator(command.selector).first
                await target.fill(command.text, timeout=command.timeout)
                done = f'typed "{command.text}" into "{command.selector}"'
            elif isinstance(command, Select):
                target = self.page.locator(command.selector).first
                if command.value is not None:
                    await target.select_option(value=command.value, timeout=command.timeout)
                else:
                    await target.select_option(label=command.label, timeout=command.timeout)
                done = f'selected "{command.value or command.label}" in "{command.selector}"'
            elif command.selector is not None:
                target = self.page.locator(command.selector).first
                await target.press(command.key, timeout=command.timeout)
                done = f'pressed {command.key} in "{command.selector}"'
            else:
                await self.page.keyboard.press(command.key)
                done = f"pressed {command.key}"
        except PlaywrightTimeout:
            raise CommandFailed(
                f'"{command.selector}" was not ready within {seconds(command.timeout)}'
            ) from None
        await self._settle()
        return done, {}

    async def _settle(self) -> None:
        """Let a navigation an action started reach its new document."""
        await self.page.wait_for_load_state("domcontentloaded")

    # -- reading and moving ------------------------------------------------------------------

    async def extract(self, item: ItemRun) -> Outcome:
        """Read the details into `item.record`: named fields, link, content and text."""
        behaviour = self.bindings.CLICK_BEHAVIOR
        inline = behaviour == "inline"
        root = item.element if inline else None
        details = await self.page.evaluate(EXTRACT_JS, details_args(self.bindings, root))
        if details is None:
            where = f'DETAILS_PANEL "{self.bindings.DETAILS_PANEL}"'
            raise CommandFailed(f"{item.describe() if inline else where} is not shown")
        record: dict[str, Any] = {**item.ref.fields, **details["fields"]}
        navigated = behaviour == "navigates"
        record.setdefault("link", item.ref.href or (self.page.url if navigated else None))
        if self.bindings.DETAILS_CONTENT:
            record.setdefault("content", details["content"])
        record.setdefault("text", details["text"])
        item.record = record
        missing = item.ref.missing + details["missing"]
        named = len(self.bindings.ITEM_FIELDS) + len(self.bindings.DETAILS_FIELDS)
        output = f"read {named - len(missing)}/{named} fields of {item.describe()}"
        if missing:
            output += f" (not shown: {', '.join(missing)})"
        return output, {"missing": missing, "characters": len(details["text"])}

    async def scroll(self, command: Scroll) -> Outcome:
        """Scroll to the end and wait for new items (facts: grew), up to `tries` times."""
        before = await conditions.list_signature(self.page, self.bindings)
        facts: dict[str, Any] = {"grew": False, "before": before[0], "after": before[0]}
        if before == self._stopped_growing:
            return "the list has not changed since it stopped growing", facts
        for attempt in range(command.tries):
            await conditions.scroll(self.page, self.bindings, command.target, nudge=attempt > 0)
            try:
                await conditions.wait_list_changed(
                    self.page, self.bindings, before, command.timeout
                )
            except PlaywrightTimeout:
                continue
            after = await conditions.list_signature(self.page, self.bindings)
            facts.update(grew=True, after=after[0])
            return f"scrolled the {command.target}: {before[0]} → {after[0]} items", facts
        self._stopped_growing = before
        tries = command.tries
        return f"scrolled the {command.target} {tries} times: the list stopped growing", facts

    async def close_details(self) -> None:
        """Click CLOSE_DETAILS if it is shown (a modal over the list)."""
        close = self.bindings.CLOSE_DETAILS
        if close and await self.page.locator(close).first.is_visible():
            await self.page.locator(close).first.click()

    async def back(self, item: ItemRun) -> Outcome:
        """Return to the list `item` was picked from (history, else its address)."""
        await self.page.go_back(wait_until="commit", timeout=BACK_TIMEOUT_MS)
        if self.page.url != item.list_url:
            await self.page.goto(item.list_url, timeout=BACK_TIMEOUT_MS)
        await self.wait_for_list(BACK_TIMEOUT_MS)
        return f"back at the list {item.list_url}", {}
