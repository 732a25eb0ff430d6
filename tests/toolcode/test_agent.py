"""The tool code agent end to end: the scripted model server through litellm, the shop MCP
server, a real sandbox (docker, else bubblewrap; docker under CI) and a real SQLite store, with
native tool calls and with the text protocol."""

import json
import sys
import textwrap
from pathlib import Path

import pytest
from support.mcp_shop import shop_stdio, write_config
from support.requirements import sandbox_backend
from support.scripted_model import ScriptedModel, ToolCallReply, text, tool_calls
from support.sessions import scripted_settings

from tui_agent.agents.launch import prepare
from tui_agent.agents.requests import ToolcodeRequest
from tui_agent.events import (
    Artifact,
    Error,
    ExecutionFinished,
    ExecutionStarted,
    FinalAnswer,
    Log,
    PhaseFinished,
    ToolCall,
    ToolResult,
)
from tui_agent.recorder import SessionRecorder
from tui_agent.session import fold
from tui_agent.store import Store
from tui_agent.tools import load_mcp_config

PROGRAM = textwrap.dedent(
    """
    import json, sys
    from shop_tools import get_price, list_products
    import workspace_tools

    lines = []
    for product in json.loads(list_products(category=sys.argv[1])):
        lines.append(f"{product['name']}: {get_price(sku=product['sku'])}")
    print("\\n".join(lines))
    print(workspace_tools.update_workspace_file(filepath="prices.txt", content="\\n".join(lines)))
    """
).strip()
REFUSED = "import subprocess\nprint(open('prices.txt').read())\n"
ANSWER = "Kettle costs 24.50 EUR and the toaster 31.00 EUR; the table is in prices.txt."


@pytest.fixture
def settings(server, tmp_path):
    return scripted_settings(server, tmp_path, sandbox_backend())


async def record(settings, mcp, task="Price the kitchen products", **options):
    request = ToolcodeRequest(task=task, mcp_config=mcp.path, **options)
    launch = prepare(request, settings)
    async with await Store.open(settings.db) as store:
        recorder = SessionRecorder(store)
        state = await recorder.run(launch.started, launch.events)
        stored = await store.events(recorder.session_id)
    return state, stored


def of(events, kind):
    return [e for e in events if isinstance(e, kind)]


async def test_native_tool_calls_discover_run_one_program_and_answer(server, settings, shop_config):
    server.push(
        tool_calls(ToolCallReply("discover_code_files", {})),
        tool_calls(ToolCallReply("write_code", {"code": REFUSED})),
        tool_calls(ToolCallReply("write_code", {"code": PROGRAM, "args": ["kitchen"]})),
        text(ANSWER),
    )
    state, events = await record(settings, shop_config)
    assert state.status == "completed", state.errors
    assert state.final_answer == ANSWER
    assert [p.phase for p in of(events, PhaseFinished)] == ["servers", "generate"]
    [packages] = of(events, Artifact)
    assert json.loads(packages.content)["servers"][0]["package"] == "shop_tools"
    # the refused program (step 2) never started; the next one (step 3) ran
    assert [e.step for e in of(events, ExecutionStarted)] == [3]
    refused, ran = of(events, ExecutionFinished)
    assert (refused.step, refused.error.type) == (2, "ProgramRefused")
    assert ran.success and ran.logs[0].text == "Kettle: 24.50 EUR"
    assert (Path(settings.workspace) / "prices.txt").read_text() == (
        "Kettle: 24.50 EUR\nToaster: 31.00 EUR"
    )
    # every call the program made is nested in its step, in order
    step = state.steps[3]
    assert [entry.call.name for entry in step.tool_calls] == [
        "shop.list_products",
        "shop.get_price",
        "shop.get_price",
        "workspace.update_workspace_file",
    ]
    assert all(entry.result is not None and entry.result.ok for entry in step.tool_calls)
    assert state.steps[2].tool_calls == []
    [discover] = [e for e in of(events, ToolCall) if e.run_step is None]
    assert discover.name == "discover_code_files" and discover.step == 1
    # what the model was sent: the two tools, then the answers as tool messages
    first, second, third, last = server.requests
    assert [t["function"]["name"] for t in first.tools] == ["discover_code_files", "write_code"]
    assert second.messages[-1]["role"] == "tool"
    assert '"package": "shop_tools"' in second.messages[-1]["content"]
    assert third.messages[-1]["content"].startswith("Error: validation failed")
    assert "forbidden import `subprocess`" in third.messages[-1]["content"]
    assert last.messages[-1]["content"].startswith("The program ran")
    assert "Toaster: 31.00 EUR" in last.messages[-1]["content"]
    assert fold(events).steps[3].tool_calls[0].call == step.tool_calls[0].call, "replay agrees"


async def test_the_text_protocol_for_models_without_tool_calls(server, settings, shop_config):
    server.push(
        text("First I look at the packages.\nCALL discover_code_files"),
        text(
            'One program does it all.\nCALL write_code {"args": ["office"]}\n'
            f"```python\n{PROGRAM}\n```\n"
        ),
        text(ANSWER),
    )
    state, events = await record(settings, shop_config, tool_protocol="text")
    assert state.status == "completed", state.errors
    assert state.params["tool_protocol"] == "text"
    assert all(request.tools is None for request in server.requests)
    assert "CALL write_code" in server.requests[0].messages[0]["content"]
    second, third = server.requests[1:]
    assert second.messages[-1]["content"].startswith("RESULT discover_code_files {}")
    assert third.messages[-1]["content"].startswith('RESULT write_code {"args": ["office"]}')
    assert "Desk lamp: 18.25 EUR" in third.messages[-1]["content"]
    assert state.steps[2].thought == "One program does it all."
    assert [e.name for e in of(events, ToolCall) if e.run_step == 2] == [
        "shop.list_products",
        "shop.get_price",
        "shop.get_price",
        "workspace.update_workspace_file",
    ]


async def test_two_programs_in_one_turn_get_a_step_each(server, settings, shop_config):
    server.push(
        tool_calls(
            ToolCallReply(
                "write_code",
                {"code": "from shop_tools import next_number\nprint(next_number(value=1))"},
            ),
            ToolCallReply("write_code", {"code": "print('second')"}),
            ToolCallReply("guess_tool", {}),
        ),
        text("done"),
    )
    _, events = await record(settings, shop_config)
    assert [(e.step, e.logs[0].text) for e in of(events, ExecutionFinished)] == [
        (1, "2"),
        (2, "second"),
    ]
    [unknown] = [e for e in of(events, ToolResult) if e.name == "guess_tool"]
    assert not unknown.ok and unknown.output.startswith("Error: no tool 'guess_tool'")
    tool_messages = [m for m in server.requests[1].messages if m["role"] == "tool"]
    assert len(tool_messages) == 3


async def test_a_server_that_cannot_start_fails_the_session_with_one_line(
    server, settings, tmp_path
):
    broken = tmp_path / "broken.py"
    broken.write_text("import sys\nsys.stderr.write('no token\\n')\nsys.exit(1)\n")
    config = write_config(
        tmp_path / "servers.json",
        {"shop": shop_stdio(), "crm": {"command": sys.executable, "args": [str(broken)]}},
    )
    state, events = await record(settings, load_mcp_config(config))
    assert (state.status, state.stopped_reason) == ("failed", "server_failed")
    [error] = of(events, Error)
    assert error.message.startswith("MCP server 'crm'") and "no token" in error.message
    assert not server.requests, "no model call was made"


async def test_the_session_stops_after_max_steps(server, settings, shop_config):
    server.push(
        tool_calls(ToolCallReply("discover_code_files", {})),
        tool_calls(ToolCallReply("discover_code_files", {})),
    )
    state, events = await record(settings, shop_config, max_steps=2)
    assert (state.status, state.stopped_reason) == ("stopped", "max_steps")
    assert not of(events, FinalAnswer)


@pytest.mark.parametrize("wrapped", [f"```python\n{PROGRAM}\n```", f"python\n{PROGRAM}"])
async def test_a_program_in_a_fence_or_under_a_label_runs_as_the_program(
    server, settings, shop_config, wrapped
):
    """Small models put write_code's program in a ``` fence, or leave its `python` label."""
    server.push(
        tool_calls(ToolCallReply("write_code", {"code": wrapped, "args": ["kitchen"]})),
        text(ANSWER),
    )
    state, events = await record(settings, shop_config)
    assert state.status == "completed", state.errors
    [ran] = of(events, ExecutionFinished)
    assert ran.success and ran.logs[0].text == "Kettle: 24.50 EUR"
    assert any(
        "(a fence label)" in e.message or "fence around" in e.message for e in of(events, Log)
    )


REFUSAL = "registry.ollama.ai/library/tiny does not support tools"


async def test_a_server_refusing_tools_gets_the_text_protocol_once(tmp_path, shop_config):
    with ScriptedModel(refuse_tools=REFUSAL) as server:
        server.push(
            text(f'CALL write_code {{"args": ["kitchen"]}}\n```python\n{PROGRAM}\n```\n'),
            text(ANSWER),
        )
        settings = scripted_settings(server, tmp_path, sandbox_backend())
        state, events = await record(settings, shop_config)
    assert state.status == "completed", state.errors
    refused, *after = server.requests
    assert refused.tools and all(request.tools is None for request in after)
    assert "CALL write_code" in after[0].messages[0]["content"]
    assert after[1].messages[-1]["content"].startswith('RESULT write_code {"args": ["kitchen"]}')
    [ran] = of(events, ExecutionFinished)
    assert ran.success and ran.logs[0].text == "Kettle: 24.50 EUR"
    [said] = [e.message for e in of(events, Log) if "text protocol" in e.message]
    assert "cannot do tool calls" in said


async def test_a_server_ignoring_tools_has_the_program_written_as_text_run(
    server, settings, shop_config
):
    call = json.dumps({"name": "write_code", "arguments": {"code": PROGRAM, "args": ["kitchen"]}})
    server.push(text(f"One program.\n<tool_call>\n{call}\n</tool_call>"), text(ANSWER))
    state, events = await record(settings, shop_config)
    assert state.status == "completed", state.errors
    assert state.final_answer == ANSWER
    first, second = server.requests
    assert first.tools and second.tools is None
    assert "CALL write_code" in second.messages[0]["content"]
    assert second.messages[-1]["content"].startswith("RESULT write_code")
    assert "Toaster: 31.00 EUR" in second.messages[-1]["content"]
    assert state.steps[1].thought == "One program."
    [said] = [e.message for e in of(events, Log) if "text protocol" in e.message]
    assert "ignored the tools" in said


async def test_the_text_protocol_reads_a_call_written_as_json_too(server, settings, shop_config):
    """Seen from Qwen2.5-Coder-1.5B after the fall back: calls in a ```json block, no CALL."""
    call = json.dumps({"name": "write_code", "arguments": {"code": PROGRAM, "args": ["kitchen"]}})
    server.push(text(f"```json\n{call}\n```"), text(ANSWER))
    state, events = await record(settings, shop_config, tool_protocol="text")
    assert state.final_answer == ANSWER
    [ran] = of(events, ExecutionFinished)
    assert ran.success and ran.logs[0].text == "Kettle: 24.50 EUR"
    assert server.requests[1].messages[-1]["content"].startswith("RESULT write_code")
