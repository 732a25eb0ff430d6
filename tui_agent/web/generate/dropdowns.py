"""Dropdowns that open on a click: each opened once to read its entries, then closed again.

A custom dropdown (a button that shows a menu of entries, as on many shops' category or sort
pickers) has no options in the page until it is clicked. `open_dropdowns` clicks each toggle
it finds (a few at most), reads the entries that appeared and the menu holding them, and
closes it (Escape, else a second click): each becomes a "dropdown" Control whose fragment
clicks the toggle, waits for the menu, then clicks the entry.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from playwright.async_api import Error as PlaywrightError

from tui_agent.web.generate.control_scripts import MARK_SHOWN_JS, MENU_JS, TOGGLES_JS
from tui_agent.web.page_wait import settled

if TYPE_CHECKING:
    from playwright.async_api import Page

    from tui_agent.web.generate.controls import Control

TOGGLE_LIMIT = 4
"""Dropdowns opened at most on one page."""
OPEN_WAIT = 3.0
"""Seconds a menu is waited for after its toggle is clicked."""
CLICK_TIMEOUT_MS = 2000


async def open_dropdowns(page: Page, item: str | None) -> list[Control]:
    """The page's click-to-open dropdowns with the entries each shows."""
    from tui_agent.web.generate.controls import Control, Option

    toggles = await page.evaluate(TOGGLES_JS, {"item": item, "limit": TOGGLE_LIMIT})
    found: list[Control] = []
    for toggle in toggles:
        selector = toggle["selector"]
        menu = None
        try:
            await page.evaluate(MARK_SHOWN_JS)
            await page.locator(selector).first.click(timeout=CLICK_TIMEOUT_MS)
            await settled(page, OPEN_WAIT)
            menu = await page.evaluate(MENU_JS, {"toggle": selector})
        except PlaywrightError:
            continue
        finally:
            await _close(page, selector, menu["menu"] if menu else None)
        if not menu or not menu["menu"] or not menu["options"]:
            continue
        options = tuple(Option(**option) for option in menu["options"])
        found.append(
            Control(
                kind="dropdown",
                selector=selector,
                label=toggle["label"],
                name="",
                options=options,
                opens=menu["menu"],
            )
        )
    return found


async def _close(page: Page, toggle: str, menu: str | None) -> None:
    """Close an opened menu: Escape, and a second click on its toggle if it is still shown."""
    with contextlib.suppress(PlaywrightError):
        await page.keyboard.press("Escape")
        if menu and await page.locator(menu).first.is_visible():
            await page.locator(toggle).first.click(timeout=CLICK_TIMEOUT_MS)
