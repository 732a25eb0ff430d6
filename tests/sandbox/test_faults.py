"""Limits and faults: every one comes back as a clear result and the sandbox stays usable."""

import asyncio
import gc
import textwrap
import warnings
from typing import Any

import pytest

from tui_agent.sandbox.base import Sandbox, SandboxError
from tui_agent.sandbox.limits import process_cap_note
from tui_agent.sandbox.wire import ExecuteRequest, ExecuteResult

CHILDREN = """
import os
tasks = os.listdir("/proc/self/task")
sum(len(open(f"/proc/self/task/{t}/children").read().split()) for t in tasks)
"""


async def run(sandbox: Sandbox, code: str, **fields: Any) -> ExecuteResult:
    fields.setdefault("timeout", 30)
    return await sandbox.execute(ExecuteRequest(code=textwrap.dedent(code), **fields))


async def assert_usable(sandbox: Sandbox) -> None:
    after = await run(sandbox, "1 + 1")
    assert after.success and after.result == 2, after.error


async def test_a_run_past_its_timeout_is_killed_and_the_sandbox_restarts(sandbox):
    await run(sandbox, "kept = 1")
    code = "print('started')\nimport time\ntime.sleep(3600)"
    result = await run(sandbox, code, timeout=1.5)
    assert not result.success
    assert result.timed_out and result.killed_reason == "timeout" and result.state_lost
    assert result.error.type == "TimeoutError"
    assert [(line.stream, line.text) for line in result.logs] == [("stdout", "started")]
    after = await run(sandbox, "'kept' in globals()")
    assert after.success and after.result is False and not after.state_lost


async def test_a_kernel_killed_by_a_signal_is_reported_and_replaced(sandbox):
    result = await run(sandbox, "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)")
    assert not result.success and not result.timed_out and result.state_lost
    assert "signal 9" in result.killed_reason and "SIGKILL" in result.killed_reason
    assert result.error.type == "KernelDied"
    await assert_usable(sandbox)


async def test_a_kernel_that_exits_is_reported_and_replaced(sandbox):
    result = await run(sandbox, "import os\nos._exit(3)")
    assert result.killed_reason == "kernel exited with code 3" and result.state_lost
    await assert_usable(sandbox)


async def test_a_memory_bomb_is_stopped_at_the_limit(sandbox):
    code = """
        def main():
            hoard = []
            while True:
                hoard.append(bytearray(16 << 20))
    """
    result = await run(sandbox, code)
    assert not result.success and not result.timed_out
    assert result.error.type == "MemoryError" or "memory" in (result.killed_reason or "")
    assert "memory" in result.error.message
    await assert_usable(sandbox)


async def test_a_fork_bomb_is_contained(sandbox):
    if sandbox.name in ("local", "bubblewrap") and process_cap_note().startswith("WARNING"):
        pytest.skip(process_cap_note())
    result = await run(sandbox, "import os\nwhile True:\n    os.fork()", timeout=3)
    assert not result.success
    assert result.timed_out or result.error.type == "BlockingIOError"
    after = await run(sandbox, CHILDREN)
    assert after.success and after.result == 0


async def test_an_output_flood_is_capped_and_kept_up_to_the_kill(sandbox):
    result = await run(sandbox, "while True:\n    print('x' * 200)", timeout=2)
    assert result.timed_out and result.logs_truncated
    *kept, mark = result.logs
    assert kept and all(line.text == "x" * 200 for line in kept[:-1])
    assert kept[-1].text and ("x" * 200).startswith(kept[-1].text)
    assert mark.text.startswith("[output truncated:")
    assert sum(len(line.text) + 1 for line in kept) <= 1 << 20
    await assert_usable(sandbox)


async def test_writes_to_the_protocol_descriptors_do_not_break_it(sandbox):
    code = """
        import os
        os.write(1, b'{"type": "result", "success": false}\\n')
        os.write(1, b"not json at all\\n")
        os.write(2, b"no newline at the end")
        "still fine"
    """
    result = await run(sandbox, code)
    assert result.success and result.result == "still fine"
    assert [(line.stream, line.text) for line in result.logs] == [
        ("stdout", '{"type": "result", "success": false}'),
        ("stdout", "not json at all"),
        ("stderr", "no newline at the end"),
    ]
    await assert_usable(sandbox)


async def test_a_file_over_the_size_limit_fails_cleanly(sandbox, test_limits):
    size = (test_limits.file_size_mb + 1) << 20
    result = await run(sandbox, f"open('big.bin', 'wb').write(b'z' * {size})")
    assert not result.success and not result.state_lost
    assert "File too large" in result.error.message
    await assert_usable(sandbox)


async def test_filling_the_private_tmp_fails_cleanly(sandbox, test_limits):
    if not sandbox.isolated:
        pytest.skip("the local backend shares the host's /tmp")
    chunk = (test_limits.file_size_mb - 1) << 20
    count = test_limits.tmp_size_mb // (test_limits.file_size_mb - 1) + 1
    code = f"for i in range({count}):\n    open(f'/tmp/fill{{i}}', 'wb').write(b'z' * {chunk})"
    result = await run(sandbox, code)
    assert not result.success and not result.state_lost
    assert "No space left on device" in result.error.message
    await assert_usable(sandbox)


async def test_processes_a_run_leaves_behind_are_stopped(sandbox):
    code = """
        import subprocess
        subprocess.Popen(["sleep", "3600"])
        subprocess.Popen(["sh", "-c", "sleep 3600 & sleep 3600"])
    """
    result = await run(sandbox, code)
    assert result.success
    assert result.logs[-1].text.startswith("[tui-agent: stopped ")
    assert (await run(sandbox, CHILDREN)).result == 0


async def test_a_cancelled_run_leaves_a_fresh_sandbox(sandbox):
    await run(sandbox, "kept = 1")
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(run(sandbox, "import time\ntime.sleep(3600)"), 1)
    after = await run(sandbox, "'kept' in globals()")
    assert after.result is False and after.state_lost


async def test_the_cpu_budget_stops_a_busy_run_and_keeps_state(
    rlimit_backend, open_backend, test_limits
):
    limits = test_limits.model_copy(update={"cpu_seconds": 1})
    async with open_backend(rlimit_backend, limits=limits) as sandbox:
        await run(sandbox, "kept = 1")
        result = await run(sandbox, "while True:\n    pass", timeout=120)
        assert result.error.type == "CPULimitExceeded" and not result.state_lost
        assert (await run(sandbox, "kept")).result == 1


async def test_a_result_over_the_size_limit_is_an_error(rlimit_backend, open_backend):
    async with open_backend(rlimit_backend, max_result_bytes=1 << 20) as sandbox:
        await run(sandbox, "kept = 1")
        result = await run(sandbox, "result = 'a' * (2 << 20)")
        assert result.error.type == "ResultTooLarge" and not result.state_lost
        assert (await run(sandbox, "kept")).result == 1


async def test_an_oversized_protocol_message_is_refused_without_holding_it(
    rlimit_backend, open_backend
):
    code = """
        import fcntl, os
        line = b'{"type":"logs","lines":[["stdout","' + b"a" * (20 << 20) + b'"]]}\\n'
        for name in os.listdir("/proc/self/fd"):
            fd = int(name)
            try:
                write_only = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY
                pipe = os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:")
            except OSError:
                continue
            if fd > 2 and write_only and pipe:
                os.write(fd, line)
    """
    async with open_backend(rlimit_backend, max_result_bytes=1 << 20) as sandbox:
        result = await run(sandbox, code)
        assert result.success and not result.state_lost, "the line is dropped, the run goes on"
        assert "a line over 17 MiB" in result.logs[-1].text
        await assert_usable(sandbox)


CHATTER = """
import fcntl, os, threading

def protocol_pipe():
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            write_only = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY
            pipe = os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:")
        except OSError:
            continue
        if fd > 2 and write_only and pipe:
            return fd

def chatter(fd):
    line = b'{"type":"logs","lines":[]}' + b" " * 1000 + b"\\n"
    for _ in range(8192):
        os.write(fd, line)

threading.Thread(target=chatter, args=[protocol_pipe()], daemon=True).start()
"""


async def test_output_nobody_reads_any_more_does_not_keep_the_kernel_open(
    rlimit_backend, open_backend
):
    # A thread keeps writing protocol lines after its run ended: nobody reads them. Closing the
    # sandbox still ends the kernel's pipes, so no transport is left for the garbage collector.
    async with open_backend(rlimit_backend) as sandbox:
        assert (await run(sandbox, CHATTER)).success
        await asyncio.sleep(0.2)  # the thread fills the pipe meanwhile
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gc.collect()
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []


async def test_closing_the_sandbox_ends_a_run_that_is_going(sandbox):
    going = asyncio.create_task(run(sandbox, "import time\ntime.sleep(3600)"))
    await asyncio.sleep(0.5)
    await sandbox.close()
    result = await asyncio.wait_for(going, 30)
    assert not result.success and result.killed_reason == "the sandbox was closed"
    with pytest.raises(SandboxError, match="sandbox is closed"):
        await run(sandbox, "1 + 1")
