"""Resource limits of a sandbox: rlimits the kernel sets on itself, a pids cgroup, and the
workspace quota (quota.py).

The kernel applies `Limits.kernel_config()` to itself before it reads its first request, so
every process the user's code starts inherits them (no `preexec_fn`, which is unsafe in a host
process with threads). `RLIMIT_NPROC` does not bind processes whose real uid is host root, so
the number of processes is also capped by a pids cgroup (`PidsCgroup`) wherever one can be
made; it also lets the host kill everything a sandbox started in one sweep.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

CGROUP_ROOT = Path("/sys/fs/cgroup")
CGROUP_PREFIX = "tui-agent-"
_serial = itertools.count()
ADDRESS_SPACE_ENV = {"MALLOC_ARENA_MAX": "2", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
"""Environment that keeps a process's reserved (not used) memory small, so that RLIMIT_AS
bounds what it really uses instead of failing on per-thread arenas and BLAS buffers."""


class Limits(BaseModel):
    """Per-sandbox resource caps (rlimits; `processes` also through a pids cgroup)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    memory_mb: int = Field(default=1024, gt=0)
    """Address space of each sandbox process (RLIMIT_AS)."""
    processes: int = Field(default=128, gt=0)
    """Processes and threads the sandbox may have at once."""
    file_size_mb: int = Field(default=256, gt=0)
    """Largest file a run may write (RLIMIT_FSIZE)."""
    cpu_seconds: int = Field(default=60, gt=0)
    """CPU time of one run (RLIMIT_CPU, re-armed by the kernel before each run)."""
    open_files: int = Field(default=256, gt=16)
    """Open file descriptors per process (RLIMIT_NOFILE)."""
    tmp_size_mb: int = Field(default=256, gt=0)
    """Size of the sandbox's private /tmp, where the backend gives it one (bubblewrap)."""
    workspace_quota_mb: int = Field(default=1024, ge=0)
    """Size cap of the workspace, all files together (docker and bubblewrap, where quota.py can
    make one); 0: no cap."""

    def kernel_config(self) -> dict[str, Any]:
        """The `limits` section of the kernel's start-up config."""
        return {
            "memory_mb": self.memory_mb,
            "processes": self.processes,
            "file_size_mb": self.file_size_mb,
            "cpu_seconds": self.cpu_seconds,
            "open_files": self.open_files,
        }


class PidsCgroup:
    """A pids cgroup holding one sandbox's processes: caps their number, kills them all."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls, max_pids: int) -> PidsCgroup | None:
        """A new cgroup under this process's own, or None when no writable pids controller."""
        parent = _own_pids_cgroup()
        if parent is None:
            return None
        _remove_stale(parent)
        path = parent / f"{CGROUP_PREFIX}{os.getpid()}-{next(_serial)}"
        try:
            path.mkdir()
        except OSError:
            return None
        try:
            (path / "pids.max").write_text(str(max_pids))
        except OSError:
            path.rmdir()
            return None
        return cls(path)

    def add_tree(self, pid: int) -> None:
        """Move `pid` and all its descendants into the cgroup."""
        for member in [pid, *descendants(pid)]:
            with contextlib.suppress(OSError):
                (self.path / "cgroup.procs").write_text(str(member))

    def pids(self) -> list[int]:
        """The processes in the cgroup now."""
        try:
            return [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def kill_all(self) -> None:
        """SIGKILL every process in the cgroup, including ones forked while killing."""
        for _ in range(1000):
            members = self.pids()
            if not members:
                return
            for pid in members:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)

    def remove(self) -> None:
        """Kill what is left and delete the cgroup."""
        self.kill_all()
        with contextlib.suppress(OSError):
            self.path.rmdir()


def process_cap_note() -> str:
    """How the number of a local or bubblewrap sandbox's processes is capped on this host."""
    if _own_pids_cgroup() is not None:
        return "processes capped by a pids cgroup"
    if os.geteuid() == 0:
        return (
            "WARNING: processes are not capped (running as root, where RLIMIT_NPROC does not "
            "apply, and no writable pids cgroup)"
        )
    return "processes capped by RLIMIT_NPROC"


def descendants(pid: int) -> list[int]:
    """Every process below `pid` in the process tree (read from /proc)."""
    found: list[int] = []
    stack = [pid]
    while stack:
        current = stack.pop()
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{current}/task/{tid}/children") as handle:
                    children = [int(p) for p in handle.read().split()]
            except OSError:
                continue
            found.extend(children)
            stack.extend(children)
    return found


def _own_pids_cgroup() -> Path | None:
    """The pids cgroup directory of this process, if it has one we can write to."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, relative = line.split(":", 2)
        if "pids" in controllers.split(","):
            base = CGROUP_ROOT / "pids" / relative.lstrip("/")
            return base if os.access(base, os.W_OK) else None
    unified = next((rel for line in lines for _, c, rel in [line.split(":", 2)] if c == ""), None)
    if unified is None:
        return None
    base = CGROUP_ROOT / unified.lstrip("/")
    try:
        enabled = (base / "cgroup.subtree_control").read_text().split()
    except OSError:
        return None
    return base if "pids" in enabled and os.access(base, os.W_OK) else None


def _remove_stale(parent: Path) -> None:
    """Empty and delete the cgroups of tui-agent processes that are gone (e.g. after a crash)."""
    for path in parent.glob(f"{CGROUP_PREFIX}*"):
        owner = path.name.removeprefix(CGROUP_PREFIX).split("-", 1)[0]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            PidsCgroup(path).remove()
