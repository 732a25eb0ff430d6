"""Chromium through Playwright: found at run time, launched quietly, one per session.

Chromium keeps its own sandbox, as an unprivileged user when we are root (`chromium_user`),
and its pages load http(s) only, file:// beneath one folder when the user allows it
(`navigation`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from tui_agent.web.browser_error import BrowserError
from tui_agent.web.chromium_user import BROWSER_USER, NO_SANDBOX_HINT, Launch, plan_launch
from tui_agent.web.navigation import check_navigable, file_path, goto, guard
from tui_agent.web.page_wait import instrument, watch

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


def find_chromium() -> str | None:
    """TUI_AGENT_CHROMIUM, else a Chromium on PATH; None means Playwright's own build."""
    configured = os.environ.get("TUI_AGENT_CHROMIUM")
    if configured:
        path = shutil.which(configured) or configured
        if not Path(path).is_file() or not os.access(path, os.X_OK):
            raise BrowserError(f"TUI_AGENT_CHROMIUM={configured} is not an executable file")
        return path
    return next((found for name in CANDIDATES if (found := shutil.which(name))), None)


def check_reachable(url: str, timeout: float = 5.0) -> str:
    """The URL if its server accepts a connection (or its file exists), else a BrowserError.

    Only a TCP connection is opened: nothing is requested, so checking has no side effects.
    """
    path = file_path(url)
    if path is not None:
        if not path.is_file():
            raise BrowserError(f"cannot reach {url}: no such file")
        return url
    parsed = urlparse(url)
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
    """One headless Chromium; `async with Browser() as browser: page = await browser.page()`.

    `files`: the folder whose file:// pages (and theirs beneath it) may be loaded; None
    refuses every file:// URL. `sandbox`: Chromium's own sandbox, run as `user` when we are
    root; False is the user's --no-browser-sandbox.
    """

    def __init__(
        self,
        executable: str | None = None,
        *,
        files: Path | None = None,
        sandbox: bool = True,
        user: str = BROWSER_USER,
    ) -> None:
        self.executable = executable
        self.files = files
        self.sandbox = sandbox
        self.user = user
        self._playwright: Playwright | None = None
        self._browser: PlaywrightBrowser | None = None
        self._launch: Launch | None = None
        self.crashed = False

    async def start(self) -> None:
        from playwright.async_api import Error, async_playwright

        executable = self.executable or find_chromium()
        self._playwright = await async_playwright().start()
        try:
            self._launch = plan_launch(
                executable or self._playwright.chromium.executable_path,
                sandbox=self.sandbox,
                user=self.user,
            )
            env: dict[str, str | float | bool] = {**self._launch.env}
            self._browser = await self._playwright.chromium.launch(
                executable_path=self._launch.executable,
                headless=True,
                args=QUIET_FLAGS,
                chromium_sandbox=self._launch.sandbox,
                env=env,
            )
        except BrowserError:
            await self.close()
            raise
        except Error as exc:
            launch = self._launch
            await self.close()
            raise BrowserError(_launch_failure(exc, launch)) from exc
        self._browser.on("disconnected", self._on_disconnected)

    def _on_disconnected(self, _browser: object) -> None:
        self.crashed = self._playwright is not None

    async def page(self) -> Page:
        """A new page in a fresh context, its traffic and timers watched (see `page_wait`) and
        its file:// requests routed (see `navigation.guard`)."""
        if self._browser is None or self.crashed:
            raise BrowserError("the browser is not running (it crashed or was closed)")
        context = await self._browser.new_context(accept_downloads=False)
        await guard(context, self.files)
        await instrument(context)
        page = await context.new_page()
        watch(page)
        return page

    async def render(self, url: str, timeout: float = 30.0) -> RenderedPage:
        """Load `url`, wait for the network to settle, and return the rendered HTML."""
        from playwright.async_api import Error

        check_navigable(url, allow_file=self.files is not None)
        page = await self.page()
        try:
            response = await goto(page, url, timeout=timeout * 1000, wait_until="load")
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
        launch, self._launch = self._launch, None
        if browser is not None and browser.is_connected():
            await browser.close()
        if playwright is not None:
            await playwright.stop()
        if launch is not None:
            launch.close()

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


class KeptBrowser(Browser):
    """A Chromium kept running from session to session (a batch worker's): `start` launches it
    once (again after a crash), `close` leaves it running for the next session, `shutdown`
    stops it. Sessions share it safely: each page has a fresh context of its own."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._starting: asyncio.Lock | None = None

    async def start(self) -> None:
        self._starting = self._starting or asyncio.Lock()
        async with self._starting:
            if self._browser is not None and not self.crashed:
                return
            await super().close()
            self.crashed = False
            await super().start()

    async def close(self) -> None:
        """Leave it running: the next session uses it (see `shutdown`)."""

    async def shutdown(self) -> None:
        """Stop Chromium for good."""
        await super().close()


def _launch_failure(exc: Exception, launch: Launch | None) -> str:
    """One line on why Chromium did not start: what it (or its wrapper) said on stderr, its
    word on its sandbox first."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    said = [line.split("]", 2)[-1].strip() for line in lines if line.startswith("[pid=")]
    said = [line for line in said if line and not line.startswith("<")]
    on_sandbox = next((line for line in said if "sandbox" in line.lower()), None)
    reason = on_sandbox or (said[-1] if said else lines[0] if lines else type(exc).__name__)
    if launch is not None and launch.user is not None:
        return f"Chromium did not start as {launch.user} ({reason}); {NO_SANDBOX_HINT}"
    if on_sandbox is not None and launch is not None and launch.sandbox:
        return f"Chromium's sandbox did not start ({reason}); {NO_SANDBOX_HINT}"
    return f"Chromium did not start ({reason}); {INSTALL_HINT}"
