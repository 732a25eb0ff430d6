"""Tool code driven by a real model: `tui-agent toolcode --json` with the shop MCP server,
against the server named by TUI_AGENT_TEST_MODEL_BASE (skipped without it)."""

from __future__ import annotations

import json

from support.mcp_shop import shop_stdio, write_config
from support.real_model import tui_agent
from support.requirements import sandbox_backend


def test_toolcode_calls_the_shop_and_completes(real_model, tmp_path):
    config = write_config(tmp_path / "servers.json", {"shop": shop_stdio()})
    result = tui_agent(
        tmp_path,
        real_model,
        "toolcode",
        "What does the chair cost?",
        "--sandbox",
        sandbox_backend(),
        "--workspace",
        str(tmp_path / "ws"),
        "--json",
        env={"TUI_AGENT_MCP_CONFIG": str(config)},
    )
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert events and events[-1]["type"] == "session_ended", result.stderr[-2000:]
    assert events[-1]["status"] == "completed", (events[-1], result.stderr[-2000:])
    assert any(e["type"] == "tool_call" and e["name"].endswith("get_price") for e in events)
    answers = [e["text"] for e in events if e["type"] == "final_answer"]
    assert answers and "129" in answers[-1]
