"""The scripted model server itself: plain and streamed replies, records, errors, its CLI."""

import json
import subprocess
import sys
from pathlib import Path

import httpx
from support.scripted_model import ScriptedModel, ToolCallReply, error, text, tool_calls

from tui_agent.llm.runtime import litellm

SERVER_SCRIPT = Path(__file__).resolve().parents[1] / "support" / "scripted_model.py"
USER = [{"role": "user", "content": "hi"}]


async def test_a_plain_reply_through_litellm_carries_content_and_usage(server):
    server.push(text("plain answer", usage={"prompt_tokens": 7, "completion_tokens": 2}))
    response = await litellm().acompletion(
        model=server.model(), api_base=server.api_base, api_key="k", messages=USER
    )
    assert response.choices[0].message.content == "plain answer"
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (7, 2)
    assert server.requests[0].stream is False


def sse_events(body: str) -> list:
    return [line.removeprefix("data: ") for line in body.split("\n\n") if line.strip()]


def test_a_streamed_reply_is_sse_chunks_then_usage_then_done(server):
    server.push(text("abcdefgh", chunk_size=3))
    body = {
        "model": "m",
        "messages": USER,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    response = httpx.post(f"{server.api_base}/chat/completions", json=body)
    assert response.headers["content-type"] == "text/event-stream"
    events = sse_events(response.text)
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    pieces = [c["choices"][0]["delta"].get("content") for c in chunks if c["choices"]]
    assert pieces == ["", "abc", "def", "gh", None]
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 2


def test_usage_is_only_streamed_when_asked_for(server):
    server.push("x")
    body = {"model": "m", "messages": USER, "stream": True}
    events = sse_events(httpx.post(f"{server.api_base}/chat/completions", json=body).text)
    assert not any("usage" in json.loads(e) for e in events[:-1])


def test_a_plain_tool_call_reply_and_the_unprefixed_path(server):
    server.push(tool_calls(ToolCallReply("f", {"a": 1})))
    url = f"http://127.0.0.1:{server.port}/chat/completions"
    tools = [{"type": "function", "function": {"name": "f"}}]
    reply = httpx.post(url, json={"model": "m", "messages": USER, "tools": tools}).json()
    choice = reply["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["tool_calls"][0]["function"] == {"name": "f", "arguments": '{"a": 1}'}
    assert server.requests[0].tools == tools
    assert server.requests[0].path == "/chat/completions"


def test_errors_carry_status_body_and_headers(server):
    server.push(error(429, "slow down", headers={"retry-after": "1"}))
    response = httpx.post(f"{server.api_base}/chat/completions", json={"messages": USER})
    assert response.status_code == 429
    assert response.headers["retry-after"] == "1"
    assert response.json()["error"]["message"] == "slow down"


def test_an_exhausted_script_answers_500_and_says_so(server):
    server.push("only one")
    url = f"{server.api_base}/chat/completions"
    assert httpx.post(url, json={"messages": USER}).status_code == 200
    response = httpx.post(url, json={"messages": USER})
    assert response.status_code == 500
    assert response.json()["error"]["message"] == "scripted model: script exhausted after 1 replies"
    assert server.exhausted and len(server.requests) == 2


def test_unknown_paths_are_404_and_not_recorded(server):
    assert httpx.post(f"{server.api_base}/completions", json={}).status_code == 404
    assert server.requests == []


def test_two_servers_run_side_by_side_on_their_own_ports():
    with ScriptedModel(["a"]) as one, ScriptedModel(["b"]) as two:
        assert one.port != two.port
        for srv, expected in ((one, "a"), (two, "b")):
            reply = httpx.post(f"{srv.api_base}/chat/completions", json={"messages": USER})
            assert reply.json()["choices"][0]["message"]["content"] == expected


def test_the_command_line_serves_a_json_script(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"content": "from a file"}, {"status": 503}]))
    process = subprocess.Popen(
        [sys.executable, str(SERVER_SCRIPT), str(script)], stdout=subprocess.PIPE, text=True
    )
    try:
        banner = process.stdout.readline()
        api_base = banner.split()[0].removeprefix("api_base=")
        url = f"{api_base}/chat/completions"
        first = httpx.post(url, json={"messages": USER}, timeout=10)
        assert first.json()["choices"][0]["message"]["content"] == "from a file"
        assert httpx.post(url, json={"messages": USER}, timeout=10).status_code == 503
    finally:
        process.terminate()
        process.wait(timeout=10)
