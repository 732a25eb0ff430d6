"""The workspace folder seen from the host: whom the sandbox runs as there, and keeping what the
sandbox planted in it (links to host files) from ever being followed by host-side code."""

from __future__ import annotations

import os
from pathlib import Path

from tui_agent.sandbox.base import SandboxError

NOBODY = 65534


def sandbox_owner(workspace: Path) -> tuple[int, int]:
    """(uid, gid) the sandbox runs as on the host (never root), chosen so it can write there.

    Not root here: our own ids. As root: the workspace's owner when that is not root; a
    root-owned workspace is handed to nobody (65534) when it is empty, else refused.
    """
    if os.geteuid() != 0:
        return os.getuid(), os.getgid()
    info = workspace.lstat()
    if info.st_uid != 0:
        return info.st_uid, info.st_gid
    if not any(workspace.iterdir()):
        os.chown(workspace, NOBODY, NOBODY, follow_symlinks=False)
        return NOBODY, NOBODY
    raise SandboxError(
        f"workspace {workspace} belongs to root and is not empty: use an empty folder, or "
        f"`chown {NOBODY}:{NOBODY} {workspace}` so the sandbox user can write it"
    )


def contained(root: Path, path: Path) -> Path:
    """`path` (relative to `root`) with every link resolved, when it stays inside `root`;
    else SandboxError. Nothing the links point to is opened."""
    try:
        resolved = Path(root, path).resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: a loop of links (Python 3.11)
        raise SandboxError(f"{path} in the workspace {root} cannot be resolved: {exc}") from exc
    if not resolved.is_relative_to(root.resolve()):
        raise SandboxError(f"{path} leads out of the workspace {root} (to {resolved}); refused")
    return resolved


def drop_escaping_links(root: Path) -> None:
    """Delete every symlink under `root` that leads out of it.

    Links are resolved without opening anything they point to, and no directory link is
    descended into, so nothing outside `root` is read or changed.
    """
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder, name)
            if not path.is_symlink():
                continue
            try:
                contained(root, path)
            except SandboxError:
                path.unlink()
