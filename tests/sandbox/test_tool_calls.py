"""Tool calls from running code to the host, over the kernel's own channel, on every backend.

The code has no network: `tui_agent_bridge.call` sends the call out on the protocol channel,
the host's `on_call` answers it, and the call returns the output or raises ToolCallFailed.
"""

import asyncio
import textwrap
from typing import Any

from tui_agent.sandbox.base import Sandbox
from tui_agent.sandbox.wire import ExecuteRequest, ExecuteResult, ToolAnswer, ToolRequest


async def run(sandbox: Sandbox, code: str, **options: Any) -> ExecuteResult:
    request = ExecuteRequest(code=textwrap.dedent(code), timeout=options.pop("timeout", 30))
    return await sandbox.execute(request, **options)


class Host:
    """Answers each call with `tool:arguments`, noting the calls and what was printed before."""

    def __init__(self) -> None:
        self.seen: list[Any] = []

    def on_logs(self, lines: list) -> None:
        self.seen.extend(("printed", line.text) for line in lines)

    async def on_call(self, request: ToolRequest) -> ToolAnswer:
        self.seen.append(("call", request.tool, request.arguments))
        if request.tool == "gone":
            return ToolAnswer(failure="gone: the server closed the connection")
        if request.tool == "slow":
            await asyncio.sleep(60)
        if request.tool == "buggy":
            raise KeyError("no handler for this")
        return ToolAnswer(output=f"{request.tool}:{sorted(request.arguments.items())}")


async def test_calls_are_answered_in_order_after_what_was_printed(sandbox):
    host = Host()
    code = """
        import tui_agent_bridge

        print("first")
        outputs = [tui_agent_bridge.call("echo", {"n": n}) for n in range(3)]
        print("last")
        outputs
    """
    result = await run(sandbox, code, on_logs=host.on_logs, on_call=host.on_call)
    assert result.success, result.error
    assert result.result == ["echo:[('n', 0)]", "echo:[('n', 1)]", "echo:[('n', 2)]"]
    calls = [entry for entry in host.seen if entry[0] == "call"]
    assert calls == [("call", "echo", {"n": n}) for n in range(3)]
    assert host.seen[0] == ("printed", "first"), "printed lines go out before the call"
    assert [line.text for line in result.logs] == ["first", "last"]


async def test_a_failed_call_raises_in_the_code_and_a_handler_fault_does_too(sandbox):
    host = Host()
    code = """
        import tui_agent_bridge

        caught = []
        for tool in ("gone", "buggy"):
            try:
                tui_agent_bridge.call(tool, {})
            except tui_agent_bridge.ToolCallFailed as exc:
                caught.append(str(exc))
        caught
    """
    result = await run(sandbox, code, on_call=host.on_call)
    assert result.success, result.error
    gone, buggy = result.result
    assert gone == "gone: the server closed the connection"
    assert buggy.startswith("buggy: the host could not answer: KeyError")
    after = await run(
        sandbox, "import tui_agent_bridge; tui_agent_bridge.call('echo', {})", on_call=host.on_call
    )
    assert after.result == "echo:[]", "the channel is still in step"


async def test_without_a_handler_a_call_fails_with_a_clear_message(sandbox):
    result = await run(sandbox, "import tui_agent_bridge\ntui_agent_bridge.call('weather.now', {})")
    assert not result.success
    assert result.error.type == "ToolCallFailed"
    assert result.error.message == "weather.now: no tools are available to this run"


async def test_arguments_that_are_not_json_are_refused_in_the_code(sandbox):
    result = await run(
        sandbox, "import tui_agent_bridge\ntui_agent_bridge.call('x', {'when': object()})"
    )
    assert result.error.type == "TypeError"
    assert "must be JSON values" in result.error.message


async def test_a_thread_left_running_cannot_call_after_its_run(sandbox):
    host = Host()
    code = """
        import threading, time, tui_agent_bridge

        late = []

        def later():
            time.sleep(0.5)
            try:
                tui_agent_bridge.call("echo", {"late": True})
            except tui_agent_bridge.ToolCallFailed as exc:
                late.append(str(exc))

        threading.Thread(target=later).start()
    """
    result = await run(sandbox, code, on_call=host.on_call)
    assert result.success, result.error
    await asyncio.sleep(1.0)
    check = await run(sandbox, "late", on_call=host.on_call)
    assert check.result == ["tools can be called only from a running program's process"]
    assert not [entry for entry in host.seen if entry[0] == "call"]


async def test_a_forked_child_cannot_call(sandbox):
    code = """
        import os, tui_agent_bridge

        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                tui_agent_bridge.call("echo", {})
                os.write(write_end, b"called")
            except tui_agent_bridge.ToolCallFailed:
                os.write(write_end, b"refused")
            os._exit(0)
        os.waitpid(pid, 0)
        os.read(read_end, 100).decode()
    """
    host = Host()
    result = await run(sandbox, code, on_call=host.on_call)
    assert result.result == "refused"
    assert not host.seen


async def test_a_call_past_the_run_timeout_kills_the_run_and_the_sandbox_recovers(sandbox):
    host = Host()
    code = "import tui_agent_bridge\ntui_agent_bridge.call('slow', {})"
    result = await run(sandbox, code, on_call=host.on_call, timeout=1.5)
    assert result.timed_out and result.state_lost
    again = await run(
        sandbox, "import tui_agent_bridge\ntui_agent_bridge.call('echo', {})", on_call=host.on_call
    )
    assert again.result == "echo:[]"
