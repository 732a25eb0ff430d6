"""The files a run writes in its workspace, found by comparing the folder before and after.

Host-side code never follows what the sandbox planted there: the walk does not enter
symlinked folders nor list symlinks, and `read_workspace_file` refuses a path that resolves
outside the workspace or through a link (the file is opened with O_NOFOLLOW).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import AsyncIterator
from pathlib import Path

from tui_agent.events import Event, ExecutionFinished, WrittenFile

MAX_ENTRIES = 5000
"""Entries looked at per walk: a huge workspace is listed in part rather than slowly."""
MAX_DEPTH = 8
MAX_FILES = 50
"""Written files recorded per run (the newest first)."""
HASHED_BYTES = 64 * 1024 * 1024
"""Files larger than this are listed without a checksum."""

Listing = dict[str, tuple[int, int]]
"""Relative path -> (size, modification time in ns) of each regular file."""


class WorkspaceError(OSError):
    """A workspace path that may not be read from the host (outside it, or through a link)."""


def list_files(root: Path) -> Listing:
    """The regular files under `root` (symlinks neither listed nor followed)."""
    found: Listing = {}
    seen = 0
    pending: list[tuple[str, int]] = [("", 0)]
    while pending and seen < MAX_ENTRIES:
        folder, depth = pending.pop()
        try:
            entries = list(os.scandir(root / folder if folder else root))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            relative = f"{folder}/{entry.name}" if folder else entry.name
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode) and depth < MAX_DEPTH:
                pending.append((relative, depth + 1))
            elif stat.S_ISREG(info.st_mode):
                found[relative] = (info.st_size, info.st_mtime_ns)
    return found


def written_since(root: Path, before: Listing) -> list[WrittenFile]:
    """Files under `root` that are new or changed since `before`, newest first."""
    after = list_files(root)
    changed = [path for path, seen in after.items() if before.get(path) != seen]
    changed.sort(key=lambda path: after[path][1], reverse=True)
    files = []
    for path in changed[:MAX_FILES]:
        size = after[path][0]
        digest = ""
        if size <= HASHED_BYTES:
            try:
                digest = hashlib.sha256(read_workspace_file(root, path)).hexdigest()
            except OSError:
                continue  # gone, or a link by now
        files.append(WrittenFile(path=path, size=size, sha256=digest))
    return files


def read_workspace_file(root: Path, path: str, limit: int | None = None) -> bytes:
    """The bytes of `path` (relative to the workspace `root`), at most `limit` of them.

    Refused (WorkspaceError) when the path leaves the workspace or goes through a symlink.
    """
    base = Path(os.path.realpath(root))
    target = base / path
    if os.path.realpath(target) != str(target) or base not in target.parents:
        raise WorkspaceError(f"{path} is not a file inside the workspace")
    descriptor = os.open(target, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(descriptor, "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            raise WorkspaceError(f"{path} is not a regular file")
        return file.read() if limit is None else file.read(limit)


def workspace_of(sandbox: object) -> Path | None:
    """The host folder a sandbox mounts at /workspace (None for one that has none)."""
    workspace = getattr(sandbox, "workspace", None)
    return workspace if isinstance(workspace, Path) else None


async def with_written_files(
    events: AsyncIterator[Event], root: Path | None
) -> AsyncIterator[Event]:
    """`events` of one run, its ExecutionFinished carrying the files it wrote under `root`
    (the sandbox's workspace; None: a sandbox without one, nothing is listed)."""
    before = list_files(root) if root is not None else {}
    async for event in events:
        if root is not None and isinstance(event, ExecutionFinished):
            files = written_since(root, before)
            if files:
                event = event.model_copy(update={"files": files, "workspace": str(root)})
        yield event
