"""Tool code sessions on screen: each program with the tool calls inside it and its output, a
refused program, replay; and the home screen's `n` starting one from its form."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from session_factory import at_fixed_times, started, store_events, wait_until
from support.mcp_shop import SHOP
from support.requirements import sandbox_backend
from support.scripted_model import ScriptedModel, ToolCallReply, text, tool_calls
from support.sessions import scripted_settings
from test_new_session import open_form
from textual.pilot import Pilot
from textual.widgets import Input, Static

from tui_agent.events import (
    Artifact,
    CodeProposed,
    ErrorInfo,
    Event,
    ExecutionFinished,
    ExecutionOutput,
    ExecutionStarted,
    FinalAnswer,
    LLMCall,
    LogLine,
    PhaseFinished,
    PhaseStarted,
    SessionEnded,
    Thought,
    ToolCall,
    ToolResult,
)
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.screens.replay import ReplayScreen
from tui_agent.tui.screens.session import SessionScreen
from tui_agent.tui.widgets.step_card import StepCard

pytestmark = pytest.mark.usefixtures("utc")

SESSION = "7001c0de0001"
PROGRAM = """\
import json
from shop_tools import get_price, list_products

for product in json.loads(list_products(category="kitchen")):
    print(product["name"], get_price(sku=product["sku"]))
print(get_price(sku="sofa"))"""


def program_calls(step: int) -> list[Event]:
    """The tool calls a program made, each answered; the last one is a tool error."""
    answers = [
        ("shop.list_products", {"category": "kitchen"}, '[{"sku": "kettle"}, {"sku": "toaster"}]'),
        ("shop.get_price", {"sku": "kettle"}, "24.50 EUR"),
        ("shop.get_price", {"sku": "toaster"}, "31.00 EUR"),
        ("shop.get_price", {"sku": "sofa"}, "Error: no product 'sofa'"),
    ]
    events: list[Event] = []
    for number, (name, arguments, output) in enumerate(answers, 1):
        call_id = f"step{step}-call{number}"
        events.append(
            ToolCall(call_id=call_id, name=name, arguments=arguments, step=step, run_step=step)
        )
        ok = not output.startswith("Error:")
        events.append(ToolResult(call_id=call_id, name=name, output=output, ok=ok, duration=0.03))
    return events


def toolcode_payloads() -> list[Event]:
    discovery = {"servers": [{"name": "shop", "package": "shop_tools", "tools": []}]}
    refusal = (
        "line 1: forbidden import `subprocess`: programs start no processes; call the "
        "generated tool functions (see discover_code_files) instead"
    )
    calls = program_calls(3)
    return [
        PhaseStarted(phase="servers", detail="shop (from servers.json)"),
        PhaseFinished(phase="servers", duration=1.2, summary="shop (9 tools)"),
        PhaseStarted(phase="generate", detail="ws/.toolcode/packages"),
        PhaseFinished(phase="generate", duration=0.01, summary="shop_tools unchanged"),
        Artifact(
            name="tool packages",
            content=json.dumps(discovery, indent=1),
            format="json",
            origin="generated",
            summary="12 functions in 2 packages",
        ),
        LLMCall(model="gpt-4o-mini", prompt_tokens=900, completion_tokens=30, cost=0.001, step=1),
        ToolCall(call_id="c1", name="discover_code_files", step=1),
        ToolResult(call_id="c1", name="discover_code_files", output=json.dumps(discovery)),
        Thought(step=2, text="I read the prices straight from the shop."),
        CodeProposed(step=2, code="import subprocess", action="write_code"),
        ExecutionFinished(
            step=2, success=False, error=ErrorInfo(type="ProgramRefused", message=refusal)
        ),
        Thought(step=3, text="One program prices every kitchen product."),
        CodeProposed(step=3, code=PROGRAM, action="write_code"),
        ExecutionStarted(step=3, backend="docker"),
        *calls[:4],
        ExecutionOutput(step=3, lines=[LogLine(stream="stdout", text="Kettle 24.50 EUR")]),
        *calls[4:],
        ExecutionFinished(
            step=3,
            success=True,
            duration=0.48,
            logs=[
                LogLine(stream="stdout", text="Kettle 24.50 EUR"),
                LogLine(stream="stdout", text="Toaster 31.00 EUR"),
                LogLine(stream="stdout", text="Error: no product 'sofa'"),
            ],
        ),
        FinalAnswer(step=4, text="The kettle costs **24.50 EUR**, the toaster **31.00 EUR**."),
    ]


@pytest.fixture
def stored(db_path: Path) -> Path:
    first = started("Price the kitchen products", "toolcode")
    end = SessionEnded(status="completed")
    asyncio.run(store_events(db_path, at_fixed_times(SESSION, first, toolcode_payloads(), end)))
    return db_path


def test_a_toolcode_session_shows_each_program_with_its_tool_calls(
    snap_compare: Any, stored: Path
) -> None:
    app = TuiAgentApp(stored, open_session=SESSION)

    async def at_the_program(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, SessionScreen))
        await wait_until(pilot, lambda: len(pilot.app.screen.query(StepCard)) == 3)
        await pilot.press("end")
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=(110, 46), run_before=at_the_program)


async def test_replay_shows_the_calls_of_a_program_as_they_were_made(stored: Path) -> None:
    app = TuiAgentApp(stored, replay_session=SESSION)
    async with app.run_test(size=(110, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen))
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        payloads = toolcode_payloads()
        started_at = 1 + next(i for i, e in enumerate(payloads) if isinstance(e, ExecutionStarted))
        await pilot.press(*["right"] * (started_at + 4))  # up to the program's second call
        await wait_until(pilot, lambda: screen.replay.position == started_at + 4)
        step = screen.state.steps[3]
        assert step.running and [e.call.name for e in step.tool_calls] == [
            "shop.list_products",
            "shop.get_price",
        ]
        card = next(c for c in screen.query(StepCard) if c.border_title.startswith("Step 3"))
        await wait_until(pilot, lambda: "2 tool calls" in str(card.border_title))
        view = card.query_one(".program-calls", Static)
        assert str(view.render()).endswith('shop.get_price(sku="kettle")  waiting…')
        await pilot.press("right")
        await wait_until(pilot, lambda: "24.50 EUR" in str(view.render()))
        await pilot.press("end")
        await wait_until(pilot, lambda: screen.state.status == "completed")
        assert str(card.border_title) == "Step 3 · 4 tool calls"
        refused = next(c for c in screen.query(StepCard) if c.border_title.startswith("Step 2"))
        assert refused.border_subtitle == "✗ refused before running"


async def test_n_starts_a_toolcode_session_from_its_form(tmp_path: Path) -> None:
    config = tmp_path / "servers.json"
    config.write_text(
        json.dumps({"mcpServers": {"shop": {"command": sys.executable, "args": [str(SHOP)]}}})
    )
    with ScriptedModel() as server:
        server.push(
            tool_calls(
                ToolCallReply(
                    "write_code",
                    {"code": "from shop_tools import next_number\nprint(next_number(value=41))"},
                )
            ),
            text("The answer is 42."),
        )
        settings = scripted_settings(server, tmp_path, sandbox_backend())
        app = TuiAgentApp(settings.db, settings=settings)
        async with app.run_test(size=(110, 40)) as pilot:
            modal = await open_form(pilot, "toolcode")
            await wait_until(pilot, lambda: modal.focused is modal.query_one("#toolcode-task"))
            await pilot.press(*"Count on")
            modal.query_one("#toolcode-mcp-config", Input).value = str(tmp_path / "none.json")
            await pilot.press("ctrl+s")
            await wait_until(pilot, lambda: "does not exist" in modal.problem)
            config_field = modal.query_one("#toolcode-mcp-config")  # said at its field
            await wait_until(pilot, lambda: modal.focused is config_field)
            modal.query_one("#toolcode-mcp-config", Input).value = str(config)
            await pilot.press("ctrl+s")
            await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen), timeout=30)
            screen = app.screen
            assert isinstance(screen, SessionScreen)
            await wait_until(pilot, lambda: screen.state.status != "running", timeout=120)
            # a session from the form is a conversation: answered, it waits for you
            assert screen.state.status == "waiting", screen.state.errors
            assert screen.state.kind == "toolcode"
            assert screen.state.final_answer == "The answer is 42."
            [call] = screen.state.steps[1].tool_calls
            assert call.call.name == "shop.next_number" and call.result.output == "42"
