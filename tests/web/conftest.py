"""Fixtures for the web layer: the demo shop served on an ephemeral loopback port."""

from collections.abc import Iterator

import pytest

from tui_agent.web.demo_site import DemoSite


@pytest.fixture(scope="module")
def demo_site() -> Iterator[DemoSite]:
    """The demo site for one test module: `demo_site.url("panel", page=2)`, `.base_url`,
    `.ground_truth(layout, **query)` (absolute urls)."""
    with DemoSite() as site:
        yield site
