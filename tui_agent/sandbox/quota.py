"""A size cap on a workspace: a fixed-size ext4 image mounted over the host folder.

While a sandbox (or a warm container) of this process uses a workspace, an ext4 image of
`Limits.workspace_quota_mb` holding a copy of the folder (`mkfs.ext4 -d`) is loop-mounted in a
private state folder and bound over the workspace. Every backend bind-mounts the workspace and
the host reads it, so all see the same files; past the size, writes fail with ENOSPC inside the
sandbox, whatever process or file they come from, and the host disk is untouched. When the last
hold of this process is released (or the process exits), the bind is removed, the image's files
are copied back into the folder (copyback.py: by descriptors, so any depth and any name; links
that lead out of the workspace dropped), and the image is unmounted (its loop device is freed
with it) and deleted. The quota of an owner that died without releasing it is copied back the
same way by the next process that takes one.

A copy-back that leaves entries behind (the host disk full, say) still unmounts the image, but
keeps it and its record, marked: the next hold of any process copies it back again before
anything else, and a hold of that same workspace fails with one line until it can.

It needs root, a loop device and mkfs.ext4; elsewhere workspaces are not capped, and
`quota_status()` says so.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import fcntl
import itertools
import json
import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from tui_agent.sandbox.base import SandboxError
from tui_agent.sandbox.engine import owner_key
from tui_agent.sandbox.folders import copyback

TOOLS = ("mkfs.ext4", "mount", "umount")
INSTALL_HINT = "apt-get install e2fsprogs mount"
COMMAND_TIMEOUT = 300.0
BUSY_WAIT = 3.0
"""Seconds an unmount waits for a mount held for a moment (see `_unmount`)."""
LOST_AND_FOUND = "lost+found"
MKFS = ("mkfs.ext4", "-q", "-F", "-O", "^has_journal", "-m", "0")
"""An image that only lives while it is used needs no journal nor blocks kept for root."""
_lock = threading.Lock()
_mounts: dict[Path, _Mount] = {}
_serial = itertools.count()


def state_dir() -> Path:
    """Where the images, their mount points and their owners' records are kept (root only)."""
    return platformdirs.user_cache_path("tui-agent", appauthor=False) / "quota"


def quota_status() -> tuple[bool, str]:
    """(ok, reason): whether workspaces can be capped here."""
    if os.geteuid() != 0:
        return False, "workspaces are not size-capped (a loop-mounted image needs root)"
    missing = [tool for tool in TOOLS if not shutil.which(tool)]
    if missing:
        tools = ", ".join(missing)
        return False, f"workspaces are not size-capped ({tools} missing: {INSTALL_HINT})"
    if not Path("/dev/loop-control").exists():
        return False, "workspaces are not size-capped (no loop device: /dev/loop-control)"
    return True, "workspaces size-capped by a loop-mounted ext4 image"


@dataclass
class QuotaHold:
    """One user's hold on a capped workspace; the cap lasts until the last hold is released."""

    workspace: Path
    released: bool = False

    def release(self) -> None:
        """Let go (once); the last hold copies the files back and removes the image."""
        if self.released:
            return
        self.released = True
        with _locked():
            mount = _mounts.get(self.workspace)
            if mount is None:  # already removed at exit (release_all)
                return
            mount.holds -= 1
            if mount.holds == 0:
                del _mounts[self.workspace]
                mount.remove()


def hold(workspace: Path, size_mb: int, owner: tuple[int, int]) -> QuotaHold | None:
    """Cap `workspace` (absolute, existing) at `size_mb` MiB while the hold lasts.

    The first hold of this process mounts the image, owned by `owner` (uid, gid); later holds
    share it, whatever size they ask for. None when this hold caps nothing: `size_mb` is 0,
    quotas do not work here (`quota_status`), or another live process has capped this
    workspace already (its cap applies).
    Raises SandboxError (one line) when the workspace's files do not fit or mounting fails.
    """
    if not size_mb or not quota_status()[0]:
        return None
    with _locked():
        mount = _mounts.get(workspace)
        if mount is None:
            _recover_stale(workspace)
            if _live_holder(workspace):
                return None
            mount = _Mount.create(workspace, size_mb, owner)
            _mounts[workspace] = mount
        mount.holds += 1
    return QuotaHold(workspace)


@atexit.register
def release_all() -> None:
    """Copy back and remove every image this process still has mounted (at exit: sandboxes
    that were never closed); one that fails is left for the next process to recover."""
    with _locked():
        mounts = list(_mounts.values())
        _mounts.clear()
        for mount in mounts:
            with contextlib.suppress(SandboxError):
                mount.remove()


class SandboxQuota:
    """One sandbox's hold on its workspace's quota: taken at its first start, kept across its
    restarts, released when it closes.

    A start cancelled while the hold is being made (in a thread, which cannot be stopped) does
    not lose it: `release` waits for it and lets it go.
    """

    def __init__(self, workspace: Path, size_mb: int, owner: tuple[int, int]) -> None:
        self.workspace = workspace
        self.size_mb = size_mb
        self.owner = owner
        self._taking: asyncio.Future[QuotaHold | None] | None = None

    async def take(self) -> None:
        """Hold the quota, the first time only (SandboxError when it cannot be made)."""
        if self._taking is None:
            work = asyncio.to_thread(hold, self.workspace, self.size_mb, self.owner)
            self._taking = asyncio.ensure_future(work)
        await asyncio.shield(self._taking)

    async def release(self) -> None:
        """Let go of the hold, if one was taken (or is still being taken)."""
        taking, self._taking = self._taking, None
        if taking is None:
            return
        try:
            held = await taking
        except SandboxError:
            return
        if held is not None:
            await asyncio.to_thread(held.release)


@dataclass
class _Mount:
    """One workspace's image: `<name>.img` loop-mounted at `<name>.mnt`, bound over the folder,
    and `<name>.json` naming the folder and the owning process."""

    workspace: Path
    base: Path
    holds: int = 0

    @property
    def image(self) -> Path:
        return self.base.with_suffix(".img")

    @property
    def point(self) -> Path:
        return self.base.with_suffix(".mnt")

    @property
    def record(self) -> Path:
        return self.base.with_suffix(".json")

    @classmethod
    def create(cls, workspace: Path, size_mb: int, owner: tuple[int, int]) -> _Mount:
        used = _tree_bytes(workspace)
        if used > size_mb << 20:
            raise SandboxError(
                f"workspace {workspace} holds {used / 2**20:.0f} MiB, more than its quota of "
                f"{size_mb} MiB; free some space or raise TUI_AGENT_WORKSPACE_QUOTA_MB"
            )
        mount = cls(workspace, state_dir() / f"{os.getpid()}-{next(_serial)}")
        mount.record.write_text(json.dumps({"workspace": str(workspace), "owner": owner_key()}))
        try:
            with open(mount.image, "xb") as image:
                image.truncate(size_mb << 20)
            uid, gid = owner
            options = f"nodiscard,root_owner={uid}:{gid}"
            _run(*MKFS, "-E", options, "-d", str(workspace), str(mount.image))
            mount.point.mkdir(mode=0o700)
            _run("mount", "-o", "loop,nosuid,nodev", str(mount.image), str(mount.point))
            if not (workspace / LOST_AND_FOUND).exists():
                (mount.point / LOST_AND_FOUND).rmdir()
            _run("mount", "--bind", str(mount.point), str(workspace))
        except (OSError, SandboxError) as exc:
            mount.remove(copy_back=False)
            message = exc if isinstance(exc, SandboxError) else exc.strerror or exc
            raise SandboxError(f"cannot cap the workspace {workspace}: {message}") from exc
        return mount

    def remove(self, *, copy_back: bool = True) -> None:
        """Unbind, copy the files back into the folder, unmount, delete the image and record.

        When entries could not be copied back, the image is unmounted but kept, its record
        marked for the next hold to copy back again, and SandboxError (one line) says so; a
        copy-back that fails past the unbind marks the record the same way.
        """
        if _is_bound_from(self.workspace, self.point):
            _unmount(self.workspace)
        try:
            failures = copyback.copy_back(self.point, self.workspace) if copy_back else None
            if os.path.ismount(self.point):
                _unmount(self.point)
        except BaseException:
            if copy_back:
                self._mark_failed()
            raise
        if failures:
            self._mark_failed()
            entries = "1 entry" if failures.count == 1 else f"{failures.count:,} entries"
            raise SandboxError(
                f"{entries} of the workspace {self.workspace} could not be copied back (the "
                f"first: {failures.first}); they are kept in {self.image}, which the next start "
                "copies back again"
            )
        with contextlib.suppress(FileNotFoundError):
            self.image.unlink()
        with contextlib.suppress(FileNotFoundError):
            self.point.rmdir()
        self.record.unlink(missing_ok=True)

    def _mark_failed(self) -> None:
        """Leave the record for the next hold to recover, whoever owns it."""
        entry = {"workspace": str(self.workspace), "owner": owner_key(), "copy_back_failed": True}
        self.record.write_text(json.dumps(entry))

    def discard(self) -> None:
        """Unmount every mount of the image (binds moved elsewhere with their folder too),
        then delete it and its record, copying nothing back."""
        if os.path.ismount(self.point):
            for target in _mounts_of(self.point.stat().st_dev):
                if target != self.point:
                    _unmount(target)
        self.remove(copy_back=False)


def _mounts_of(device: int) -> list[Path]:
    """Where the file system of `device` is mounted, binds included (/proc/self/mountinfo)."""
    wanted = f"{os.major(device)}:{os.minor(device)}"
    targets = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        if len(fields) > 4 and fields[2] == wanted:
            # mountinfo escapes space, tab, newline and backslash as octal: \040 and so on
            target = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
            targets.append(Path(target))
    return targets


def _recover_stale(workspace: Path) -> None:
    """Copy back and remove the images of owners (in our pid namespace) that are gone, and
    those whose copy-back failed before.

    An image whose folder is gone (deleted, or moved away with the image still bound over it,
    as a test kernel's old temporary folders are) has nowhere to go back to: every mount of it
    is removed and nothing is copied. One that cannot be recovered now is left for a later
    hold: it never fails the hold being made for another workspace, but it does fail (one
    line) the hold of its own `workspace`, whose newer files it would otherwise overwrite.
    """
    for record in state_dir().glob("*.json"):
        entry = _read_record(record)
        if entry is None or not (entry.failed or _alive(entry.owner) is False):
            continue
        stale = _Mount(entry.workspace, record.with_suffix(""))
        try:
            if not stale.workspace.is_dir():
                stale.discard()
                continue
            if not os.path.ismount(stale.point) and stale.image.exists():
                _run("mount", "-o", "loop,nosuid,nodev", str(stale.image), str(stale.point))
            stale.remove(copy_back=os.path.ismount(stale.point))
        except (SandboxError, OSError) as exc:
            if stale.workspace == workspace:
                message = exc if isinstance(exc, SandboxError) else exc.strerror or exc
                raise SandboxError(
                    f"the workspace {workspace} still has files of an earlier session to copy "
                    f"back: {message}"
                ) from exc


def _live_holder(workspace: Path) -> bool:
    """Whether another live process has this workspace capped now."""
    for record in state_dir().glob("*.json"):
        entry = _read_record(record)
        if entry is None or entry.failed or entry.workspace != workspace:
            continue
        if _alive(entry.owner) is not False:
            return True
    return False


def _alive(owner: str) -> bool | None:
    """Whether the process `owner` (an engine.owner_key) runs; None when it is not in our pid
    namespace, where it cannot be told."""
    parts = owner.rsplit(":", 2)
    if len(parts) != 3 or parts[0] != (owner_key() or "").rsplit(":", 2)[0]:
        return None
    return parts[1].isdigit() and owner_key(int(parts[1])) == owner


@dataclass(frozen=True)
class _Record:
    """What a `<name>.json` says: whose image it is, for which folder, and whether its
    copy-back failed (then any hold recovers it)."""

    workspace: Path
    owner: str
    failed: bool


def _read_record(record: Path) -> _Record | None:
    try:
        data = json.loads(record.read_text())
        return _Record(
            Path(data["workspace"]), str(data["owner"]), data.get("copy_back_failed") is True
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _is_bound_from(workspace: Path, point: Path) -> bool:
    """Whether the folder at `workspace` is (our bind of) the image mounted at `point`."""
    try:
        return os.path.ismount(point) and workspace.stat().st_dev == point.stat().st_dev
    except OSError:
        return False


def _tree_bytes(folder: Path) -> int:
    """Disk space the files under `folder` take (links are not followed)."""
    total = 0
    for parent, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(parent, name)).st_blocks * 512
    return total


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    """This process's threads and other processes, one at a time on the quota state."""
    with _lock:
        folder = state_dir()
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        with open(folder / "lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield


def _unmount(target: Path) -> None:
    """Unmount `target`, waiting out a brief hold on it: another thread's child process between
    its fork and its exec still holds the parent's open files for a moment (a copy-back's, of
    this very mount). Still held after `BUSY_WAIT` seconds, it is detached lazily (gone from
    the tree now, released by the kernel once the last holder lets go)."""
    deadline = time.monotonic() + BUSY_WAIT
    while True:
        try:
            _run("umount", str(target))
            return
        except SandboxError as exc:
            if "busy" not in str(exc):
                raise
            if time.monotonic() >= deadline:
                _run("umount", "--lazy", str(target))
                return
        time.sleep(0.1)


def _run(*argv: str) -> None:
    """Run a command; SandboxError with its last line of output when it fails."""
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=COMMAND_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxError(f"{argv[0]} failed: {exc}") from exc
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        raise SandboxError(f"{argv[0]} failed: {lines[-1] if lines else done.returncode}")
