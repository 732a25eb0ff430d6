"""Batches on Dask as a user runs them: a real `tui-agent batch` process reaching a real Dask
cluster by its address (`--engine tcp://127.0.0.1:PORT`, the production path), each item a real
Chromium loading the demo shop, the children stored in the driver's real SQLite.

Every scheduler and worker listens on 127.0.0.1 only. One cluster serves the session's tests:
a worker a test kills or crashes is started again by its nanny, and a test that registers a
plugin on it unregisters it after.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from batch_support import Cli, Cluster, HeldPage, start_cluster
from support.requirements import require_chromium

from tui_agent.demo_site import DemoSite


@pytest.fixture(scope="session")
def demo() -> Iterator[DemoSite]:
    with DemoSite() as site:
        yield site


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Two worker processes, one thread each, shared by the tests of a session."""
    require_chromium()
    with start_cluster(tmp_path_factory.mktemp("workers")) as running:
        yield running


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


@pytest.fixture
def held(demo: DemoSite) -> Iterator[HeldPage]:
    """The catalog's page 4 behind a server that holds its first load until released: the
    batch item loading it (item 3 of a batch of pages 1 to 6) is mid-run meanwhile."""
    with HeldPage(demo, page=4) as page:
        yield page
