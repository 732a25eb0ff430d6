"""The files a run writes in its workspace, found by comparing the folder before and after.

The sandbox owns the workspace and may still be changing it (a thread that outlives its run),
so the host reads it only through `sandbox.folders.beneath`: links are neither listed nor followed,
only regular files are opened, never blocking, and reads are capped. The walk and the reads
run off the event loop, so a hostile workspace cannot freeze the app.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator
from pathlib import Path

from tui_agent.events import Event, ExecutionFinished, WrittenFile
from tui_agent.sandbox.folders.beneath import NotBeneath, opened_file, read_beneath, regular_files

MAX_ENTRIES = 5000
"""Entries looked at per walk: a huge workspace is listed in part rather than slowly."""
MAX_DEPTH = 8
MAX_FILES = 50
"""Written files recorded per run (the newest first)."""
HASHED_BYTES = 64 * 1024 * 1024
"""Files larger than this are listed without a checksum."""
CHUNK = 1 << 20

Listing = dict[str, tuple[int, int]]
"""Relative path -> (size, modification time in ns) of each regular file."""

WorkspaceError = NotBeneath
"""A workspace path that may not be read from the host (outside it, through a link, or not
a regular file)."""


def list_files(root: Path) -> Listing:
    """The regular files under `root` (symlinks neither listed nor followed)."""
    found = regular_files(root, max_entries=MAX_ENTRIES, max_depth=MAX_DEPTH)
    return {path: (entry.size, entry.mtime_ns) for path, entry in found.items()}


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
                digest = _sha256(root, path)
            except OSError:
                continue  # gone, or a link, a FIFO ... by now
        files.append(WrittenFile(path=path, size=size, sha256=digest))
    return files


def _sha256(root: Path, path: str) -> str:
    """The checksum of at most HASHED_BYTES of `path` (a file grown since is cut there)."""
    digest = hashlib.sha256()
    with opened_file(root, path) as (file, _):
        left = HASHED_BYTES
        while left > 0 and (chunk := file.read(min(CHUNK, left))):
            digest.update(chunk)
            left -= len(chunk)
    return digest.hexdigest()


def read_workspace_file(root: Path, path: str, limit: int | None = None) -> bytes:
    """The bytes of `path` (relative to the workspace `root`), at most `limit` of them
    (HASHED_BYTES without one).

    Refused (WorkspaceError) when the path leaves the workspace, goes through a symlink or is
    not a regular file.
    """
    return read_beneath(root, path, HASHED_BYTES if limit is None else limit)


def workspace_of(sandbox: object) -> Path | None:
    """The host folder a sandbox mounts at /workspace (None for one that has none)."""
    workspace = getattr(sandbox, "workspace", None)
    return workspace if isinstance(workspace, Path) else None


async def with_written_files(
    events: AsyncIterator[Event], root: Path | None
) -> AsyncIterator[Event]:
    """`events` of one run, its ExecutionFinished carrying the files it wrote under `root`
    (the sandbox's workspace; None: a sandbox without one, nothing is listed)."""
    before = await asyncio.to_thread(list_files, root) if root is not None else {}
    async for event in events:
        if root is not None and isinstance(event, ExecutionFinished):
            files = await asyncio.to_thread(written_since, root, before)
            if files:
                event = event.model_copy(update={"files": files, "workspace": str(root)})
        yield event
