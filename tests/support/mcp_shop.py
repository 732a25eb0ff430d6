"""The shop MCP server of the tool code tests (tests/toolcode/shop_server.py) as config files."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

SHOP = Path(__file__).resolve().parents[1] / "toolcode" / "shop_server.py"


def shop_stdio() -> dict[str, Any]:
    """The shop's entry in a config: started with this Python, spoken to over stdio."""
    return {"command": sys.executable, "args": [str(SHOP)]}


def write_config(path: Path, servers: dict[str, dict[str, Any]]) -> Path:
    """An MCP config file at `path` holding `servers` under "mcpServers"."""
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path
