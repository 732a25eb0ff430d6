"""Hostile code that tries to exhaust or break the sandbox: each attempt is stopped and reported,
and the sandbox runs code again afterwards."""

import errno
from pathlib import Path

from tui_agent.sandbox.limits import Limits

FILL = """
import os

def main(folder, file_mb):
    # Files of `file_mb` MiB (one file when file_mb is large) until the disk or a limit says no.
    written, paths = 0, []
    try:
        while True:
            paths.append(os.path.join(folder, f"fill-{len(paths)}"))
            with open(paths[-1], "wb") as handle:
                for _ in range(file_mb):
                    handle.write(b"x" * (1 << 20))
                    handle.flush()
                    written += 1
    except OSError as exc:
        return {"errno": exc.errno, "written_mb": written}
    finally:
        for path in paths:
            if os.path.exists(path):
                os.remove(path)
"""


async def test_a_fork_bomb_is_stopped(run, assert_usable):
    code = """
        import os
        while True:
            try:
                os.fork()
            except OSError:
                pass
    """
    result = await run(code, timeout=2)
    assert not result.success
    assert result.timed_out or result.error.type in ("BlockingIOError", "KernelDied")
    await assert_usable()


async def test_a_memory_bomb_is_stopped(run, assert_usable):
    code = """
        hoard = []
        while True:
            hoard.append(b"x" * (16 << 20))
    """
    result = await run(code, timeout=20)
    assert not result.success
    stopped_by = result.error.type if result.error else None
    assert stopped_by == "MemoryError" or "memory" in (result.killed_reason or ""), result
    await assert_usable()


async def test_filling_tmp_stops_at_its_size(run, assert_usable, limits: Limits):
    result = await run(FILL, args=["/tmp", 1], timeout=20)
    assert result.success, result.error
    assert result.result["errno"] == errno.ENOSPC
    assert result.result["written_mb"] <= limits.tmp_size_mb
    await assert_usable()


async def test_a_file_in_the_workspace_stops_at_the_file_size_limit(
    run, assert_usable, workspace: Path, limits: Limits
):
    # One file stops at RLIMIT_FSIZE, well before the workspace quota (test_workspace.py).
    result = await run(FILL, args=["/workspace", 1 << 20], timeout=20)
    assert result.success, result.error
    assert result.result["errno"] == errno.EFBIG
    assert result.result["written_mb"] <= limits.file_size_mb
    assert list(workspace.iterdir()) == []
    await assert_usable()


async def test_sleeping_forever_is_cut_off(run, assert_usable):
    result = await run("import time\ntime.sleep(10**9)", timeout=1)
    assert result.timed_out and result.killed_reason == "timeout" and result.state_lost
    await assert_usable()


async def test_killing_every_visible_process_restarts_the_sandbox(run, assert_usable):
    code = """
        import os, signal
        for pid in sorted(filter(str.isdigit, os.listdir("/proc")), key=int):
            if int(pid) != os.getpid():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except OSError:
                    pass
        os.kill(os.getpid(), signal.SIGKILL)
    """
    result = await run(code)
    assert not result.success and result.state_lost
    assert result.error.type == "KernelDied" and "signal 9" in result.killed_reason
    await assert_usable()
