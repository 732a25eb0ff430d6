"""Generated wrappers called from programs in the docker and bubblewrap sandboxes: the program
has no network; each call goes over the kernel's channel, the host calls the MCP server, and
every call is a ToolCall / ToolResult nested under the program's step."""

import asyncio
import textwrap
from pathlib import Path

import pytest

from tui_agent.agents.toolcode.program import Program
from tui_agent.events import ExecutionFinished, ExecutionStarted, ToolCall, ToolResult
from tui_agent.sandbox.choose import open_sandbox
from tui_agent.sandbox.folders.hosted import hosted_of
from tui_agent.sandbox.wire import ExecuteRequest
from tui_agent.tools import Toolset

pytestmark = pytest.mark.usefixtures("isolated_backend")


@pytest.fixture
async def sandbox(isolated_backend, tmp_path):
    opened = open_sandbox(isolated_backend, workspace=tmp_path / "workspace")
    async with opened:
        yield opened


@pytest.fixture
def hosted(sandbox):
    """The session's folder of the host's files (packages, programs), read-only inside."""
    folder = hosted_of(sandbox).session()
    yield folder
    folder.remove()


@pytest.fixture
async def toolset(shop_config, tmp_path, hosted):
    tools = Toolset.prepare(shop_config, tmp_path / "workspace", call_timeout=2.0)
    await tools.connect()
    await tools.generate(hosted.host / "packages")
    try:
        yield tools
    finally:
        await tools.close()


async def run_program(sandbox, toolset, hosted, code, args=()):
    """The events of one program and the answer the model would get."""
    program = Program(
        sandbox,
        toolset.router(),
        hosted=hosted,
        packages=hosted.host / "packages",
        timeout=30,
    )
    started = asyncio.get_running_loop().create_future()
    started.set_result(None)
    events, answer = [], None
    async for item in program.run(7, textwrap.dedent(code), list(args), started):
        if isinstance(item, str):
            answer = item
        else:
            events.append(item)
    return events, answer


def calls(events):
    return [(e.name, e.arguments) for e in events if isinstance(e, ToolCall)]


async def test_a_program_chains_tool_calls_through_the_generated_packages(sandbox, toolset, hosted):
    code = """
        import json, sys
        import shop_tools
        from shop_tools import get_price, next_number

        value = int(sys.argv[1])
        for _ in range(10):
            value = int(next_number(value=value))
        print("chained:", value)
        for product in json.loads(shop_tools.list_products(category=sys.argv[2])):
            print(product["sku"], get_price(sku=product["sku"]))
        socket_free = True
        try:
            import urllib.parse  # allowed; the network itself is absent
        except ImportError:
            socket_free = False
        print("ok", socket_free)
    """
    events, answer = await run_program(sandbox, toolset, hosted, code, args=["5", "office"])
    [finished] = [e for e in events if isinstance(e, ExecutionFinished)]
    assert finished.success, finished.error
    assert [line.text for line in finished.logs] == [
        "chained: 15",
        "lamp 18.25 EUR",
        "chair 129.00 EUR",
        "ok True",
    ]
    made = calls(events)
    assert made[:10] == [("shop.next_number", {"value": v}) for v in range(5, 15)]
    assert made[10:] == [
        ("shop.list_products", {"category": "office"}),
        ("shop.get_price", {"sku": "lamp", "currency": "EUR"}),
        ("shop.get_price", {"sku": "chair", "currency": "EUR"}),
    ]
    nested = [e for e in events if isinstance(e, ToolCall)]
    assert {(e.step, e.run_step) for e in nested} == {(7, 7)}
    results = [e for e in events if isinstance(e, ToolResult)]
    assert len(results) == 13 and all(r.ok for r in results)
    assert answer.startswith("The program ran") and "chained: 15" in answer
    assert not list((hosted.host / "programs").iterdir()), "its folder is removed"


async def test_a_tool_error_is_text_the_program_can_check(sandbox, toolset, hosted):
    code = """
        from shop_tools import fail, get_price
        output = fail(message="out of stock")
        print("error seen:", output.startswith("Error:"), output)
        print(get_price(sku="kettle"))
    """
    events, _ = await run_program(sandbox, toolset, hosted, code)
    [finished] = [e for e in events if isinstance(e, ExecutionFinished)]
    assert finished.success
    first = finished.logs[0].text
    assert first.startswith("error seen: True Error: ") and "out of stock" in first
    assert finished.logs[1].text == "24.50 EUR"
    failed = [e for e in events if isinstance(e, ToolResult) and not e.ok]
    assert [e.name for e in failed] == ["shop.fail"]


async def test_a_server_that_dies_mid_call_raises_in_the_program(sandbox, toolset, hosted):
    code = """
        from shop_tools import crash, next_number, ToolCallFailed
        try:
            crash()
        except ToolCallFailed as exc:
            print("raised:", exc)
        next_number(value=1)
    """
    events, answer = await run_program(sandbox, toolset, hosted, code)
    [finished] = [e for e in events if isinstance(e, ExecutionFinished)]
    assert finished.logs[0].text.startswith(
        "raised: MCP server 'shop' is gone: it closed the connection during crash"
    )
    assert not finished.success and finished.error.type == "ToolCallFailed"
    assert "MCP server 'shop' is gone" in answer


async def test_a_tool_that_hangs_fails_the_call_after_the_call_timeout(sandbox, toolset, hosted):
    code = """
        from shop_tools import hang, next_number
        try:
            hang(seconds=30)
        except Exception as exc:
            print(type(exc).__name__, exc)
        print(next_number(value=1))
    """
    events, _ = await run_program(sandbox, toolset, hosted, code)
    [finished] = [e for e in events if isinstance(e, ExecutionFinished)]
    assert [line.text for line in finished.logs] == [
        "ToolCallFailed shop.hang did not answer within 2 s",
        "2",
    ]
    [hung] = [e for e in events if isinstance(e, ToolResult) and e.name == "shop.hang"]
    assert not hung.ok and hung.facts == {"raised": True}


async def test_a_link_planted_in_the_workspace_cannot_read_a_host_file(
    sandbox, toolset, hosted, tmp_path
):
    secret = tmp_path / "host-secret.txt"
    secret.write_text("host secret")
    planted = await sandbox.execute(
        ExecuteRequest(code=f"import os\nos.symlink({str(secret)!r}, 'leak.txt')", timeout=30)
    )
    assert planted.success, planted.error
    code = """
        import workspace_tools
        print(workspace_tools.read_workspace_file(filepath="leak.txt"))
        print(workspace_tools.update_workspace_file(filepath="leak.txt", content="owned"))
    """
    events, _ = await run_program(sandbox, toolset, hosted, code)
    [finished] = [e for e in events if isinstance(e, ExecutionFinished)]
    texts = [line.text for line in finished.logs]
    assert all(t.startswith("Error: path outside boundary: leak.txt leads outside") for t in texts)
    assert secret.read_text() == "host secret"


async def test_a_refused_program_never_runs(sandbox, toolset, hosted):
    marker = Path(toolset.guard.root, "ran.txt")
    code = """
        import subprocess
        import workspace_tools
        workspace_tools.update_workspace_file(filepath="ran.txt", content="it ran")
    """
    events, answer = await run_program(sandbox, toolset, hosted, code)
    assert not any(isinstance(e, ExecutionStarted | ToolCall) for e in events)
    [finished] = [e for e in events if isinstance(e, ExecutionFinished)]
    assert finished.error.type == "ProgramRefused"
    assert answer.startswith("Error: validation failed, the program was not run:")
    assert "forbidden import `subprocess`" in answer
    assert not marker.exists()
