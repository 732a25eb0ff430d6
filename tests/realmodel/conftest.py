"""The real-model suite: our agents against a real OpenAI-compatible model server.

Runs only when ``TUI_AGENT_TEST_MODEL_BASE`` names the server's base URL (e.g.
``http://127.0.0.1:8765/v1``); ``TUI_AGENT_TEST_MODEL`` names the model (default
``openai/local``). Skipped otherwise, under CI too: CI keeps the scripted server. Each test talks
to the server through a recording proxy; with ``TUI_AGENT_TEST_RECORD_DIR`` set, every reply of a
notable shape is saved there as a fixture (see tests/support/reply_recorder.py).

Run it with ``-n 0`` and nothing else using the server: llama-cpp-python's server cuts a
streamed reply when another request arrives (its ``interrupt_requests``, on by default), which
the agents see as the provider failing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.real_model import BASE
from support.reply_recorder import ReplyRecorder, save_fixture

RECORD_DIR = os.environ.get("TUI_AGENT_TEST_RECORD_DIR", "")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    skip = pytest.mark.skip(reason="no real model: set TUI_AGENT_TEST_MODEL_BASE")
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.realmodel)
            if not BASE:
                item.add_marker(skip)


@pytest.fixture
def real_model(request: pytest.FixtureRequest) -> Iterator[ReplyRecorder]:
    """A recording proxy in front of the real server, for one test."""
    with ReplyRecorder(BASE) as recorder:
        yield recorder
    if RECORD_DIR:
        name = request.node.name
        for index, exchange in enumerate(recorder.exchanges, 1):
            if exchange.shapes():
                shapes = "-".join(exchange.shapes())
                save_fixture(exchange, Path(RECORD_DIR), f"{name}-{index}-{shapes}", note=name)
