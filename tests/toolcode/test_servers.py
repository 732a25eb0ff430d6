"""The MCP client on a real server (tests/toolcode/shop_server.py), over stdio and streamable
HTTP: tool lists, outputs, tool errors as text, and calls that cannot complete."""

import json
import sys

import pytest
from support.mcp_shop import shop_stdio, write_config

from tui_agent.tools import ServerStartError, ToolCallFailure, ToolServers, load_mcp_config

TOOLS = {
    "list_products", "get_price", "next_number", "place_order", "tag_counts", "fail", "hang",
    "crash", "slow-echo",
}  # fmt: skip


@pytest.fixture(params=["stdio", "http"])
def transport_config(request, tmp_path):
    if request.param == "stdio":
        return load_mcp_config(write_config(tmp_path / "s.json", {"shop": shop_stdio()}))
    url = request.getfixturevalue("shop_url")
    server = {"url": url, "headers": {"X-Test": "yes"}}
    return load_mcp_config(write_config(tmp_path / "s.json", {"shop": server}))


async def test_tools_are_listed_and_called_over_both_transports(transport_config):
    async with ToolServers(transport_config) as servers:
        [shop] = servers.listings
        assert {tool.name for tool in shop.tools} == TOOLS
        assert shop.description == "A small shop: products, prices and orders."
        kitchen = await servers.call("shop", "list_products", {"category": "kitchen"}, 10)
        assert [p["sku"] for p in json.loads(kitchen)] == ["kettle", "toaster"]
        assert await servers.call("shop", "get_price", {"sku": "lamp", "currency": "USD"}, 10) == (
            "20.08 USD"
        )
        assert await servers.call("shop", "next_number", {"value": 41}, 10) == "42"
        assert await servers.call("shop", "slow-echo", {"text": "hi"}, 10) == "hi"


async def test_a_tool_error_is_text_starting_with_error(transport_config):
    async with ToolServers(transport_config) as servers:
        failed = await servers.call("shop", "fail", {"message": "out of stock"}, 10)
        unknown = await servers.call("shop", "get_price", {"sku": "sofa"}, 10)
        invalid = await servers.call("shop", "next_number", {"value": "many"}, 10)
    assert failed.startswith("Error: ") and "out of stock" in failed
    assert unknown.startswith("Error: ") and "no product 'sofa'" in unknown
    assert invalid.startswith("Error: ") and "value" in invalid


async def test_a_tool_that_hangs_fails_after_the_call_timeout_and_the_server_still_works(
    transport_config,
):
    async with ToolServers(transport_config) as servers:
        with pytest.raises(ToolCallFailure, match=r"shop.hang did not answer within 1 s"):
            await servers.call("shop", "hang", {"seconds": 30}, 1)
        assert await servers.call("shop", "next_number", {"value": 1}, 10) == "2"


async def test_a_server_that_dies_mid_call_fails_that_call_and_the_next(shop_config):
    async with ToolServers(shop_config) as servers:
        with pytest.raises(ToolCallFailure) as raised:
            await servers.call("shop", "crash", {}, 10)
        message = str(raised.value)
        assert message.startswith(
            "MCP server 'shop' is gone: it closed the connection during crash"
        )
        assert "its last words: shop: crashing on purpose" in message
        with pytest.raises(ToolCallFailure, match="MCP server 'shop' is gone"):
            await servers.call("shop", "next_number", {"value": 1}, 10)


async def test_a_server_that_cannot_start_is_one_line_with_its_last_words(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text(
        "import sys\nsys.stderr.write('config missing: set SHOP_KEY\\n')\nsys.exit(2)\n"
    )
    servers = {
        "shop": shop_stdio(),
        "broken": {"command": sys.executable, "args": [str(broken)]},
    }
    config = load_mcp_config(write_config(tmp_path / "s.json", servers))
    with pytest.raises(ServerStartError) as raised:
        async with ToolServers(config):
            pass
    message = str(raised.value)
    assert message.startswith(f"MCP server 'broken' ({sys.executable} {broken}) did not start")
    assert message.endswith("its last words: config missing: set SHOP_KEY")
    assert "\n" not in message


async def test_a_missing_command_and_an_unreachable_url_are_one_line(tmp_path):
    missing = {"gone": {"command": str(tmp_path / "no-such-server")}}
    config = load_mcp_config(write_config(tmp_path / "a.json", missing))
    with pytest.raises(ServerStartError, match=r"MCP server 'gone' .* did not start: No such file"):
        await ToolServers(config).start()
    closed = {"far": {"url": "http://127.0.0.1:9/mcp"}}
    config = load_mcp_config(write_config(tmp_path / "b.json", closed))
    with pytest.raises(ServerStartError, match=r"MCP server 'far' \(http://127.0.0.1:9/mcp\)"):
        await ToolServers(config).start()
