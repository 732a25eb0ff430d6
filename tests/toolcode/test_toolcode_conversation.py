"""Tool code sessions as conversations: a follow-up reuses the servers, the sandbox and the
workspace; a stored session continues with its programs run again (flagged: they call the
tools again) and with its history rebuilt as text. Scripted model, the shop MCP server, a
real sandbox and SQLite."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.conversations import User, converse
from support.requirements import sandbox_backend
from support.scripted_model import ToolCallReply, text, tool_calls
from support.sessions import scripted_settings

from tui_agent.agents.launch import prepare
from tui_agent.agents.launch.resume import continue_session
from tui_agent.agents.requests import ToolcodeRequest
from tui_agent.agents.step_loop import Conversation, FixedChoices
from tui_agent.events import (
    ExecutionFinished,
    SessionResumed,
    StateRestored,
    TurnEnded,
    UserMessage,
)

PRICES = (
    "import json\nfrom shop_tools import get_price, list_products\nimport workspace_tools\n"
    "lines = [f\"{p['name']}: {get_price(sku=p['sku'])}\" "
    "for p in json.loads(list_products(category='kitchen'))]\n"
    "print(workspace_tools.update_workspace_file(filepath='prices.txt', "
    "content='\\n'.join(lines)))"
)
READ_BACK = (
    "import workspace_tools\nprint(workspace_tools.read_workspace_file(filepath='prices.txt'))"
)


@pytest.fixture
def settings(server, tmp_path):
    return scripted_settings(server, tmp_path, sandbox_backend())


def ran(events) -> list[str]:
    return [
        "\n".join(line.text.rstrip("\n") for line in e.logs).strip()
        for e in events
        if isinstance(e, ExecutionFinished)
    ]


async def test_a_follow_up_uses_the_same_servers_and_workspace(server, settings, shop_config):
    server.push(
        tool_calls(ToolCallReply("write_code", {"code": PRICES})),
        text("Prices are in prices.txt."),
        tool_calls(ToolCallReply("write_code", {"code": READ_BACK})),
        text("Kettle 24.50 EUR, toaster 31.00 EUR."),
    )
    conversation = Conversation()
    request = ToolcodeRequest(task="Price the kitchen products", mcp_config=shop_config.path)
    launch = prepare(request, settings, conversation=conversation)
    session = await converse(settings.db, launch, User(conversation, ["Read the file back"]))

    assert session.state.status == "completed", session.state.errors
    finished = [e for e in session.stored if isinstance(e, ExecutionFinished)]
    assert ran(session.stored)[-1] == "Kettle: 24.50 EUR\nToaster: 31.00 EUR", finished
    assert [e.turn for e in session.of(UserMessage)] == [2]
    assert [e.status for e in session.of(TurnEnded)] == ["completed", "completed"]
    phases = [e for e in session.stored if e.type == "phase_started"]
    assert [p.phase for p in phases] == ["servers", "generate"]  # connected once
    follow_up = server.requests[2].messages
    assert follow_up[-1] == {"role": "user", "content": "Read the file back"}
    assert any(m["role"] == "tool" for m in follow_up)  # turn 1 as it happened, native


async def test_a_continued_session_asks_before_calling_the_tools_again(
    server, settings, shop_config
):
    server.push(
        tool_calls(ToolCallReply("write_code", {"code": PRICES})),
        text("Prices are in prices.txt."),
    )
    request = ToolcodeRequest(task="Price the kitchen products", mcp_config=shop_config.path)
    first = await converse(settings.db, prepare(request, settings), User(Conversation(), []))
    (Path(settings.workspace) / "prices.txt").unlink()  # the state to restore
    server.push(
        tool_calls(ToolCallReply("write_code", {"code": READ_BACK})),
        text("Read."),
    )
    launch = continue_session(
        first.stored,
        settings,
        message="Read the file back",
        choices=FixedChoices(flagged=True),
    )
    session = await converse(settings.db, launch, User(Conversation(), []))

    [resumed] = session.of(SessionResumed)
    assert (resumed.runs, resumed.flagged) == (1, [1])
    [restored] = session.of(StateRestored)
    assert (restored.ran, restored.failed, restored.skipped) == (1, [], [])
    assert ran(session.stored)[-1] == "Kettle: 24.50 EUR\nToaster: 31.00 EUR"
    history = server.requests[-2].messages
    assert all(m["role"] != "tool" for m in history)  # rebuilt as text
    assert "write_code:\n```python\nimport json" in history[2]["content"]
    assert history[3]["content"].startswith("RESULT of write_code:\nThe program ran")
