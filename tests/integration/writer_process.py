"""Driving store_writer.py in a real child process from async tests."""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

WRITER = Path(__file__).with_name("store_writer.py")
DEADLINE = 120.0  # seconds; only guards against a hung writer, never asserted as a speed


async def start_writer(
    db: Path, session_id: str, stop: Path, mode: str = "stream", wrap: Sequence[str] = ()
) -> asyncio.subprocess.Process:
    """store_writer.py in `mode`, run under the command `wrap` if given (e.g. bwrap ...)."""
    return await asyncio.create_subprocess_exec(
        *wrap,
        sys.executable,
        str(WRITER),
        str(db),
        session_id,
        str(stop),
        mode,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def read_line(proc: asyncio.subprocess.Process) -> str:
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), DEADLINE)
    if not line:
        assert proc.stderr is not None
        raise AssertionError(f"writer exited early: {(await proc.stderr.read()).decode()}")
    return line.decode().strip()


async def read_until(proc: asyncio.subprocess.Process, wanted: str) -> list[str]:
    """The lines the writer prints before `wanted` (which is read too)."""
    lines = []
    while (line := await read_line(proc)) != wanted:
        lines.append(line)
    return lines


async def go_on(proc: asyncio.subprocess.Process) -> str:
    """Let a holding writer finish; its last line of output."""
    out, err = await asyncio.wait_for(proc.communicate(b"go on\n"), DEADLINE)
    assert proc.returncode == 0, err.decode()
    return out.decode().split()[-1] if out.split() else ""


async def kill(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL, then reap: afterwards no process has its pid and start time."""
    proc.send_signal(signal.SIGKILL)
    await asyncio.wait_for(proc.communicate(), DEADLINE)
    assert proc.returncode == -signal.SIGKILL
