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

from tui_agent.web.navigation import goto
from tui_agent.web.page_wait import WAIT_CAP, settled
from tui_agent.web.recipe import conditions
from tui_agent.web.recipe.diagnose import describe_page
from tui_agent.web.recipe.extract import EXTRACT_JS, details_args
from tui_agent.web.recipe.format import (
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
from tui_agent.web.recipe.identity import ItemRef
from tui_agent.web.recipe.step_failures import CommandFailed, HardFailure, ItemMoved, seconds

Outcome = tuple[str, dict[str, Any]]
BACK_TIMEOUT_MS = 30_000
CLOSE_TIMEOUT_MS = 5_000
"""How long closed details may take to go."""
CONTROL_PATIENCE = 1.0
"""Seconds a quiet page with no next-page control (and no timer due) is given to show one."""


async def _always() -> bool:
    """A page whose list already changed is ready: only its quiet is waited for."""
    return True


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
    """The page-side work of the commands, with targets resolved through `bindings`.

    `wait` caps (in seconds) the waits for a page to render (after load, after a page change)
    and is the least time a list is waited for; `waiting` says what an action waits for now.
    """

    def __init__(self, page: Page, bindings: Bindings, *, wait: float = WAIT_CAP) -> None:
        self.page = page
        self.bindings = bindings
        self.wait = wait
        self.waiting = ""
        self._stopped_growing: conditions.Signature | None = None
        self._list_before: conditions.Signature | None = None
        """The list as it was before the last CLICK / SELECT / TYPE / PRESS (WAIT_FOR changed)."""

    @property
    def wait_ms(self) -> int:
        return int(self.wait * 1000)

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
            self.waiting = "the page to render"
            rendered = await settled(self.page, self.wait)
            return f"page loaded: {self.page.url}; {rendered.outcome()}", {
                "url": self.page.url,
                "rendered": round(rendered.elapsed, 1),
            }
        if command.target == "list" and command.changed:
            return await self._wait_changed(max(timeout, self.wait_ms))
        if command.target == "list":
            await self.wait_for_list(max(timeout, self.wait_ms))
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

    async def _wait_changed(self, timeout: int) -> Outcome:
        """Wait until the list shows other items than before the last action."""
        before = self._list_before
        if before is None:
            raise CommandFailed('WAIT_FOR "changed" needs an action before it (CLICK, SELECT...)')
        self.waiting = "the list to change"
        try:
            await conditions.wait_list_changed(self.page, self.bindings, before, timeout)
        except PlaywrightTimeout:
            raise CommandFailed(
                f"the list did not change within {seconds(timeout)} "
                f'(LIST_ITEM "{self.bindings.LIST_ITEM}", {before[0]} items before)'
            ) from None
        rendered = await settled(self.page, self.wait, ready=_always)
        after = await conditions.list_signature(self.page, self.bindings)
        return f"the list changed: {before[0]} → {after[0]} items ({rendered.outcome()})", {
            "before": before[0],
            "after": after[0],
        }

    async def wait_for_list(self, timeout: int, condition: Condition | None = None) -> None:
        """Wait for LIST_LOADED (or `condition`); a HardFailure says what the page shows."""
        self.waiting = "the list"
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
        await self._remember_list()
        what = f'"{command.selector}"' + (f' reading "{command.text}"' if command.text else "")
        try:
            if item is not None and command.within == "item":
                inside = await item.element.wait_for_selector(
                    command.selector, timeout=command.timeout
                )
                assert inside is not None  # state "visible" never gives None
                if command.text:
                    inside = await self._by_text(command.selector, command.text, item.element)
                await inside.click(timeout=command.timeout)
            elif command.text:
                target = await self._by_text(command.selector, command.text, None)
                await target.click(timeout=command.timeout)
            else:
                await self.page.locator(command.selector).first.click(timeout=command.timeout)
        except PlaywrightTimeout:
            raise CommandFailed(
                f"{what} could not be clicked within {seconds(command.timeout)}"
            ) from None
        await self._settle()
        return f"clicked {what}", {}

    async def _by_text(self, selector: str, text: str, scope: ElementHandle | None) -> Any:
        """The first shown match of `selector` (in `scope`, else the page) reading `text`."""
        handle = await self.page.evaluate_handle(
            conditions.BY_TEXT_JS, {"selector": selector, "text": text, "scope": scope}
        )
        element = handle.as_element()
        if element is None:
            raise CommandFailed(f'no shown "{selector}" reads "{text}"')
        return element

    async def click_if_exists(self, command: ClickIfExists) -> Outcome:
        """Click a shown, enabled match and wait for the list to change (facts: changed).

        The next-page control (no `selector`) is picked among NEXT_PAGE_BUTTON's matches by
        NEXT_PAGE_TEXT or NEXT_PAGE_NUMBERED when the bindings have them; one the page has not
        written yet is waited for while it is busy. A click after which the page shows no list
        item at all is a HardFailure (the next page failed), not the end of the list.
        """
        paging = command.selector is None
        selector = command.selector or self.bindings.NEXT_PAGE_BUTTON
        assert selector is not None
        text = self.bindings.NEXT_PAGE_TEXT if paging else None
        numbered = paging and self.bindings.NEXT_PAGE_NUMBERED
        found = [selector, text, numbered]
        index = await self.page.evaluate(conditions.FIND_ENABLED_JS, found)

        async def shown() -> bool:
            nonlocal index
            index = await self.page.evaluate(conditions.FIND_ENABLED_JS, found)
            return index >= 0

        if index < 0 and paging:  # a pager the page writes after its list
            self.waiting = "the next-page control"
            await settled(self.page, self.wait, ready=shown, patience=CONTROL_PATIENCE)
        named = f'"{selector}"' + (f' ("{text}")' if text else "")
        if index < 0:
            return f"no shown, enabled {named}: nothing clicked", {"clicked": False}
        before = await conditions.list_signature(self.page, self.bindings)
        try:
            await self.page.locator(selector).nth(index).click(timeout=command.timeout)
        except PlaywrightTimeout:
            raise CommandFailed(
                f"{named} could not be clicked within {seconds(command.timeout)}"
            ) from None
        timeout = max(command.timeout, self.wait_ms)
        self.waiting = "the next page" if paging else "the list to change"
        try:
            await conditions.wait_list_changed(self.page, self.bindings, before, timeout)
        except PlaywrightTimeout:
            if paging and not (await conditions.list_signature(self.page, self.bindings))[0]:
                raise HardFailure(
                    f"the next page shows no list items {seconds(timeout)} after clicking "
                    f"{named}: {await describe_page(self.page)}"
                ) from None
            output = f"clicked {named} but the list did not change within {seconds(timeout)}"
            return output, {"clicked": True, "changed": False}
        self.waiting = "the page to render"
        rendered = await settled(self.page, self.wait, ready=_always)
        output = f"clicked {named}: the list changed ({rendered.outcome()})"
        return output, {"clicked": True, "changed": True}

    async def _remember_list(self) -> None:
        """Keep the list as it is now, for a WAIT_FOR "changed" after this action."""
        try:
            self._list_before = await conditions.list_signature(self.page, self.bindings)
        except PlaywrightError:
            self._list_before = None

    async def interact(self, command: TypeText | Select | Press) -> Outcome:
        await self._remember_list()
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

    async def close_details(self) -> str | None:
        """Close the details that cover the list: click CLOSE_DETAILS's control if it is shown,
        or press its key, then wait until they are gone. What went wrong, or None."""
        close = self.bindings.CLOSE_DETAILS
        if close is None:
            return None
        if close.key is not None:
            await self.page.keyboard.press(close.key)
        elif await self.page.locator(close.selector or "").first.is_visible():
            await self.page.locator(close.selector or "").first.click()
        else:
            return None
        shown = self.bindings.details_loaded()
        if shown is None or shown.exists is None:
            return None
        self.waiting = "the details to close"
        try:
            await conditions.wait(self.page, Condition(gone=shown.exists), CLOSE_TIMEOUT_MS)
        except PlaywrightTimeout:
            return (
                f"the details ({shown.exists}) were still shown {seconds(CLOSE_TIMEOUT_MS)} "
                f"after CLOSE_DETAILS ({close.describe()})"
            )
        return None

    async def back(self, item: ItemRun) -> Outcome:
        """Return to the list `item` was picked from (history, else its address)."""
        await self.page.go_back(wait_until="commit", timeout=BACK_TIMEOUT_MS)
        if self.page.url != item.list_url:
            await goto(self.page, item.list_url, timeout=BACK_TIMEOUT_MS)
        await self.wait_for_list(max(BACK_TIMEOUT_MS, self.wait_ms))
        return f"back at the list {item.list_url}", {}
