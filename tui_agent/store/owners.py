"""Session owners: which process records a session, and whether that process still runs.

A process is named by its host, the boot it runs in (`/proc/sys/kernel/random/boot_id`), its
pid namespace, its pid and its start time in clock ticks since boot (field 22 of
`/proc/<pid>/stat`). A pid reused by another process, in this boot or after a restart, never
passes for the owner: the start time or the boot differs. Where /proc is missing (not Linux)
nothing can be told, and no owner is ever judged gone.
"""

from __future__ import annotations

import functools
import os
import socket
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import Literal

Liveness = Literal["alive", "gone", "unknown"]

CLAIM = (
    "INSERT OR IGNORE INTO session_owners"
    " (session_id, host, boot_id, pid_ns, pid, start_ticks) VALUES (?, ?, ?, ?, ?, ?)"
)
"""Record a process as an owner of a session; parameters: session id, then `Owner.row()`."""
RELEASE = "DELETE FROM session_owners WHERE session_id = ?"
"""Forget every owner of a session (it has ended)."""
RUNNING_OWNERS = (
    "SELECT o.session_id, o.host, o.boot_id, o.pid_ns, o.pid, o.start_ticks"
    " FROM session_owners AS o JOIN sessions AS s ON s.id = o.session_id"
    " WHERE s.status IN ('running', 'waiting') ORDER BY o.session_id"
)
"""The owners of every session whose summary row says it has not ended (running, waiting)."""

_PROC = Path("/proc")


@dataclass(frozen=True)
class Owner:
    """A process on a host; empty `boot_id` / `pid_ns` and `start_ticks` -1: unknown."""

    host: str
    boot_id: str
    pid_ns: str
    pid: int
    start_ticks: int

    def row(self) -> tuple[str, str, str, int, int]:
        """The owner columns, in `CLAIM` order."""
        return astuple(self)

    def describe(self) -> str:
        return f"pid {self.pid} on {self.host}"


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def _pid_ns() -> str:
    try:
        return os.readlink(_PROC / "self" / "ns" / "pid")
    except OSError:
        return ""


def _start_ticks(pid: int) -> int | None:
    """The start time of process `pid` in clock ticks since boot; None when no such process
    runs (none, or a zombie). Raises PermissionError when /proc hides it from us."""
    if pid <= 0:
        return None
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except FileNotFoundError:
        try:
            os.kill(pid, 0)  # signal 0 delivers nothing: it only asks whether `pid` exists
        except ProcessLookupError:
            return None
        raise PermissionError(f"/proc/{pid} is hidden") from None
    # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after it.
    fields = stat[stat.rindex(")") + 2 :].split()
    if fields[0] in ("Z", "X"):  # dead, waiting to be reaped
        return None
    return int(fields[19])  # field 22 of the whole line


def this_process() -> Owner:
    """The process calling this (computed once per pid)."""
    return _identity(os.getpid())


@functools.cache
def _identity(pid: int) -> Owner:
    boot_id = _read(_PROC / "sys" / "kernel" / "random" / "boot_id")
    try:
        ticks = _start_ticks(pid) if boot_id else None
    except OSError:
        ticks = None
    if ticks is None:  # no /proc: this process cannot be told apart from a later one
        return Owner(socket.gethostname(), "", "", pid, -1)
    return Owner(socket.gethostname(), boot_id, _pid_ns(), pid, ticks)


def liveness(owner: Owner, here: Owner | None = None) -> Liveness:
    """Whether `owner` still runs, as seen from the process `here` (default: this one).

    "gone" only when sure: same host, and either another boot (the machine restarted since)
    or, in the same boot and pid namespace, no process with that pid and start time.
    Another host, another pid namespace or no /proc: "unknown".
    """
    here = here or this_process()
    if owner.host != here.host or not owner.boot_id or not here.boot_id:
        return "unknown"
    if owner.boot_id != here.boot_id:
        return "gone"
    if owner.pid_ns != here.pid_ns:
        return "unknown"
    try:
        ticks = _start_ticks(owner.pid)
    except OSError:
        return "unknown"
    return "alive" if ticks == owner.start_ticks else "gone"
