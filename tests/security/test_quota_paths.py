"""Copying a capped workspace back against what the sandbox can put in it: paths near and past
PATH_MAX, names at NAME_MAX, newlines, invalid UTF-8 and leading dashes all come back; a
copy-back that cannot finish is one line and leaves nothing mounted; and whatever a session
left behind, the next start recovers it."""

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from test_workspace import loops_released, own_images

from tui_agent.sandbox.base import SandboxError
from tui_agent.sandbox.choose import BACKENDS
from tui_agent.sandbox.quota import hold, state_dir
from tui_agent.sandbox.wire import ExecuteRequest

ODD_NAMES = [b"new\nline", b"bad\xff\xfe", b"-rf", b"--delete", b"-", b" lead space", b"back\\sl"]
NEAR, BEYOND = ("a" * 200, 4000), ("b" * 250, 8200)
"""Folder chains (name, bytes of relative path): one just under PATH_MAX, one far past it."""

WRITE_TREE = f"""
import os

def chain(name, length, text):
    top = os.open(".", os.O_RDONLY)
    depth = 0
    while (depth + 1) * (len(name) + 1) <= length:
        os.mkdir(name)
        os.chdir(name)
        depth += 1
    with open("leaf", "w") as handle:
        handle.write(text)
    os.fchdir(top)
    os.close(top)
    return depth

def main():
    depths = [chain(*{NEAR!r}, "near"), chain(*{BEYOND!r}, "beyond")]
    os.mkdir("n" * 255)
    with open(os.path.join("n" * 255, "m" * 255), "w") as handle:
        handle.write("NAME_MAX")
    for name in {ODD_NAMES!r}:
        with open(name, "wb") as handle:
            handle.write(name)
    os.link(b"-rf", b"hard")
    with open("sparse", "wb") as handle:
        handle.truncate(7 << 20)
    return depths
"""


def read_below(root: Path, names: list[str]) -> bytes:
    """The file at `names` below `root`, opened folder by folder (past PATH_MAX too)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name in names[:-1]:
            below = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = below
        leaf = os.open(names[-1], os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd)
    finally:
        os.close(fd)
    with os.fdopen(leaf, "rb") as handle:
        return handle.read()


def mounted_paths() -> set[str]:
    return {line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()}


def assert_nothing_left_mounted(workspace: Path, images: set[Path]) -> None:
    assert not os.path.ismount(workspace)
    assert not {str(image.with_suffix(".mnt")) for image in images} & mounted_paths()
    assert loops_released(images)


def assert_tree_came_back(workspace: Path, depths: list[int]) -> None:
    for (name, _), depth, text in zip((NEAR, BEYOND), depths, ("near", "beyond"), strict=True):
        assert read_below(workspace, [name] * depth + ["leaf"]) == text.encode()
    assert read_below(workspace, ["n" * 255, "m" * 255]) == b"NAME_MAX"
    for name in ODD_NAMES:
        assert read_below(workspace, [os.fsdecode(name)]) == name


async def test_long_paths_and_odd_names_copy_back_and_leave_no_mount(
    backend, workspace, limits, quota_here
):
    before = own_images()
    async with BACKENDS[backend](workspace=workspace, limits=limits) as box:
        written = await box.execute(ExecuteRequest(code=WRITE_TREE, timeout=60))
        assert written.success, written.error
        images = own_images() - before
    depths = written.result
    assert depths[1] * 251 > 8000 > 4096, "the second chain is deeper than PATH_MAX"
    assert_tree_came_back(workspace, depths)
    assert (workspace / "hard").stat().st_ino == (workspace / "-rf").stat().st_ino
    assert (workspace / "sparse").stat().st_size == 7 << 20
    assert (workspace / "sparse").stat().st_blocks * 512 < 1 << 20, "holes stay holes"
    assert_nothing_left_mounted(workspace, images)
    assert not own_images() & images


@contextmanager
def read_only_folder(folder: Path) -> Iterator[None]:
    """`folder` bound read-only over itself: the host cannot write there, not even as root."""
    folder.mkdir()
    os.chown(folder, 65534, 65534)
    subprocess.run(["mount", "--bind", folder, folder], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", folder, folder], check=True)
        yield
    finally:
        subprocess.run(["umount", folder], check=True)


WRITE_TWO = """
with open("kept.txt", "w") as handle:
    handle.write("kept")
with open("locked/new.txt", "w") as handle:
    handle.write("later")
"""


async def test_a_copy_back_that_cannot_finish_is_one_line_and_the_next_start_recovers(
    backend, workspace, tmp_path, limits, quota_here
):
    os.chown(workspace, 65534, 65534)
    before = own_images()
    with read_only_folder(workspace / "locked"):
        box = BACKENDS[backend](workspace=workspace, limits=limits)
        with pytest.raises(SandboxError, match="could not be copied back") as caught:
            async with box:
                written = await box.execute(ExecuteRequest(code=WRITE_TWO))
                assert written.success, written.error
                images = own_images() - before
        assert "\n" not in str(caught.value) and "locked/new.txt" in str(caught.value)
        assert_nothing_left_mounted(workspace, images)
        assert (workspace / "kept.txt").read_text() == "kept", "the rest was copied back"
        assert not (workspace / "locked" / "new.txt").exists()
        with pytest.raises(SandboxError, match="still has files of an earlier session"):
            hold(workspace, 8, (65534, 65534))  # its newer files would be overwritten later
        assert_nothing_left_mounted(workspace, images)
    other = tmp_path / "other"
    other.mkdir()
    mine = hold(other, 8, (65534, 65534))  # any next start copies the kept image back
    assert mine is not None
    mine.release()
    assert (workspace / "locked" / "new.txt").read_text() == "later"
    assert_nothing_left_mounted(workspace, images)
    assert not own_images() & images


CRASHING_HOLDER = f"""
import os, sys
from pathlib import Path
from tui_agent.sandbox.quota import hold

hold(Path(sys.argv[1]), 8, (65534, 65534))
os.chdir(sys.argv[1])
exec({WRITE_TREE!r})
print(main())
os._exit(0)  # no release, no atexit
"""


def test_a_stale_image_with_paths_past_path_max_is_recovered_by_the_next_start(
    workspace, tmp_path, quota_here
):
    os.chown(workspace, 65534, 65534)
    crashed = subprocess.run(
        [sys.executable, "-c", CRASHING_HOLDER, str(workspace)],
        check=True,
        capture_output=True,
        text=True,
    )
    depths = [int(part) for part in crashed.stdout.strip("[]\n").split(",")]
    assert os.path.ismount(workspace)
    [record] = [r for r in state_dir().glob("*.json") if str(workspace) in r.read_text()]
    image = record.with_suffix(".img")
    other = tmp_path / "other"
    other.mkdir()
    mine = hold(other, 8, (65534, 65534))
    assert mine is not None
    mine.release()
    assert_tree_came_back(workspace, depths)
    assert_nothing_left_mounted(workspace, {image})
    assert not record.exists() and not image.exists()
