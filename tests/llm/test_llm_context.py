"""A provider's context-length error becomes ContextTooLong, the one error a caller fits the
history for and retries."""

import pytest
from support.scripted_model import error

from tui_agent.llm import ContextTooLong
from tui_agent.llm.runtime import litellm

OPENAI_CONTEXT_ERROR = (
    "This model's maximum context length is 8192 tokens. However, your messages resulted in "
    "9317 tokens. Please reduce the length of the messages."
)


def context_error():
    return error(400, OPENAI_CONTEXT_ERROR, error_code="context_length_exceeded")


async def test_litellm_reads_openais_context_length_error_as_such(server):
    server.push(context_error())
    with pytest.raises(litellm().ContextWindowExceededError):
        await litellm().acompletion(
            model=server.model(),
            api_base=server.api_base,
            api_key="sk-test-dummy-0123456789",
            messages=[{"role": "user", "content": "hi"}],
            max_retries=0,
        )
    assert len(server.requests) == 1


async def test_a_context_length_error_is_context_too_long_and_not_retried(server, make_llm):
    server.push(context_error(), "never played")
    with pytest.raises(ContextTooLong, match=r"^the conversation is too long for openai/scripted"):
        await make_llm().complete([{"role": "user", "content": "a long history"}])
    assert len(server.requests) == 1 and server.remaining == 1
