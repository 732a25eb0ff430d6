"""Fixtures for the tool code tests: the shop MCP server (tests/toolcode/shop_server.py) over
stdio and over streamable HTTP on 127.0.0.1, its config files, and the sandbox backends."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.mcp_shop import SHOP, shop_stdio, write_config
from support.requirements import require_backend

from tui_agent.tools import McpConfig, load_mcp_config

START_TIMEOUT = 60.0


@pytest.fixture
def shop_config_path(tmp_path: Path) -> Path:
    """A config file with the shop server over stdio."""
    return write_config(tmp_path / "servers.json", {"shop": shop_stdio()})


@pytest.fixture
def shop_config(shop_config_path: Path) -> McpConfig:
    return load_mcp_config(shop_config_path)


@pytest.fixture(scope="module")
def shop_url() -> Iterator[str]:
    """The shop server over streamable HTTP on 127.0.0.1 (its own process, for the module)."""
    process = subprocess.Popen(
        [sys.executable, str(SHOP), "--http"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        began = time.monotonic()
        line = process.stdout.readline()
        assert line.startswith("PORT "), f"the HTTP shop did not start: {line!r}"
        assert time.monotonic() - began < START_TIMEOUT
        yield f"http://127.0.0.1:{int(line.split()[1])}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(params=[pytest.param("docker", marks=pytest.mark.docker), "bubblewrap"])
def isolated_backend(request: pytest.FixtureRequest) -> str:
    """Each isolated backend (skipped where it does not work; under CI, failed)."""
    require_backend(request.param)
    return request.param
