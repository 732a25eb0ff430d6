"""Fixtures for the LLM layer: clients bound to the scripted model server (`server`)."""

from collections.abc import Callable

import pytest
from support.scripted_model import ScriptedModel

from tui_agent.llm import LLM, RetryPolicy

FAST_RETRY = RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.05)


@pytest.fixture
def make_llm(server: ScriptedModel) -> Callable[..., LLM]:
    """An LLM reaching `server` as openai/<name>, with fast retries and a dummy key."""

    def make(name: str = "scripted", **options) -> LLM:
        options.setdefault("api_key", "sk-test-dummy-0123456789")
        options.setdefault("retry", FAST_RETRY)
        return LLM(server.model(name), api_base=server.api_base, **options)

    return make
