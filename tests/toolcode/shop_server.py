"""A small MCP server for the tool code tests and benchmark, on the official SDK's MCPServer.

    python shop_server.py            # over stdin and stdout
    python shop_server.py --http     # streamable HTTP on 127.0.0.1, a free port; prints "PORT n"

Tools: a little shop (products, prices, a chained counter), tools that take typed structures
(for the generated types), and tools that misbehave: one that reports an error, one that hangs,
one that kills the server.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import time
from typing import Literal, NotRequired

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

server = MCPServer("shop", instructions="A small shop: products, prices and orders.")

PRODUCTS = {
    "kettle": {"name": "Kettle", "category": "kitchen", "price": 24.5},
    "toaster": {"name": "Toaster", "category": "kitchen", "price": 31.0},
    "lamp": {"name": "Desk lamp", "category": "office", "price": 18.25},
    "chair": {"name": "Office chair", "category": "office", "price": 129.0},
}


class Address(TypedDict):
    street: str
    city: str
    zip: NotRequired[str]


class OrderLine(TypedDict):
    sku: str
    quantity: int


@server.tool()
def list_products(category: str | None = None) -> str:
    """The products (sku, name, category), as JSON; only those of `category` when given."""
    found = [
        {"sku": sku, "name": p["name"], "category": p["category"]}
        for sku, p in PRODUCTS.items()
        if category is None or p["category"] == category
    ]
    return json.dumps(found)


@server.tool()
def get_price(sku: str, currency: Literal["EUR", "USD"] = "EUR") -> str:
    """The price of product `sku` in `currency`."""
    if sku not in PRODUCTS:
        raise ToolError(f"no product {sku!r}")
    price = PRODUCTS[sku]["price"] * (1.1 if currency == "USD" else 1.0)
    return f"{price:.2f} {currency}"


@server.tool()
def next_number(value: int) -> int:
    """`value` plus one (for chaining calls)."""
    return value + 1


@server.tool()
def place_order(
    lines: list[OrderLine], address: Address, express: bool = False, note: str | None = None
) -> str:
    """Place an order of `lines` shipped to `address`."""
    total = sum(PRODUCTS[line["sku"]]["price"] * line["quantity"] for line in lines)
    speed = "express" if express else "standard"
    return f"order for {address['city']}: {len(lines)} lines, {total:.2f} EUR, {speed}"


@server.tool()
def tag_counts(tags: dict[str, int], weights: list[float] | None = None, limit: int = 3) -> str:
    """Counts per tag, heaviest first."""
    ranked = sorted(tags.items(), key=lambda kv: -kv[1])[:limit]
    return ", ".join(f"{k}={v}" for k, v in ranked)


@server.tool()
def fail(message: str) -> str:
    """Always reports `message` as an error."""
    raise ToolError(message)


@server.tool()
async def hang(seconds: float = 60.0) -> str:
    """Answers after `seconds`."""
    await asyncio.sleep(seconds)
    return "finally"


@server.tool()
def crash() -> str:
    """Kills the server in the middle of the call."""
    sys.stderr.write("shop: crashing on purpose\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool(name="slow-echo")
def slow_echo(text: str, delay: float = 0.0) -> str:
    """Echoes `text` after `delay` seconds (a tool whose name is not a Python identifier)."""
    time.sleep(delay)
    return text


def serve_http() -> None:
    """Streamable HTTP on 127.0.0.1, on a port the OS picks (printed as "PORT n")."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections wait in the backlog from now on, not refused until uvicorn
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning")
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


if __name__ == "__main__":
    if "--http" in sys.argv:
        serve_http()
    else:
        server.run()
