"""The workspace tools, answered on the host behind folder guards.

A program calls `workspace_tools.read_workspace_file`, `update_workspace_file` and
`list_workspace`; the host does the work, so it must not be talked into touching anything but
the workspace. Every path is relative to the workspace: an absolute path or `..` is refused
outright. The rest is resolved, links included, and refused when it leads outside the folders
the tool may read or write (sandboxed code can plant a link to a host file in the workspace).
The file is then opened one folder at a time without following links, so a link swapped in
after the check is refused too. Errors come back as text starting with "Error:".
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path, PurePosixPath

from tui_agent.errors import UserError
from tui_agent.tools.results import as_error

READ_LIMIT = 1 << 20
LIST_LIMIT = 1000
HINT = "use a path relative to the workspace, e.g. data/file.txt"
OPEN_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class WorkspaceRootError(UserError):
    """A read or write root that is not a folder inside the workspace."""


class Refused(Exception):
    """A request a workspace tool turns down; the message is the tool's answer."""


def relative(path: object, what: str = "filepath") -> PurePosixPath:
    """`path` as a relative path with no `..`; Refused ("path outside boundary") otherwise."""
    if not isinstance(path, str) or not path.strip():
        raise Refused(f"Error: {what} must be a non-empty path; {HINT}")
    if "\0" in path:
        raise Refused(f"Error: {what} holds a NUL character")
    if path.startswith(("/", "~")):
        raise Refused(f"Error: path outside boundary: {path} is an absolute path; {HINT}")
    pure = PurePosixPath(path)
    if ".." in pure.parts:
        raise Refused(f"Error: path outside boundary: {path} goes up with `..`; {HINT}")
    return pure


class WorkspaceGuard:
    """The workspace tools for `workspace`, reading only inside `read_roots` and writing only
    inside `write_roots` (folders relative to the workspace; default: all of it)."""

    def __init__(
        self,
        workspace: Path,
        read_roots: Sequence[str] = (".",),
        write_roots: Sequence[str] = (".",),
    ) -> None:
        self.root = Path(workspace).resolve()
        self.read_roots = [self._root(r, "read") for r in read_roots or (".",)]
        self.write_roots = [self._root(r, "write") for r in write_roots or (".",)]

    def _root(self, folder: str, kind: str) -> Path:
        path = (self.root / folder).resolve()
        if not path.is_relative_to(self.root):
            raise WorkspaceRootError(
                f"the {kind} root {folder} is outside the workspace {self.root}"
            )
        return path

    def call(self, tool: str, arguments: dict[str, object]) -> str:
        """Run workspace tool `tool` with `arguments`; its answer as text."""
        try:
            if tool == "read_workspace_file":
                return self.read_workspace_file(arguments.get("filepath"))
            if tool == "update_workspace_file":
                return self.update_workspace_file(
                    arguments.get("filepath"), arguments.get("content")
                )
            if tool == "list_workspace":
                return self.list_workspace(arguments.get("path", "."))
        except Refused as refused:
            return str(refused)
        return as_error(
            f"no workspace tool {tool!r} (read_workspace_file, update_workspace_file, "
            "list_workspace)"
        )

    # -- the tools ---------------------------------------------------------------------------
    def read_workspace_file(self, filepath: object) -> str:
        path = self._inside(relative(filepath), self.read_roots, "read")
        with self._opened(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY) as fd:
            info = os.fstat(fd)
            if stat.S_ISDIR(info.st_mode):
                raise Refused(f"Error: {filepath} is a folder; list it with list_workspace")
            if not stat.S_ISREG(info.st_mode):
                raise Refused(f"Error: {filepath} is not a regular file")
            if info.st_size > READ_LIMIT:
                raise Refused(
                    f"Error: {filepath} is {info.st_size / 2**20:.1f} MiB; "
                    f"read_workspace_file reads at most {READ_LIMIT >> 20} MiB"
                )
            data = os.read(fd, READ_LIMIT + 1)[:READ_LIMIT]
        return data.decode("utf-8", errors="replace")

    def update_workspace_file(self, filepath: object, content: object) -> str:
        pure = relative(filepath)
        if not isinstance(content, str):
            raise Refused("Error: content must be text (a str)")
        path = self._inside(pure, self.write_roots, "write")
        flags = os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | os.O_NOCTTY
        with self._opened(path, flags, create=True) as fd:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise Refused(f"Error: {filepath} is not a regular file")
            os.ftruncate(fd, 0)
            view = memoryview(content.encode("utf-8"))
            while view:
                view = view[os.write(fd, view) :]
        return f"wrote {len(content):,} characters to {pure}"

    def list_workspace(self, path: object = ".") -> str:
        folder = self._inside(relative(path or ".", "path"), self.read_roots, "read")
        lines = []
        with self._opened(folder, None) as fd:
            with os.scandir(fd) as entries:
                found = sorted(entries, key=lambda e: e.name)
            for entry in found:
                if entry.is_symlink():
                    lines.append(f"{entry.name}@ (a link)")
                elif entry.is_dir(follow_symlinks=False):
                    lines.append(f"{entry.name}/")
                else:
                    size = entry.stat(follow_symlinks=False).st_size
                    lines.append(f"{entry.name} ({size:,} bytes)")
        if len(lines) > LIST_LIMIT:
            lines = [*lines[:LIST_LIMIT], f"... and {len(lines) - LIST_LIMIT:,} more"]
        return "\n".join(lines) if lines else "(empty folder)"

    # -- guards ------------------------------------------------------------------------------
    def _inside(self, pure: PurePosixPath, roots: list[Path], kind: str) -> Path:
        """The path with every link resolved, when it is inside one of `roots`."""
        try:
            resolved = (self.root / pure).resolve()
        except (OSError, RuntimeError):  # RuntimeError: a loop of links (Python 3.11)
            raise Refused(f"Error: {pure} cannot be resolved (a loop of links?)") from None
        if not any(resolved.is_relative_to(root) for root in roots):
            shown = ", ".join(str(r.relative_to(self.root)) for r in roots)
            how = "leads" if resolved != self.root / pure else "is"
            raise Refused(
                f"Error: path outside boundary: {pure} {how} outside the folders this tool "
                f"may {kind} ({shown}); {HINT}"
            )
        return resolved

    @contextlib.contextmanager
    def _opened(self, path: Path, flags: int | None, *, create: bool = False) -> Iterator[int]:
        """A descriptor of `path` (a resolved path inside the workspace), opened from the
        workspace down without following any link; `flags` None opens it as a folder. With
        `create`, missing folders and the file are made (owned like the workspace)."""
        parts = path.relative_to(self.root).parts
        folders, name = (parts[:-1], parts[-1]) if flags is not None and parts else (parts, "")
        shown = "/".join(parts) or "."
        fds = [os.open(self.root, OPEN_DIRECTORY)]
        try:
            for part in folders:
                if create:
                    self._make_folder(fds[-1], part)
                fds.append(_open(shown, part, OPEN_DIRECTORY, fds[-1]))
            if flags is None:
                yield fds[-1]
                return
            made = create and not _exists(name, fds[-1])
            fds.append(_open(shown, name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, fds[-1]))
            if made:
                self._own(fds[-1])
            yield fds[-1]
        finally:
            for fd in fds:
                os.close(fd)

    def _make_folder(self, parent: int, name: str) -> None:
        try:
            os.mkdir(name, 0o755, dir_fd=parent)
        except FileExistsError:
            return
        except OSError as exc:
            raise Refused(f"Error: cannot create the folder {name}: {exc.strerror}") from None
        fd = os.open(name, OPEN_DIRECTORY, dir_fd=parent)
        try:
            self._own(fd)
        finally:
            os.close(fd)

    def _own(self, fd: int) -> None:
        """As root, give what was just made to the workspace's owner (the sandbox user)."""
        if os.geteuid() == 0:
            info = os.stat(self.root)
            with contextlib.suppress(OSError):
                os.fchown(fd, info.st_uid, info.st_gid)


def _open(shown: str, name: str, flags: int, folder: int) -> int:
    """`name` in the open folder `folder`, never through a link; Refused says why not."""
    try:
        return os.open(name, flags, 0o644, dir_fd=folder)
    except FileNotFoundError:
        raise Refused(f"Error: {shown} does not exist in the workspace") from None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise Refused(
                f"Error: path outside boundary: {shown} goes through a link or a file"
            ) from None
        raise Refused(f"Error: {shown}: {exc.strerror or exc}") from None


def _exists(name: str, folder: int) -> bool:
    try:
        os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True
