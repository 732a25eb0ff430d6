"""The workspace on the host: capped in size whatever writes it, copied back when the sandbox
closes without leaving a mount or a loop device, and links planted inside never followed."""

import asyncio
import errno
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tui_agent.sandbox.base import SandboxError
from tui_agent.sandbox.choose import BACKENDS
from tui_agent.sandbox.limits import Limits
from tui_agent.sandbox.quota import hold, state_dir
from tui_agent.sandbox.wire import ExecuteRequest

FILL_FROM_PROCESSES = """
import subprocess, sys

WRITER = '''
import sys
written = 0
try:
    for index in range(4):  # 16 MiB a writer: more than the quota (24 MiB) for three together
        with open(f"{sys.argv[1]}-{index}", "wb") as handle:
            for _ in range(4):
                handle.write(b"x" * (1 << 20))
                handle.flush()
                written += 1
except OSError as exc:
    print(exc.errno, written)
else:
    print(0, written)
'''

def main(writers):
    argv = [sys.executable, "-c", WRITER]
    started = [
        subprocess.Popen([*argv, f"/workspace/fill-{n}"], stdout=subprocess.PIPE, text=True)
        for n in range(writers)
    ]
    outcomes = [process.communicate()[0].split() for process in started]
    errnos = sorted({int(number) for number, _ in outcomes})
    return {"errnos": errnos, "written_mb": sum(int(mb) for _, mb in outcomes)}
"""

PLANT = """
import os

def main():
    os.symlink("/etc/shadow", "shadow")
    os.symlink("../beside.txt", "beside")
    os.symlink("/etc", "etc")
    os.symlink("loop", "loop")
    os.mkdir("data")
    with open("data/kept.txt", "w") as handle:
        handle.write("kept")
    os.symlink("data/kept.txt", "inside")
    return sorted(os.listdir("."))
"""


def own_images() -> set[Path]:
    """The quota images this test process has made and not removed (other tests' sandboxes
    this worker still holds among them: compare with what was there before)."""
    return set(state_dir().glob(f"{os.getpid()}-*.img"))


def loop_backing_files() -> set[str]:
    listed = subprocess.run(
        ["losetup", "--list", "--noheadings", "--output", "BACK-FILE"],
        capture_output=True,
        text=True,
        check=True,
    )
    return {line.strip() for line in listed.stdout.splitlines()}


def loops_released(images: set[Path], timeout: float = 20.0) -> bool:
    """Whether no loop device is backed by `images` any more, waiting up to `timeout`: the
    kernel frees an unmounted image's loop device once the last mount namespace that saw it
    is gone (a removed container's or an exited bwrap's, torn down just after)."""
    deadline = time.monotonic() + timeout
    while {str(image) for image in images} & loop_backing_files():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


async def test_the_quota_holds_across_files_and_processes(run, workspace, limits, quota_here):
    result = await run(FILL_FROM_PROCESSES, args=[3], timeout=60)
    assert result.success, result.error
    assert errno.ENOSPC in result.result["errnos"], result.result  # a writer may finish first
    assert 0 < result.result["written_mb"] <= limits.workspace_quota_mb, result.result
    # Meanwhile the workspace is a file system of its own, of the quota's size: not the host's.
    size = os.statvfs(workspace)
    assert size.f_blocks * size.f_frsize <= limits.workspace_quota_mb << 20
    assert workspace.stat().st_dev != workspace.parent.stat().st_dev


async def test_a_workspace_over_its_quota_is_one_clear_error(backend, workspace, quota_here):
    os.chown(workspace, 65534, 65534)  # the sandbox user's, as a workspace it wrote before is
    (workspace / "big.bin").write_bytes(b"x" * (2 << 20))
    limits = Limits(workspace_quota_mb=1)
    before = own_images()
    with pytest.raises(SandboxError, match=r"holds 2 MiB, more than its quota of 1 MiB") as caught:
        async with BACKENDS[backend](workspace=workspace, limits=limits):
            pass
    assert "\n" not in str(caught.value)
    assert (workspace / "big.bin").stat().st_size == 2 << 20
    assert own_images() <= before


async def test_closing_copies_the_files_back_and_leaves_no_mount(
    backend, workspace, limits, quota_here
):
    before = own_images()
    async with BACKENDS[backend](workspace=workspace, limits=limits) as box:
        written = await box.execute(ExecuteRequest(code="open('kept.txt', 'w').write('kept')"))
        assert written.success, written.error
        assert os.path.ismount(workspace)
        images = own_images() - before
        assert images and {str(image) for image in images} <= loop_backing_files()
    assert (workspace / "kept.txt").read_text() == "kept"
    assert not os.path.ismount(workspace)
    assert not own_images() & images
    assert loops_released(images)


async def test_links_planted_inside_are_never_followed_on_the_host(
    backend, workspace, tmp_path, limits, quota_here
):
    beside = tmp_path / "beside.txt"
    beside.write_text("host data")
    shadow = Path("/etc/shadow")
    shadow_before = shadow.stat() if shadow.exists() else None
    async with BACKENDS[backend](workspace=workspace, limits=limits) as box:
        planted = await box.execute(ExecuteRequest(code=PLANT))
        assert planted.result == ["beside", "data", "etc", "inside", "loop", "shadow"], planted
    # Copied back: what leads out of the workspace is dropped, the rest kept as it was.
    assert sorted(path.name for path in workspace.iterdir()) == ["data", "inside"]
    assert (workspace / "inside").is_symlink() and (workspace / "inside").read_text() == "kept"
    assert beside.read_text() == "host data"
    if shadow_before is not None:
        after = shadow.stat()
        assert (after.st_uid, after.st_mode, after.st_mtime_ns) == (
            shadow_before.st_uid,
            shadow_before.st_mode,
            shadow_before.st_mtime_ns,
        )


CRASHING_HOLDER = """
import os, sys
from pathlib import Path
from tui_agent.sandbox.quota import hold

hold(Path(sys.argv[1]), 8, (65534, 65534))
Path(sys.argv[1], "written.txt").write_text("before the crash")
os._exit(0)  # no release, no atexit
"""


def test_a_quota_left_by_a_crashed_process_is_copied_back_by_the_next(
    workspace, tmp_path, quota_here
):
    os.chown(workspace, 65534, 65534)
    subprocess.run([sys.executable, "-c", CRASHING_HOLDER, str(workspace)], check=True)
    assert os.path.ismount(workspace)
    other = tmp_path / "other"
    other.mkdir()
    mine = hold(other, 8, (65534, 65534))  # any first hold cleans up after the dead owner
    assert mine is not None
    mine.release()
    assert not os.path.ismount(workspace)
    assert (workspace / "written.txt").read_text() == "before the crash"


def test_a_dead_owners_quota_whose_folder_moved_away_blocks_no_one(tmp_path, quota_here):
    """A test runner renames its old temporary folders, binds and all: the next hold finds the
    dead owner's workspace gone, removes every mount of its image and goes on."""
    parent = tmp_path / "run-1"
    workspace = parent / "workspace"
    workspace.mkdir(parents=True)
    os.chown(workspace, 65534, 65534)
    subprocess.run([sys.executable, "-c", CRASHING_HOLDER, str(workspace)], check=True)
    [record] = [r for r in state_dir().glob("*.json") if str(workspace) in r.read_text()]
    image = record.with_suffix(".img")
    moved = parent.rename(tmp_path / "garbage-run-1") / "workspace"
    assert os.path.ismount(moved) and str(image) in loop_backing_files()
    other = tmp_path / "other"
    other.mkdir()
    mine = hold(other, 8, (65534, 65534))
    assert mine is not None
    mine.release()
    assert not os.path.ismount(moved)
    assert not record.exists() and not image.exists()
    assert loops_released({image})


async def test_a_start_cancelled_while_the_quota_is_made_leaves_no_mount(
    backend, workspace, tmp_path, limits, quota_here
):
    before = own_images()
    box = BACKENDS[backend](workspace=workspace, limits=limits)
    starting = asyncio.create_task(box.start())
    for _ in range(3):  # into the thread that makes the quota's image
        await asyncio.sleep(0)
    starting.cancel()
    await asyncio.gather(starting, return_exceptions=True)
    await box.close()
    other = tmp_path / "other"
    other.mkdir()
    mine = hold(other, 8, (65534, 65534))  # waits for a quota still being made, if any
    assert mine is not None
    mine.release()
    assert not os.path.ismount(workspace)
    assert own_images() <= before
