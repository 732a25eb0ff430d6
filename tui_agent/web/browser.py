"""Chromium through Playwright: found at run time, launched quietly, one per session."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

from tui_agent.errors import UserError
from tui_agent.web.page_wait import watch

if TYPE_CHECKING:
    from playwright.async_api import Browser as PlaywrightBrowser
    from playwright.async_api import Page, Playwright

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
QUIET_FLAGS = [
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
    "--disable-dev-shm-usage",
]
INSTALL_HINT = "install Debian's chromium (`apt-get install chromium`) or set TUI_AGENT_CHROMIUM"
URL_SCHEMES = ("http", "https", "file")


class BrowserError(UserError):
    """No browser, a crashed browser or a page that cannot be loaded (one clear line)."""


def find_chromium() -> str | None:
    """TUI_AGENT_CHROMIUM, else a Chromium on PATH; None means Playwright's own build."""
    configured = os.environ.get("TUI_AGENT_CHROMIUM")
    if configured:
        path = shutil.which(configured) or configured
        if not Path(path).is_file() or not os.access(path, os.X_OK):
            raise BrowserError(f"TUI_AGENT_CHROMIUM={configured} is not an executable file")
        return path
    return next((found for name in CANDIDATES if (found := shutil.which(name))), None)


def check_url(url: str) -> str:
    """The URL if it can be loaded, else a BrowserError saying why."""
    parsed = urlparse(url)
    if parsed.scheme not in URL_SCHEMES or not (parsed.netloc or parsed.scheme == "file"):
        raise BrowserError(f"not a loadable URL: {url!r} (expected http://, https:// or file://)")
    return url


def check_reachable(url: str, timeout: float = 5.0) -> str:
    """The URL if its server accepts a connection (or its file exists), else a BrowserError.

    Only a TCP connection is opened: nothing is requested, so checking has no side effects.
    """
    parsed = urlparse(url)
    if parsed.scheme == "file":
        if not Path(unquote(parsed.path)).exists():
            raise BrowserError(f"cannot reach {url}: no such file")
        return url
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        with socket.create_connection((parsed.hostname or "", port), timeout=timeout):
            pass
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise BrowserError(f"cannot reach {url}: {reason.lower()}") from None
    return url


@dataclass(frozen=True)
class RenderedPage:
    """A page after its scripts ran: where it ended up and its HTML."""

    url: str
    html: str
    status: int | None
    title: str


class Browser:
    """One headless Chromium; `async with Browser() as browser: page = await browser.page()`."""

    def __init__(self, executable: str | None = None) -> None:
        self.executable = executable
        self._playwright: Playwright | None = None
        self._browser: PlaywrightBrowser | None = None
        self.crashed = False

    async def start(self) -> None:
        from playwright.async_api import Error, async_playwright

        executable = self.executable or find_chromium()
        self._playwright = await async_playwright().start()
        try:
            self._browser = await self._playwright.chromium.launch(
                executable_path=executable, headless=True, args=QUIET_FLAGS
            )
        except Error as exc:
            await self.close()
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise BrowserError(f"Chromium did not start ({first}); {INSTALL_HINT}") from exc
        self._browser.on("disconnected", self._on_disconnected)

    def _on_disconnected(self, _browser: object) -> None:
        self.crashed = self._playwright is not None

    async def page(self) -> Page:
        """A new page in a fresh context, its traffic watched (see `page_wait`)."""
        if self._browser is None or self.crashed:
            raise BrowserError("the browser is not running (it crashed or was closed)")
        context = await self._browser.new_context()
        page = await context.new_page()
        watch(page)
        return page

    async def render(self, url: str, timeout: float = 30.0) -> RenderedPage:
        """Load `url`, wait for the network to settle, and return the rendered HTML."""
        from playwright.async_api import Error

        page = await self.page()
        try:
            response = await page.goto(check_url(url), timeout=timeout * 1000, wait_until="load")
            # A page that keeps polling never goes idle but still has its rendered DOM.
            with contextlib.suppress(Error):
                await page.wait_for_load_state("networkidle", timeout=min(timeout, 5) * 1000)
            return RenderedPage(
                url=page.url,
                html=await page.content(),
                status=response.status if response else None,
                title=await page.title(),
            )
        except Error as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else "load failed"
            raise BrowserError(f"cannot load {url}: {reason}") from exc
        finally:
            await page.context.close()

    async def close(self) -> None:
        playwright, self._playwright = self._playwright, None
        browser, self._browser = self._browser, None
        if browser is not None and browser.is_connected():
            await browser.close()
        if playwright is not None:
            await playwright.stop()

    async def __aenter__(self) -> Browser:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
