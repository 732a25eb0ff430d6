"""Chromium kept on loopback during an in-process scrape: any request to another host is
aborted before it leaves, and recorded (the apps' own rewrite should leave none)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from playwright.async_api import Page, Route

from tui_agent.web.browser import Browser

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def offsite(url: str) -> bool:
    """Whether `url` is a network request to a host beyond loopback."""
    parts = urlsplit(url)
    return parts.scheme in ("http", "https", "ws", "wss") and parts.hostname not in LOOPBACK_HOSTS


@dataclass
class Traffic:
    """The requests the guard saw: those let through (on loopback), those it aborted."""

    passed: int = 0
    blocked: list[str] = field(default_factory=list)


@contextmanager
def loopback_only() -> Iterator[Traffic]:
    """While open, every page `Browser.page` makes aborts requests beyond loopback."""
    traffic = Traffic()
    original = Browser.page

    async def route(route: Route) -> None:
        if offsite(route.request.url):
            traffic.blocked.append(route.request.url)
            await route.abort("blockedbyclient")
        else:
            traffic.passed += 1
            await route.fallback()

    async def page(self: Browser, *args: Any, **kwargs: Any) -> Page:
        made = await original(self, *args, **kwargs)
        await made.context.route("**/*", route)  # the last route added is asked first
        return made

    Browser.page = page  # type: ignore[method-assign]
    try:
        yield traffic
    finally:
        Browser.page = original  # type: ignore[method-assign]
