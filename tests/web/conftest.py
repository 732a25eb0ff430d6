"""Fixtures for the web layer: the demo shop on an ephemeral loopback port, and Chromium.

The browser fixtures run in the module's event loop: mark their tests with `in_chromium`
(support.requirements) or `pytest.mark.asyncio(loop_scope="module")`.
"""

from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio
from playwright.async_api import Page
from support.requirements import require_chromium

from tui_agent.demo_site import DemoSite
from tui_agent.web.browser import Browser


@pytest.fixture(scope="module")
def demo_site() -> Iterator[DemoSite]:
    """The demo site for one test module: `demo_site.url("panel", page=2)`, `.base_url`,
    `.ground_truth(layout, **query)` (absolute urls)."""
    with DemoSite() as site:
        yield site


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Browser]:
    """One Chromium for the test module (skipped, or failed under CI, without one); it loads
    file:// pages from the tests' temporary folders, as --allow-file-urls would."""
    require_chromium()
    async with Browser(files=tmp_path_factory.getbasetemp()) as running:
        yield running


@pytest_asyncio.fixture(loop_scope="module")
async def page(browser: Browser) -> AsyncIterator[Page]:
    """A fresh page of its own for each test."""
    page = await browser.page()
    yield page
    await page.context.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared_page(browser: Browser) -> AsyncIterator[Page]:
    """One page for the test module: each test loads what it needs."""
    page = await browser.page()
    yield page
    await page.context.close()
