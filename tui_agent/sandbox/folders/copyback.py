"""Copying a capped workspace's files back into its folder (quota.py), by descriptors.

The image's tree (the source) and the folder (the destination) are walked together one folder
at a time through open descriptors, never by path: a file 8,000 bytes of path deep cannot be
named, but each folder on the way can be opened from the one above, so trees of any depth and
names of any bytes (newlines, invalid UTF-8, leading dashes) copy back. Going back up is `..`
from the folder below, checked to be the folder come from, so only a few descriptors are open
at any depth.

Nothing is followed. Links are copied as links, except those that lead out of the workspace
(to `/etc/shadow`, `../x`, or a loop), which are dropped. The destination ends up holding what
the source holds: what the sandbox deleted is deleted, a file of unchanged size and time is not
rewritten, holes stay holes and hard links stay links (a file linked 60,000 times is written
once), owners, modes and times are kept, less set-user-ID and set-group-ID bits. Sockets, FIFOs
and devices are not copied. An entry that cannot be copied is counted, with the reason for the
first one, and the rest goes on.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
LINK_STEPS = 40
"""Links followed while resolving one link (as the kernel's ELOOP limit); past it, a loop."""
HELD_LINKS = 256
"""Hard-linked files kept open to link their other names to; past it, found again by path."""
SHOWN_PATH = 120


@dataclass
class Failures:
    """Entries that could not be copied back: how many, and the first with its reason."""

    count: int = 0
    first: str = ""

    def add(self, where: _Where | None, name: str, error: OSError | str) -> None:
        self.count += 1
        if not self.first:
            reason = error if isinstance(error, str) else error.strerror or str(error)
            self.first = f"{_shown(where, name)}: {reason}"

    def __bool__(self) -> bool:
        return self.count > 0


_Where = tuple["_Where | None", str]
"""A folder below the root: (the folder above it or None for the root, its name)."""


def copy_back(source: Path, destination: Path) -> Failures:
    """Make the folder `destination` hold what the folder `source` holds (see the module)."""
    failures = Failures()
    try:
        source_fd = os.open(source, DIR_FLAGS)
    except OSError as exc:
        failures.add(None, str(source), exc)
        return failures
    try:
        destination_fd = os.open(destination, DIR_FLAGS)
    except OSError as exc:
        os.close(source_fd)
        failures.add(None, str(destination), exc)
        return failures
    copier = _Copier(source_fd, destination_fd, failures)
    try:
        copier.run()
    except OSError as exc:  # the walk itself broke off: what is left is not copied
        failures.add(None, str(source), exc)
    finally:
        copier.close()
    return failures


@dataclass
class _Folder:
    """A folder being copied: where it is, its source status, what is left to descend into."""

    where: _Where | None
    depth: int
    info: os.stat_result
    destination_id: tuple[int, int]
    subfolders: list[str] = field(default_factory=list)


@dataclass
class _Linked:
    """The first copy of a hard-linked source file: open, or where it is."""

    fd: int | None
    where: _Where | None
    name: str
    left: int


class _Copier:
    def __init__(self, source_root: int, destination_root: int, failures: Failures) -> None:
        self.source_root = source_root
        self.destination_root = destination_root
        self.failures = failures
        self.linked: dict[tuple[int, int], _Linked] = {}

    def close(self) -> None:
        for entry in self.linked.values():
            if entry.fd is not None:
                os.close(entry.fd)
        os.close(self.source_root)
        os.close(self.destination_root)

    def run(self) -> None:
        source, destination = os.dup(self.source_root), os.dup(self.destination_root)
        try:
            stack: list[_Folder] = []
            folder = self._fill(source, destination, None, 0)
            while True:
                if folder.subfolders:
                    name = folder.subfolders.pop()
                    opened = self._open_pair(source, destination, folder.where, name)
                    if opened is None:
                        continue
                    stack.append(folder)
                    os.close(source)
                    os.close(destination)
                    source, destination = opened
                    folder = self._fill(source, destination, (folder.where, name), folder.depth + 1)
                    continue
                self._finish(destination, folder)
                if not stack:
                    return
                folder = stack.pop()
                source = _swap(source, _up(source, _identity(folder.info)))
                destination = _swap(destination, _up(destination, folder.destination_id))
        finally:
            os.close(source)
            os.close(destination)

    def _open_pair(
        self, source: int, destination: int, where: _Where | None, name: str
    ) -> tuple[int, int] | None:
        """The source folder `name` and its copy (made if missing), both open; None when
        either cannot be (counted as a failure)."""
        try:
            child = os.open(name, DIR_FLAGS, dir_fd=source)
        except OSError as exc:
            self.failures.add(where, name, exc)
            return None
        try:
            return child, _folder_in(destination, name)
        except OSError as exc:
            os.close(child)
            self.failures.add(where, name, exc)
            return None

    def _fill(self, source: int, destination: int, where: _Where | None, depth: int) -> _Folder:
        """Copy the files and links of one folder, delete what the source no longer has, and
        return the folder with the subfolders still to copy."""
        folder = _Folder(where, depth, os.fstat(source), _identity(os.fstat(destination)))
        kept: dict[str, os.stat_result] = {}
        try:
            names = os.listdir(source)
        except OSError as exc:
            self.failures.add(where, ".", exc)
            return folder
        for name in names:
            try:
                info = os.lstat(name, dir_fd=source)
            except OSError as exc:
                self.failures.add(where, name, exc)
                continue
            if stat.S_ISLNK(info.st_mode):
                if not self._escapes(source, depth, name):
                    kept[name] = info
            elif stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode):
                kept[name] = info
        self._delete_others(destination, where, kept)
        for name, info in kept.items():
            try:
                if stat.S_ISDIR(info.st_mode):
                    folder.subfolders.append(name)
                elif stat.S_ISREG(info.st_mode):
                    self._copy_file(source, destination, where, name, info)
                else:
                    _copy_link(source, destination, name, info)
            except OSError as exc:
                self.failures.add(where, name, exc)
        return folder

    def _delete_others(
        self, destination: int, where: _Where | None, kept: dict[str, os.stat_result]
    ) -> None:
        """Delete what the destination folder holds that the source does not (any more)."""
        try:
            names = os.listdir(destination)
        except OSError as exc:
            self.failures.add(where, ".", exc)
            return
        for name in names:
            if name in kept:
                continue
            try:
                _remove(destination, name)
            except OSError as exc:
                self.failures.add(where, name, exc)

    def _copy_file(
        self,
        source: int,
        destination: int,
        where: _Where | None,
        name: str,
        info: os.stat_result,
    ) -> None:
        key = _identity(info)
        first = self.linked.get(key)
        if first is not None:
            self._link(first, destination, name)
            first.left -= 1
            if first.left <= 0:
                del self.linked[key]
                if first.fd is not None:
                    os.close(first.fd)
            return
        try:
            current = os.lstat(name, dir_fd=destination)
        except FileNotFoundError:
            current = None
        if current is not None and stat.S_ISDIR(current.st_mode):
            _remove(destination, name)
            current = None
        unchanged = (
            current is not None
            and stat.S_ISREG(current.st_mode)
            and (current.st_size, current.st_mtime_ns) == (info.st_size, info.st_mtime_ns)
        )
        if unchanged:
            fd = os.open(name, FILE_FLAGS, dir_fd=destination)
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise OSError(errno.EINVAL, "not a regular file")
                _set_attributes(fd, info)
            finally:
                os.close(fd)
        else:
            _write_copy(source, destination, name, info)
        if info.st_nlink > 1:
            self._remember(key, destination, where, name, info.st_nlink - 1)

    def _remember(
        self, key: tuple[int, int], destination: int, where: _Where | None, name: str, left: int
    ) -> None:
        fd = None
        if len(self.linked) < HELD_LINKS:
            fd = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=destination)
        self.linked[key] = _Linked(fd, where, name, left)

    def _link(self, first: _Linked, destination: int, name: str) -> None:
        """Give the first copy of a hard-linked file the name `name` too."""
        with contextlib.suppress(FileNotFoundError):
            _remove(destination, name)
        if first.fd is not None:
            os.link(f"/proc/self/fd/{first.fd}", name, dst_dir_fd=destination)
            return
        folder = _open_below(self.destination_root, first.where)
        try:
            os.link(
                first.name,
                name,
                src_dir_fd=folder,
                dst_dir_fd=destination,
                follow_symlinks=False,
            )
        finally:
            os.close(folder)

    def _escapes(self, folder: int, depth: int, name: str) -> bool:
        """Whether the link `name` in the source folder `folder` (`depth` levels below the
        root) leads out of the root, or into a loop, resolved as the kernel would."""
        current, level, steps = os.dup(folder), depth, 0
        pending = [name]
        try:
            while pending:
                part = pending.pop()
                if part in ("", "."):
                    continue
                if part == "..":
                    if level == 0:
                        return True
                    current = _swap(current, os.open("..", DIR_FLAGS, dir_fd=current))
                    level -= 1
                    continue
                try:
                    info = os.lstat(part, dir_fd=current)
                except OSError:
                    info = None
                if info is not None and stat.S_ISLNK(info.st_mode):
                    steps += 1
                    target = os.readlink(part, dir_fd=current)
                    if steps > LINK_STEPS or target.startswith("/"):
                        return True
                    pending.extend(reversed(target.split("/")))
                elif info is not None and stat.S_ISDIR(info.st_mode):
                    current = _swap(current, os.open(part, DIR_FLAGS, dir_fd=current))
                    level += 1
                else:
                    return _leaves(pending, level + 1)
            return False
        except OSError:
            return True
        finally:
            os.close(current)

    def _finish(self, destination: int, folder: _Folder) -> None:
        """Give the copied folder its source's owner, mode and times (once its entries are)."""
        try:
            _set_attributes(destination, folder.info)
        except OSError as exc:
            self.failures.add(folder.where, ".", exc)


def _leaves(pending: list[str], level: int) -> bool:
    """Whether the rest of a path, past a name that does not exist (or is no folder), climbs
    out of the root: what is missing is resolved by its words alone."""
    for part in reversed(pending):
        if part == "..":
            level -= 1
            if level < 0:
                return True
        elif part not in ("", "."):
            level += 1
    return False


def _write_copy(source: int, destination: int, name: str, info: os.stat_result) -> None:
    """Copy the file `name` under a new name, then rename it over whatever `name` was."""
    temporary = f".tui-agent-copy-{secrets.token_hex(8)}"
    reader = os.open(name, FILE_FLAGS, dir_fd=source)
    try:
        mode = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        writer = os.open(temporary, mode, 0o600, dir_fd=destination)
        try:
            _copy_data(reader, writer, info.st_size)
            _set_attributes(writer, info)
        except OSError:
            os.close(writer)
            os.unlink(temporary, dir_fd=destination)
            raise
        os.close(writer)
    finally:
        os.close(reader)
    os.rename(temporary, name, src_dir_fd=destination, dst_dir_fd=destination)


def _copy_data(reader: int, writer: int, size: int) -> None:
    """Copy `size` bytes, the data only: holes stay holes."""
    offset = 0
    while offset < size:
        try:
            start = os.lseek(reader, offset, os.SEEK_DATA)
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # only a hole is left
                break
            raise
        end = min(os.lseek(reader, start, os.SEEK_HOLE), size)
        os.lseek(writer, start, os.SEEK_SET)
        while start < end:
            sent = os.sendfile(writer, reader, start, end - start)
            if sent == 0:  # the file got shorter
                break
            start += sent
        if start < end:
            break
        offset = end
    os.ftruncate(writer, size)


def _copy_link(source: int, destination: int, name: str, info: os.stat_result) -> None:
    target = os.readlink(name, dir_fd=source)
    try:
        current = os.lstat(name, dir_fd=destination)
    except FileNotFoundError:
        current = None
    same = current is not None and stat.S_ISLNK(current.st_mode)
    if not (same and os.readlink(name, dir_fd=destination) == target):
        if current is not None and stat.S_ISDIR(current.st_mode):
            _remove(destination, name)
        temporary = f".tui-agent-link-{secrets.token_hex(8)}"
        os.symlink(target, temporary, dir_fd=destination)
        os.rename(temporary, name, src_dir_fd=destination, dst_dir_fd=destination)
    os.chown(name, info.st_uid, info.st_gid, dir_fd=destination, follow_symlinks=False)
    times = (info.st_atime_ns, info.st_mtime_ns)
    os.utime(name, ns=times, dir_fd=destination, follow_symlinks=False)


def _set_attributes(fd: int, info: os.stat_result) -> None:
    mode = stat.S_IMODE(info.st_mode)
    if not stat.S_ISDIR(info.st_mode):
        mode &= ~(stat.S_ISUID | stat.S_ISGID)
    os.fchown(fd, info.st_uid, info.st_gid)
    os.fchmod(fd, mode)
    os.utime(fd, ns=(info.st_atime_ns, info.st_mtime_ns))


def _folder_in(parent: int, name: str) -> int:
    """The folder `name` in `parent`, open; made (in place of anything else there) if need be."""
    try:
        return os.open(name, DIR_FLAGS, dir_fd=parent)
    except FileNotFoundError:
        pass
    except OSError as exc:
        if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
            raise
        os.unlink(name, dir_fd=parent)
    os.mkdir(name, 0o700, dir_fd=parent)
    return os.open(name, DIR_FLAGS, dir_fd=parent)


def _remove(parent: int, name: str) -> None:
    """Delete `name` in `parent`: a file or link, or a folder with everything in it (any
    depth, nothing followed)."""
    info = os.lstat(name, dir_fd=parent)
    if not stat.S_ISDIR(info.st_mode):
        os.unlink(name, dir_fd=parent)
        return
    fd = os.open(name, DIR_FLAGS, dir_fd=parent)
    trail: list[tuple[str, tuple[int, int]]] = []
    try:
        while True:
            below = None
            with os.scandir(fd) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        below = entry.name
                        break
                    os.unlink(entry.name, dir_fd=fd)
            if below is not None:
                trail.append((below, _identity(os.fstat(fd))))
                fd = _swap(fd, os.open(below, DIR_FLAGS, dir_fd=fd))
                continue
            if not trail:
                break
            emptied, above = trail.pop()
            fd = _swap(fd, _up(fd, above))
            os.rmdir(emptied, dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=parent)


def _open_below(root: int, where: _Where | None) -> int:
    """The folder `where` below the open folder `root`, open."""
    names: list[str] = []
    while where is not None:
        where, name = where
        names.append(name)
    fd = os.dup(root)
    try:
        for name in reversed(names):
            fd = _swap(fd, os.open(name, DIR_FLAGS, dir_fd=fd))
    except OSError:
        os.close(fd)
        raise
    return fd


def _up(fd: int, expected: tuple[int, int]) -> int:
    """The folder above `fd`, open, checked to be the one `expected`."""
    parent = os.open("..", DIR_FLAGS, dir_fd=fd)
    if _identity(os.fstat(parent)) != expected:
        os.close(parent)
        raise OSError(errno.ESTALE, "a folder was moved while the workspace was copied back")
    return parent


def _swap(old: int, new: int) -> int:
    """`new`, once `old` is closed (a descriptor moved one folder along)."""
    os.close(old)
    return new


def _identity(info: os.stat_result) -> tuple[int, int]:
    return info.st_dev, info.st_ino


def _shown(where: _Where | None, name: str) -> str:
    """A path for a message: one line (odd characters escaped), long ones cut in the middle."""
    names = [name]
    while where is not None:
        where, above = where
        names.append(above)
    text = repr("/".join(reversed(names)))[1:-1]
    if len(text) <= SHOWN_PATH:
        return text
    half = SHOWN_PATH // 2 - 2
    return f"{text[:half]}...{text[-half:]}"
