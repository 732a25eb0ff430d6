"""`tui-agent toolcode` and `tui-agent tools` as a user runs them: real processes, the shop MCP
server, the scripted model through litellm, a real sandbox and SQLite."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.mcp_shop import shop_stdio, write_config
from support.requirements import sandbox_backend
from support.scripted_model import ScriptedModel, ToolCallReply, text, tool_calls

MODEL = "openai/gpt-4o-mini"
PROGRAM = "from shop_tools import get_price\nprint(get_price(sku='chair'))\n"


def tui_agent(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TUI_AGENT_")}
    environment.update(TUI_AGENT_CONFIG_FILE=str(tmp_path / "none.toml"), COLUMNS="100", **env)
    return subprocess.run(
        [sys.executable, "-m", "tui_agent", "--db", str(tmp_path / "s.db"), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=environment,
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
    )


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1, result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


def toolcode_args(server: ScriptedModel, tmp_path: Path, *extra: str) -> list[str]:
    return [
        "toolcode",
        "What does the chair cost?",
        "--model",
        MODEL,
        "--api-base",
        server.api_base,
        "--sandbox",
        sandbox_backend(),
        "--workspace",
        str(tmp_path / "ws"),
        *extra,
    ]


def test_toolcode_headless_runs_a_program_and_prints_the_answer(server, tmp_path):
    config = write_config(tmp_path / "servers.json", {"shop": shop_stdio()})
    server.push(
        tool_calls(ToolCallReply("write_code", {"code": PROGRAM})),
        text("The chair costs 129.00 EUR."),
    )
    result = tui_agent(
        tmp_path, *toolcode_args(server, tmp_path, "--headless"), TUI_AGENT_MCP_CONFIG=str(config)
    )
    assert result.returncode == 0, result.stderr
    assert "🔧 shop.get_price" in result.stdout and "129.00 EUR" in result.stdout
    assert "The chair costs 129.00 EUR." in result.stdout
    listing = tui_agent(tmp_path, "sessions", "list", "--json")
    [session] = [json.loads(line) for line in listing.stdout.splitlines()]
    assert (session["kind"], session["status"]) == ("toolcode", "completed")
    report = json.loads(
        tui_agent(tmp_path, "sessions", "show", session["session_id"], "--json").stdout
    )
    assert report["params"]["servers"] == ["shop"]


def test_bad_configs_and_unknown_servers_are_one_line_before_anything_runs(server, tmp_path):
    assert one_line(tui_agent(tmp_path, *toolcode_args(server, tmp_path, "--headless"))) == (
        "tui-agent: no MCP servers: pass --mcp FILE or set TUI_AGENT_MCP_CONFIG"
    )
    missing = tui_agent(tmp_path, *toolcode_args(server, tmp_path, "--mcp", "nope.json"))
    assert one_line(missing) == "tui-agent: MCP config nope.json does not exist"
    (tmp_path / "bad.json").write_text('{"mcpServers": {"x": {"url": 3}}}')
    bad = tui_agent(tmp_path, *toolcode_args(server, tmp_path, "--mcp", "bad.json"))
    assert one_line(bad).startswith("tui-agent: server 'x' in bad.json: url: Input should be")
    config = write_config(tmp_path / "servers.json", {"shop": shop_stdio()})
    unknown = tui_agent(
        tmp_path, *toolcode_args(server, tmp_path, "--mcp", str(config), "--server", "mall")
    )
    assert one_line(unknown) == f"tui-agent: no server 'mall' in {config} (it has: shop)"
    assert not server.requests
    assert tui_agent(tmp_path, "sessions", "list", "--json").stdout == "", "nothing recorded"


def test_a_server_that_fails_to_start_ends_the_session_with_its_reason(server, tmp_path):
    config = write_config(tmp_path / "servers.json", {"shop": {"command": "no-such-mcp-server"}})
    result = tui_agent(
        tmp_path, *toolcode_args(server, tmp_path, "--mcp", str(config), "--headless")
    )
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("tui-agent: session failed: MCP server 'shop' (no-such-mcp-server)")
    assert "did not start" in last and "Traceback" not in result.stderr


def test_tools_list_and_generate(tmp_path):
    config = write_config(tmp_path / "servers.json", {"shop": shop_stdio()})
    listed = tui_agent(tmp_path, "tools", "list", "--mcp", str(config))
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0] == f"shop  ({sys.executable} {shop_stdio()['args'][0]})  ->  shop_tools"
    assert "  get_price(*, sku: str, currency: Literal['EUR', 'USD'] = 'EUR') -> str" in lines
    assert "workspace  (the workspace, on the host)  ->  workspace_tools" in lines
    as_json = json.loads(
        tui_agent(tmp_path, "tools", "list", "--mcp", str(config), "--json").stdout
    )
    assert [entry["package"] for entry in as_json] == ["shop_tools", "workspace_tools"]
    out = tmp_path / "generated"
    first = tui_agent(tmp_path, "tools", "generate", "--mcp", str(config), "--out", str(out))
    assert first.returncode == 0, first.stderr
    assert "shop_tools: 9 functions, written in" in first.stdout
    again = tui_agent(tmp_path, "tools", "generate", "--mcp", str(config), "--out", str(out))
    assert "shop_tools: 9 functions, unchanged in" in again.stdout
    assert (out / "shop_tools" / "get_price.py").is_file()
    assert (out / "tui_agent_bridge.pyi").is_file()


@pytest.mark.parametrize("action", [["list"], ["generate", "--out", "generated"]])
def test_tools_commands_say_which_server_did_not_start(tmp_path, action):
    config = write_config(tmp_path / "servers.json", {"shop": {"command": "no-such-mcp-server"}})
    result = tui_agent(tmp_path, "tools", *action, "--mcp", str(config))
    assert not (tmp_path / "generated").exists()
    assert one_line(result).startswith(
        "tui-agent: MCP server 'shop' (no-such-mcp-server) did not start: "
    )
