"""How a server that cannot do tool calls is told apart, through real litellm against the
scripted server, and how calls a model wrote as text are read."""

import pytest
from support.scripted_model import error

from tui_agent.llm import LLMRequestError, ProviderUnavailable, ToolsUnsupported
from tui_agent.llm.tool_fallback import ToolMode, calls_in_text

USER = [{"role": "user", "content": "Look it up"}]
SPEC = {
    "type": "function",
    "function": {
        "name": "search_documentation",
        "parameters": {"properties": {"library": {}, "query": {}}},
    },
}


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (400, "registry.ollama.ai/library/tiny does not support tools"),
        (500, "tools param requires --jinja flag"),  # llama.cpp's server: not retried
        (400, '"auto" tool choice requires --enable-auto-tool-choice to be set'),
    ],
)
async def test_a_request_refused_for_its_tools_is_said_at_once(server, make_llm, status, message):
    server.push(error(status, message))
    with pytest.raises(ToolsUnsupported, match="cannot do tool calls"):
        await make_llm().complete(USER, tools=[SPEC])
    assert len(server.requests) == 1


async def test_other_refusals_stay_what_they_were(server, make_llm):
    server.push(error(400, "messages: field required"))
    with pytest.raises(LLMRequestError) as refused:
        await make_llm().complete(USER, tools=[SPEC])
    assert not isinstance(refused.value, ToolsUnsupported)
    server.push(*[error(500, "boom")] * 3)  # retried, as any server error
    with pytest.raises(ProviderUnavailable):
        await make_llm().complete(USER, tools=[SPEC])


async def test_without_tools_a_tools_message_is_no_tools_refusal(server, make_llm):
    server.push(error(400, "tools are not allowed here"))
    with pytest.raises(LLMRequestError) as refused:
        await make_llm().complete(USER)
    assert not isinstance(refused.value, ToolsUnsupported)


def test_calls_written_as_text_are_read_in_each_shape():
    shapes = [
        'CALL search_documentation {"library": "json", "query": "dumps"}',
        '<tool_call>\n{"name": "search_documentation", "arguments": '
        '{"library": "json", "query": "dumps"}}\n</tool_call>',
        '```json\n{"name": "search_documentation", "parameters": '
        '{"library": "json", "query": "dumps"}}\n```',
        '{"name": "search_documentation", "arguments": "{\\"library\\": \\"json\\", '
        '\\"query\\": \\"dumps\\"}"}',
    ]
    for shape in shapes:
        turn = calls_in_text(f"Let me check.\n{shape}", [SPEC])
        [call] = turn.calls
        assert (call.name, call.arguments) == (
            "search_documentation",
            {"library": "json", "query": "dumps"},
        ), shape
        assert turn.prose == "Let me check.", shape


def test_a_call_whose_code_is_a_python_triple_quoted_string_is_read():
    # Qwen2.5-Coder-1.5B wrote tool code's write_code call so, after the fall back
    write_code = {
        "type": "function",
        "function": {"name": "write_code", "parameters": {"properties": {"code": {}}}},
    }
    reply = (
        "I will run a program.\n```json\n"
        '{"name": "write_code", "arguments": {"code": """\n'
        "from shop_tools import get_price\n"
        'print(get_price(item="chair"))  # {"price": 129}\n'
        '""", "args": [], "verbose": true}}\n```'
    )
    turn = calls_in_text(reply, [write_code])
    [call] = turn.calls
    assert call.arguments["code"] == (
        '\nfrom shop_tools import get_price\nprint(get_price(item="chair"))  # {"price": 129}\n'
    )
    assert call.arguments["verbose"] is True
    assert turn.prose == "I will run a program."


def test_prose_and_other_json_are_no_calls():
    for prose in (
        "I would call search_documentation next.",
        '{"name": "other_tool", "arguments": {}}',
        '{"valid": true}',
    ):
        assert calls_in_text(prose, [SPEC]).calls == []


def test_a_session_falls_back_once():
    mode = ToolMode(native=True)
    said = mode.fall_back("openai/tiny", "the server cannot do tool calls")
    assert said is not None and said.level == "warning" and "text protocol" in said.message
    assert not mode.native
    assert mode.fall_back("openai/tiny", "again") is None
