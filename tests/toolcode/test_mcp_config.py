"""The MCP config file: the ecosystem's shape, one clear line for anything wrong."""

import json

import pytest

from tui_agent.tools import McpConfigError, load_mcp_config
from tui_agent.tools.config import HttpServer, StdioServer, python_stem


def config(tmp_path, data):
    path = tmp_path / "servers.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_stdio_and_http_servers_are_read_in_order(tmp_path):
    path = config(
        tmp_path,
        {
            "mcpServers": {
                "google-sheets": {"command": "npx", "args": ["-y", "sheets"], "env": {"K": "v"}},
                "notes": {"url": "http://127.0.0.1:9000/mcp", "headers": {"Authorization": "x"}},
                "off": {"command": "x", "disabled": True},
            }
        },
    )
    loaded = load_mcp_config(path)
    sheets, notes = loaded.servers
    assert (sheets.name, sheets.package) == ("google-sheets", "google_sheets_tools")
    assert isinstance(sheets.config, StdioServer) and sheets.config.env == {"K": "v"}
    assert isinstance(notes.config, HttpServer) and notes.config.headers == {"Authorization": "x"}
    assert [e.name for e in loaded.select(["notes"]).servers] == ["notes"]
    secret = HttpServer(url="https://me:hunter2@example.test/mcp")
    assert secret.describe() == "https://example.test/mcp"
    assert [e.name for e in loaded.select(["google_sheets"]).servers] == ["google-sheets"]


@pytest.mark.parametrize(
    ("name", "stem"),
    [("weather", "weather"), ("Google Sheets", "google_sheets"), ("1password", "s_1password")],
)
def test_server_names_become_python_names(name, stem):
    assert python_stem(name) == stem


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("{not json", "is not valid JSON: Expecting property name"),
        ([], 'needs an "mcpServers" object'),
        ({"mcpServers": {}}, "lists no server"),
        ({"mcpServers": {"x": {"args": []}}}, 'needs a "command" (stdio) or a "url"'),
        ({"mcpServers": {"x": "python"}}, "must be an object"),
        ({"mcpServers": {"x": {"url": "ftp://h/mcp"}}}, "url must start with http://"),
        ({"mcpServers": {"x": {"url": "http://h", "type": "sse"}}}, "SSE transport"),
        (
            {"mcpServers": {"x": {"command": "a", "args": "b"}}},
            "args: Input should be a valid list",
        ),
        ({"mcpServers": {"workspace": {"command": "a"}}}, "taken by the workspace tools"),
        ({"mcpServers": {"a-b": {"command": "a"}, "a_b": {"command": "b"}}}, "both be a_b_tools"),
        ({"mcpServers": {"x": {"command": "a", "disabled": True}}}, "every server"),
    ],
)
def test_a_bad_config_is_one_line_naming_the_file(tmp_path, data, message):
    path = config(tmp_path, data)
    with pytest.raises(McpConfigError) as raised:
        load_mcp_config(path)
    text = str(raised.value)
    assert message in text and str(path) in text and "\n" not in text


def test_a_missing_file_and_an_unknown_server_are_named(tmp_path):
    with pytest.raises(McpConfigError, match="does not exist"):
        load_mcp_config(tmp_path / "nope.json")
    path = config(tmp_path, {"mcpServers": {"shop": {"command": "x"}}})
    with pytest.raises(McpConfigError, match=r"no server 'mall' in .* \(it has: shop\)"):
        load_mcp_config(path).select(["mall"])
