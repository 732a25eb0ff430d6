"""Watching a page while a probe clicks: the navigations and new tabs the click starts."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.async_api import Page, Request


class PageWatch:
    """What a click started besides DOM changes: main-frame navigations and new tabs."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.navigating = False
        self.popups: list[Page] = []

    def _on_request(self, request: Request) -> None:
        if request.is_navigation_request() and request.frame == self.page.main_frame:
            self.navigating = True

    def _on_page(self, page: Page) -> None:
        self.popups.append(page)

    def __enter__(self) -> PageWatch:
        self.page.on("request", self._on_request)
        self.page.context.on("page", self._on_page)
        return self

    def __exit__(self, *_exc: object) -> None:
        self.page.remove_listener("request", self._on_request)
        self.page.context.remove_listener("page", self._on_page)


async def close_tab(tab: Page, timeout_ms: float) -> str:
    """Close a tab the click opened (once it loaded, or after `timeout_ms`); the URL it was
    loading."""
    from playwright.async_api import Error

    with contextlib.suppress(Error):
        await tab.wait_for_load_state("domcontentloaded", timeout=timeout_ms)
    url = tab.url
    with contextlib.suppress(Error):
        await tab.close()
    return url
