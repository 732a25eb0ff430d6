"""Sampling settings through real litellm against the scripted server: sent only when set,
recorded with each call, and left out of an old call's JSON."""

import json

import pytest
from pydantic import ValidationError

from tui_agent.agents.requests import REQUEST_CLASSES
from tui_agent.cli import build_parser
from tui_agent.events import LLMCall, Sampling, dump_event, parse_event

USER = [{"role": "user", "content": "Say hi"}]
KEYS = ("temperature", "max_tokens", "top_p")


async def test_set_sampling_is_sent_and_recorded_with_the_call(server, make_llm):
    server.push("hi")
    sampling = Sampling(temperature=0.0, max_tokens=64, top_p=0.5)
    reply = await make_llm(sampling=sampling).complete(USER)
    [request] = server.requests
    assert {key: request.body.get(key) for key in KEYS} == {
        "temperature": 0.0,
        "max_tokens": 64,
        "top_p": 0.5,
    }
    assert reply.call.sampling == sampling
    recorded = json.loads(dump_event(reply.call))["sampling"]
    assert recorded == {"temperature": 0.0, "max_tokens": 64, "top_p": 0.5}
    assert parse_event(dump_event(reply.call)) == reply.call


async def test_one_setting_alone_is_all_that_is_sent(server, make_llm):
    server.push("hi")
    reply = await make_llm(sampling=Sampling(top_p=0.9)).complete(USER)
    [request] = server.requests
    assert [key for key in KEYS if key in request.body] == ["top_p"]
    assert json.loads(dump_event(reply.call))["sampling"] == {"top_p": 0.9}


async def test_unset_sampling_is_never_sent_nor_recorded(server, make_llm):
    server.push("hi", "hi")
    plain = await make_llm().complete(USER)
    empty = await make_llm(sampling=Sampling()).complete(USER)
    for request in server.requests:
        assert not [key for key in KEYS if key in request.body]
    for reply in (plain, empty):
        assert reply.call.sampling is None
        assert "sampling" not in json.loads(dump_event(reply.call))


def test_a_call_recorded_before_sampling_exports_byte_for_byte():
    old = (
        '{"schema_version":11,"session_id":"abc","seq":3,"ts":1.5,"type":"llm_call",'
        '"model":"openai/x","prompt_tokens":10,"completion_tokens":2,"cost":null,'
        '"latency":0.5,"cached":false,"purpose":"","step":1,"estimated":false}'
    )
    event = parse_event(old)
    assert isinstance(event, LLMCall) and event.sampling is None
    assert event.model_dump_json() == old


@pytest.mark.parametrize(
    "given", [{"temperature": -0.1}, {"max_tokens": 0}, {"top_p": 0}, {"top_p": 1.5}]
)
def test_sampling_out_of_bounds_is_refused(given):
    with pytest.raises(ValidationError):
        Sampling(**given)


MODEL_KINDS = ("code", "toolcode", "task", "workflow", "scrape", "recipe", "refine")


@pytest.mark.parametrize("kind", MODEL_KINDS)
def test_every_kind_with_a_model_takes_the_sampling_fields(kind):
    fields = REQUEST_CLASSES[kind].model_fields
    assert {"temperature", "max_tokens", "top_p", "context_tokens"} <= set(fields)


@pytest.mark.parametrize(
    "argv",
    [
        ["code", "t"],
        ["toolcode", "t"],
        ["task", "t"],
        ["workflow", "run", "w.json"],
        ["scrape", "http://127.0.0.1:1/", "--task", "t"],
        ["recipe", "run", "r.json", "--url", "http://127.0.0.1:1/"],
        ["refine", "abc"],
    ],
)
def test_every_agent_command_takes_the_sampling_flags(argv):
    flags = ["--temperature", "0.3", "--max-tokens", "200", "--top-p", "0.8"]
    args = build_parser().parse_args([*argv, *flags])
    assert (args.temperature, args.max_tokens, args.top_p) == (0.3, 200, 0.8)
