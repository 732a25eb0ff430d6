"""The files the host writes for a sandbox (tool code programs, generated packages): kept in a
host folder the sandbox can read and never write, outside its workspace.

The sandbox owns its workspace and can turn any folder there into a link to a host folder,
so the host writes nothing there. Each workspace has a hosted folder in the user data dir
(`<data>/hosted/<key of the workspace>`), owned by the host user and mounted read-only at
HOSTED_PATH by docker and bubblewrap (the local backend, not isolated, reads it where it is).
Each session writes in a fresh folder of its own inside it (`HostedFolder.session`), removed
when the session ends. The mount depends only on the workspace, so sandboxes on the same
workspace keep sharing warm containers.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from tui_agent.sandbox.base import SandboxError
from tui_agent.sandbox.folders.workspaces import data_dir

HOSTED_PATH = "/toolcode"
"""Where docker and bubblewrap mount the hosted folder, read-only."""
FOLDER_MODE = 0o755
"""Readable by the sandbox user (nobody, when the host runs as root), writable by the host."""


def hosted_root(workspace: Path) -> Path:
    """The hosted folder of `workspace` (an absolute path), created if missing."""
    key = hashlib.sha256(os.fsencode(workspace)).hexdigest()[:16]
    path = data_dir() / "hosted" / key
    try:
        path.mkdir(parents=True, exist_ok=True)
        os.chmod(path, FOLDER_MODE)
    except OSError as exc:
        raise SandboxError(f"cannot make the folder {path}: {exc.strerror or exc}") from exc
    return path


@dataclass(frozen=True)
class HostedFolder:
    """A folder the host writes and a sandbox reads: `host` on the host, `inside` where the
    sandbox's code sees it."""

    host: Path
    inside: str

    def seen(self, path: Path) -> str:
        """Where the sandbox sees `path` (inside `host`)."""
        return str(PurePosixPath(self.inside, path.relative_to(self.host)))

    def session(self) -> HostedFolder:
        """A fresh, empty folder in this one for one session (remove it with `remove`)."""
        name = f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(4)}"
        path = self.host / name
        try:
            path.mkdir(mode=FOLDER_MODE)
            os.chmod(path, FOLDER_MODE)
        except OSError as exc:
            raise SandboxError(f"cannot make the folder {path}: {exc.strerror or exc}") from exc
        return HostedFolder(path, self.seen(path))

    def remove(self) -> None:
        """Delete the folder and what the host wrote in it."""
        shutil.rmtree(self.host, ignore_errors=True)


def hosted_folder(workspace: Path, inside: str | None = HOSTED_PATH) -> HostedFolder:
    """The hosted folder of `workspace`, seen at `inside` (None: at its own host path, for a
    sandbox that sees the host's files)."""
    root = hosted_root(workspace)
    return HostedFolder(root, inside or str(root))


def hosted_of(sandbox: object) -> HostedFolder:
    """The hosted folder of `sandbox`: the one it mounts, or for a backend that mounts none
    and sees the host's files (local, not isolated), its workspace's at its host path."""
    hosted = getattr(sandbox, "hosted", None)
    if isinstance(hosted, HostedFolder):
        return hosted
    workspace = getattr(sandbox, "workspace", None)
    if getattr(sandbox, "isolated", True) or not isinstance(workspace, Path):
        name = getattr(sandbox, "name", type(sandbox).__name__)
        raise SandboxError(f"the {name} sandbox has no folder for the host's files")
    return hosted_folder(workspace, inside=None)
