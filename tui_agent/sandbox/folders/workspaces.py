"""Which folder a session's sandbox gets as its workspace, and which recorded workspaces the
host may read back.

Each session gets a fresh, empty folder of its own under the user data dir
(`<data>/workspaces/<when>-<random>`), unless the user names one (`--workspace`, `workspace`
in config.toml), which sessions then share. A named workspace is remembered
(`<data>/named-workspaces`, one path a line) so that the files a session wrote there can be
previewed later; a recorded workspace that is neither one of ours nor remembered (an imported
session's, say) is never read.
"""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path

import platformdirs

from tui_agent.sandbox.base import SandboxError, ensure_workspace

APP = "tui-agent"


def data_dir() -> Path:
    """tui-agent's folder in the user data dir (e.g. ~/.local/share/tui-agent)."""
    return platformdirs.user_data_path(APP, appauthor=False)


def workspaces_root() -> Path:
    """Where the sessions' own workspaces are made."""
    return data_dir() / "workspaces"


def named_list() -> Path:
    """The file of the workspaces users named, one absolute path a line."""
    return data_dir() / "named-workspaces"


def fresh_workspace() -> Path:
    """A new, empty workspace for one session."""
    root = workspaces_root()
    path = root / f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(4)}"
    try:
        root.mkdir(parents=True, exist_ok=True)
        path.mkdir()
    except OSError as exc:
        raise SandboxError(f"cannot make a workspace in {root}: {exc.strerror or exc}") from exc
    return path


def session_workspace(named: Path | None) -> Path:
    """The workspace of a new session: `named` (created if missing, and remembered), else a
    fresh one of its own."""
    if named is None:
        return fresh_workspace()
    path = ensure_workspace(named)
    remember(path)
    return path


def remember(workspace: Path) -> None:
    """Note that the user named `workspace` (an absolute path), so its files can be read back."""
    line = os.fsdecode(workspace)
    if "\n" in line or line in _named():
        return
    listing = named_list()
    try:
        listing.parent.mkdir(parents=True, exist_ok=True)
        with listing.open("a", encoding="utf-8") as file:
            file.write(line + "\n")
    except OSError as exc:
        raise SandboxError(f"cannot note the workspace in {listing}: {exc.strerror}") from exc


def known_workspace(recorded: str) -> Path | None:
    """`recorded` (a session's workspace, as its events say) when the host made it for a
    session or a user named it; None otherwise (it is then not read)."""
    path = Path(recorded)
    if not path.is_absolute() or "\0" in recorded:
        return None
    if path.parent == workspaces_root() and path.name not in ("", ".", ".."):
        return path
    return path if recorded in _named() else None


def _named() -> set[str]:
    try:
        return set(named_list().read_text(encoding="utf-8").splitlines())
    except (OSError, UnicodeDecodeError):
        return set()
