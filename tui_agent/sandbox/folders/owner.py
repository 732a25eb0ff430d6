"""The workspace folder seen from the host: whom the sandbox runs as there."""

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
