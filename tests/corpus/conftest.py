"""The corpus apps, each started once per test process when a test first needs it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack

import pytest

from corpus.apps import App, running


@pytest.fixture(scope="session")
def corpus_app() -> Iterator[Callable[[str], App]]:
    """`corpus_app("trac")`: that app running (started on first use, stopped at the end)."""
    started: dict[str, App] = {}
    with ExitStack() as stack:

        def get(name: str) -> App:
            if name not in started:
                started[name] = stack.enter_context(running(name))
            return started[name]

        yield get
