"""The LLM client through real litellm against the scripted server: streams, records, failures."""

import json

import pytest
from support.scripted_model import ToolCallReply, error, text, tool_calls

from tui_agent.events import LLMCall, Sampling, parse_event
from tui_agent.llm import (
    LLM,
    ApiKeyRejected,
    LLMRequestError,
    MissingApiKey,
    ProviderUnavailable,
    RetryPolicy,
    UnknownModel,
    call_cost,
    price_known,
)
from tui_agent.llm.errors import redact
from tui_agent.llm.runtime import litellm

USER = [{"role": "user", "content": "Calculate compound interest"}]


async def collect(stream) -> list[str]:
    return [delta async for delta in stream]


async def test_text_streams_in_order_and_the_call_is_recorded(server, make_llm):
    content = "Principal 15000 at 6% compounded twice a year for 6 years."
    server.push(text(content, chunk_size=4))
    llm = make_llm()
    stream = llm.stream(USER, purpose="probe", step=3)
    deltas = await collect(stream)
    assert len(deltas) == len(range(0, len(content), 4))
    assert "".join(deltas) == content
    reply = stream.reply
    assert reply.text == content
    assert reply.finish_reason == "stop"
    call = reply.call
    assert isinstance(call, LLMCall)
    assert (call.model, call.purpose, call.step) == ("openai/scripted", "probe", 3)
    assert call.prompt_tokens > 0
    assert call.completion_tokens == len(content) // 4
    assert call.cost is None  # openai/scripted has no price: unknown, never 0
    assert call.latency > 0
    assert call.cached is False
    [request] = server.requests
    assert request.stream
    assert request.body["stream_options"] == {"include_usage": True}
    assert request.messages == USER


async def test_reading_the_reply_before_the_stream_ends_is_an_error(server, make_llm):
    server.push("hello")
    stream = make_llm().stream(USER)
    with pytest.raises(RuntimeError, match="iterate the stream first"):
        _ = stream.reply


async def test_known_price_gives_a_positive_cost_from_the_local_price_map(server, make_llm):
    server.push(text("x" * 400, usage={"prompt_tokens": 1000, "completion_tokens": 500}))
    reply = await make_llm("gpt-4o-mini").complete(USER)
    assert (reply.call.prompt_tokens, reply.call.completion_tokens) == (1000, 500)
    prices = litellm().model_cost["gpt-4o-mini"]
    expected = 1000 * prices["input_cost_per_token"] + 500 * prices["output_cost_per_token"]
    assert reply.call.cost == pytest.approx(expected)
    assert reply.call.cost > 0


async def test_a_provider_that_sends_no_usage_gets_counted_locally(server, make_llm):
    server.push(
        text("The final amount is $21,386.41.", omit_usage=True), text("x", omit_usage=True)
    )
    priced = await make_llm("gpt-4o-mini").complete(USER)
    assert priced.call.prompt_tokens > 0 and priced.call.completion_tokens > 0
    prompt_cost, completion_cost = litellm().cost_per_token(
        model="gpt-4o-mini",
        prompt_tokens=priced.call.prompt_tokens,
        completion_tokens=priced.call.completion_tokens,
    )
    assert priced.call.cost == pytest.approx(prompt_cost + completion_cost)
    assert priced.call.cost > 0
    unpriced = await make_llm().complete(USER)
    assert unpriced.call.completion_tokens > 0
    assert unpriced.call.cost is None


async def test_sampling_options_reach_the_provider(server, make_llm):
    server.push("ok")
    await make_llm(sampling=Sampling(temperature=0.2, max_tokens=64), timeout=30).complete(USER)
    body = server.requests[0].body
    assert (body["temperature"], body["max_tokens"]) == (0.2, 64)


def test_price_known_tells_priced_from_unpriced_models():
    assert price_known("gpt-4o-mini")
    assert not price_known("openai/scripted-no-such-model")


def test_call_cost_of_an_unpriced_model_is_none():
    response = litellm().ModelResponse(
        model="scripted-no-such-model",
        usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    )
    assert call_cost(response, "openai/scripted-no-such-model") is None


async def test_json_mode_is_requested_where_the_provider_takes_it(server, make_llm):
    server.push("{}", "{}", "{}")
    await make_llm().complete(USER, want_json=True)
    await make_llm().complete(USER)
    await make_llm(json_mode=False).complete(USER, want_json=True)
    formats = [request.response_format for request in server.requests]
    assert formats == [{"type": "json_object"}, None, None]


def test_json_mode_is_off_for_a_provider_without_response_format():
    assert LLM("cohere/command-r", api_key="unused").json_mode is False
    assert LLM("gpt-4o-mini", api_key="unused").json_mode is True


async def test_tool_calls_are_assembled_from_the_stream(server, make_llm):
    server.push(
        tool_calls(
            ToolCallReply("run_python", {"code": "print(21386.41)"}),
            ToolCallReply("lookup", {"term": "compound interest" * 3}),
            chunk_size=5,
        )
    )
    tools = [
        {
            "type": "function",
            "function": {"name": name, "parameters": {"type": "object", "properties": {}}},
        }
        for name in ("run_python", "lookup")
    ]
    reply = await make_llm().complete(USER, tools=tools)
    assert reply.finish_reason == "tool_calls"
    assert [(c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [
        ("run_python", {"code": "print(21386.41)"}),
        ("lookup", {"term": "compound interest" * 3}),
    ]
    assert server.requests[0].tools == tools


async def test_rate_limit_then_success_is_retried(server, make_llm):
    server.push(error(429, "slow down"), error(503, "busy"), "fine")
    reply = await make_llm().complete(USER)
    assert reply.text == "fine"
    assert len(server.requests) == 3


async def test_server_errors_beyond_the_retries_stop_with_one_line(server, make_llm):
    server.push(*[error(500, "boom")] * 5)
    llm = make_llm(retry=RetryPolicy(attempts=3, base_delay=0.01))
    with pytest.raises(ProviderUnavailable) as caught:
        await llm.complete(USER)
    message = str(caught.value)
    assert "\n" not in message
    assert "kept failing (3 attempts for openai/scripted)" in message
    assert "boom" in message
    assert len(server.requests) == 3  # litellm's own retries are off: ours are the only ones


async def test_rate_limits_beyond_the_retries_say_so(server, make_llm):
    server.push(*[error(429)] * 2)
    with pytest.raises(ProviderUnavailable, match=r"^rate limited by the server at"):
        await make_llm(retry=RetryPolicy(attempts=2, base_delay=0.01)).complete(USER)


async def test_bad_requests_are_not_retried(server, make_llm):
    server.push(error(400, "temperature must be at most 2"), "never played")
    with pytest.raises(LLMRequestError, match=r"refused the request: .*temperature must be"):
        await make_llm().complete(USER)
    assert server.remaining == 1


async def test_rejected_key_from_the_environment_names_the_variable(server, make_llm, monkeypatch):
    secret = "sk-proj-verysecretvalue0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    server.push(error(401, f"Incorrect API key provided: {secret}"), "never played")
    llm = LLM(server.model(), api_base=server.api_base)
    with pytest.raises(ApiKeyRejected) as caught:
        await llm.complete(USER)
    assert str(caught.value) == (
        f"the API key in OPENAI_API_KEY was rejected by the server at {server.api_base}"
    )
    assert caught.value.variable == "OPENAI_API_KEY"
    assert server.requests[0].headers["authorization"] == f"Bearer {secret}"
    assert len(server.requests) == 1


async def test_rejected_explicit_key_is_named_as_given(server, make_llm):
    server.push(error(403, "forbidden"))
    with pytest.raises(
        ApiKeyRejected, match=r"^the API key given for openai/scripted was rejected"
    ):
        await make_llm().complete(USER)


async def test_a_custom_server_without_a_key_is_tried_and_a_401_names_the_variable(
    server, monkeypatch
):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.push("a local server needs no key", error(401, "key required"))
    llm = LLM(server.model(), api_base=server.api_base)
    assert (await llm.complete(USER)).text == "a local server needs no key"
    with pytest.raises(ApiKeyRejected) as caught:
        await llm.complete(USER)
    assert str(caught.value) == (
        f"the server at {server.api_base} wants an API key: set OPENAI_API_KEY"
    )


def test_missing_key_for_a_real_provider_stops_before_any_request(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(MissingApiKey) as caught:
        LLM("gpt-4o-mini")
    assert str(caught.value) == "OPENAI_API_KEY is not set (model gpt-4o-mini needs it)"
    assert caught.value.variable == "OPENAI_API_KEY"


def test_missing_key_names_the_providers_own_variable(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    with pytest.raises(MissingApiKey, match=r"^ANTHROPIC_API_KEY is not set"):
        LLM("anthropic/claude-3-5-sonnet-20240620")


def test_a_model_litellm_cannot_place_is_one_clear_line():
    with pytest.raises(UnknownModel) as caught:
        LLM("no-such-model-anywhere")
    assert str(caught.value) == (
        "unknown model 'no-such-model-anywhere': litellm cannot tell its provider; "
        "name it as provider/model, e.g. openai/gpt-4o-mini"
    )


async def test_a_model_the_server_does_not_know_is_one_clear_line(server, make_llm):
    server.push(error(404, "The model `nope` does not exist"))
    with pytest.raises(UnknownModel) as caught:
        await make_llm("nope").complete(USER)
    assert (
        str(caught.value) == f"model 'openai/nope' was not found by the server at {server.api_base}"
    )


async def test_a_stream_that_breaks_mid_reply_stops_clearly(server, make_llm):
    server.push(text("x" * 200, chunk_size=10, disconnect_after=3))
    stream = make_llm().stream(USER)
    received = []
    with pytest.raises(ProviderUnavailable, match=r"^the reply from the server at .* broke off"):
        async for delta in stream:
            received.append(delta)
    assert "".join(received) == "x" * 30  # three content chunks, then the connection drops
    assert len(server.requests) == 1


async def test_an_unreachable_server_is_retried_then_named(make_llm, server):
    api_base = server.api_base
    server.stop()
    llm = LLM("openai/scripted", api_base=api_base, api_key="k", retry=RetryPolicy(2, 0.01))
    with pytest.raises(ProviderUnavailable, match=f"^cannot reach the server at {api_base}"):
        await llm.complete(USER)


async def test_keys_never_reach_records_or_messages(server, monkeypatch):
    secret = "very-private-value-that-is-no-sk-pattern"
    server.push("ok", error(500, f"upstream echoed {secret}"))
    llm = LLM(server.model(), api_base=server.api_base, api_key=secret, retry=RetryPolicy(1, 0.01))
    reply = await llm.complete(USER)
    stored = reply.call.model_dump_json()
    assert secret not in stored
    assert parse_event(stored) == reply.call
    assert secret not in repr(llm)
    with pytest.raises(ProviderUnavailable) as caught:
        await llm.complete(USER)
    assert secret not in str(caught.value)
    assert "upstream echoed ***" in str(caught.value)


def test_redact_masks_secrets_key_shapes_and_url_credentials():
    line = redact(
        "bad key sk-abcDEF1234567890 for https://user:pw@host/v1\nsecond line my-secret-42",
        ["my-secret-42"],
    )
    assert line == "bad key *** for https://***@host/v1 second line ***"
