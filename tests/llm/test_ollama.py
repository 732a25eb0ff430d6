"""An Ollama model through real litellm against the scripted Ollama server: every request
carries its context window (`num_ctx`), never leaving Ollama at its 2048-token default."""

import pytest
from support.scripted_model import text
from support.scripted_ollama import ScriptedOllama

from tui_agent.events import Sampling
from tui_agent.llm import LLM
from tui_agent.llm.client import OLLAMA_CONTEXT

USER = [{"role": "user", "content": "Say hi"}]
ROUTES = ("ollama_chat", "ollama")


@pytest.fixture
def ollama():
    with ScriptedOllama() as server:
        yield server


@pytest.mark.parametrize("route", ROUTES)
async def test_the_context_setting_is_sent_as_num_ctx(ollama, route):
    ollama.push(text("hello there"))
    llm = LLM(ollama.model(route=route), api_base=ollama.api_base, context_tokens=6000)
    reply = await llm.complete(USER)
    [request] = ollama.requests
    assert request.path == ("/api/chat" if route == "ollama_chat" else "/api/generate")
    assert request.body["options"]["num_ctx"] == 6000
    assert reply.text == "hello there"


@pytest.mark.parametrize("route", ROUTES)
async def test_no_context_setting_still_sends_a_window_above_ollamas_default(ollama, route):
    ollama.push(text("hi"))
    await LLM(ollama.model(route=route), api_base=ollama.api_base).complete(USER)
    [request] = ollama.requests
    assert request.body["options"]["num_ctx"] == OLLAMA_CONTEXT > 2048


async def test_sampling_reaches_ollama_in_its_own_words(ollama):
    ollama.push(text("hi"))
    sampling = Sampling(temperature=0.1, max_tokens=50, top_p=0.8)
    llm = LLM(ollama.model(), api_base=ollama.api_base, sampling=sampling)
    reply = await llm.complete(USER)
    options = ollama.requests[0].body["options"]
    assert (options["temperature"], options["num_predict"], options["top_p"]) == (0.1, 50, 0.8)
    assert reply.call.sampling == sampling


async def test_an_openai_compatible_server_gets_no_num_ctx(server):
    server.push(text("hi"))
    llm = LLM(server.model(), api_base=server.api_base, api_key="k", context_tokens=6000)
    await llm.complete(USER)
    assert "num_ctx" not in server.requests[0].body
