"""Reading a sandbox's workspace from the host without following anything the sandbox planted.

The sandbox owns its workspace: any folder in it can become a link to a host folder, any file
a link, a FIFO or a socket, at any moment. So the host never opens a workspace path by name
from the top: it opens the workspace itself, then one component at a time relative to the
folder it holds open, never following a link (O_NOFOLLOW on every component, O_DIRECTORY on
folders). A file is opened non-blocking (a FIFO swapped in cannot stall the host) and used only
when fstat says it is a regular file; reads are capped. Every refusal is a `NotBeneath`.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO

OPEN_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class NotBeneath(OSError):
    """A path the host will not read in a workspace: outside it, through a link, or not a
    regular file."""


def parts_of(path: str) -> tuple[str, ...]:
    """`path` (relative to a workspace) as its components; NotBeneath when it is absolute,
    empty, goes up with `..` or holds a NUL."""
    if not path or "\0" in path or path.startswith("/"):
        raise NotBeneath(f"{path!r} is not a path relative to the workspace")
    parts = tuple(part for part in PurePosixPath(path).parts if part != ".")
    if not parts or ".." in parts:
        raise NotBeneath(f"{path!r} is not a path inside the workspace")
    return parts


@contextlib.contextmanager
def opened_folder(root: Path, parts: tuple[str, ...] = ()) -> Iterator[int]:
    """A descriptor of the folder `root/parts...`, reached without following a link."""
    fd = os.open(root, OPEN_FOLDER)
    try:
        for part in parts:
            child = _open_in(fd, part, OPEN_FOLDER, part)
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


@contextlib.contextmanager
def opened_file(root: Path, path: str) -> Iterator[tuple[BinaryIO, os.stat_result]]:
    """The regular file `path` beneath `root`, open for reading, with its fstat.

    NotBeneath when the path leaves `root`, goes through a link, or is not a regular file
    (a FIFO, a socket, a folder); FileNotFoundError when it is not there.
    """
    *folders, name = parts_of(path)
    with opened_folder(root, tuple(folders)) as folder:
        fd = _open_in(folder, name, OPEN_FILE, path)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotBeneath(f"{path} is not a regular file")
        file = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with file:
        yield file, info


def read_beneath(root: Path, path: str, limit: int) -> bytes:
    """At most `limit` bytes of the regular file `path` beneath `root` (see `opened_file`)."""
    with opened_file(root, path) as (file, _):
        return file.read(limit)


@dataclass(frozen=True)
class Entry:
    """A regular file found by `regular_files`: its size and modification time (ns)."""

    size: int
    mtime_ns: int


def regular_files(root: Path, *, max_entries: int, max_depth: int) -> dict[str, Entry]:
    """The regular files under `root` by relative path, links neither listed nor followed.

    At most `max_entries` entries are looked at and folders `max_depth` deep are not entered,
    so a workspace filled with files on purpose is listed in part, quickly. Each folder is
    reached from `root` one component at a time, so one swapped for a link is not entered.
    """
    found: dict[str, Entry] = {}
    budget = max_entries
    pending: list[tuple[str, ...]] = [()]
    while pending and budget > 0:
        parts = pending.pop()
        prefix = "".join(f"{part}/" for part in parts)
        try:
            with opened_folder(root, parts) as fd, os.scandir(fd) as listing:
                names = [entry.name for entry in itertools.islice(listing, budget)]
                budget -= len(names)
                for name in names:
                    try:
                        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
                    except OSError:
                        continue
                    if stat.S_ISREG(info.st_mode):
                        found[prefix + name] = Entry(info.st_size, info.st_mtime_ns)
                    elif stat.S_ISDIR(info.st_mode) and len(parts) < max_depth:
                        pending.append((*parts, name))
        except OSError:
            continue  # gone, or swapped for a link since it was listed
    return found


def _open_in(folder: int, name: str, flags: int, shown: str) -> int:
    """`name` in the open folder `folder`, never through a link (NotBeneath when it is one,
    or a socket)."""
    try:
        return os.open(name, flags, dir_fd=folder)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENXIO):
            raise NotBeneath(f"{shown} goes through a link or is not a file") from exc
        raise
