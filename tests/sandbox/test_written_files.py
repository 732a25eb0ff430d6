"""The files a run writes: listed on its ExecutionFinished, read back from the host without
following what the sandbox planted (links out of the workspace, linked folders)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from support.requirements import sandbox_backend
from support.sessions import record_exec

from tui_agent.agents.workspace_files import (
    WorkspaceError,
    list_files,
    read_workspace_file,
    written_since,
)
from tui_agent.config import Settings
from tui_agent.events import ExecutionFinished
from tui_agent.sandbox.wire import ExecuteRequest

PLOT = """\
def main():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import os
    plt.plot([1, 3, 2, 5])
    os.makedirs("/workspace/plots", exist_ok=True)
    plt.savefig("/workspace/plots/plot.png")
    os.symlink("/etc/passwd", "/workspace/passwd")
    os.symlink("/etc", "/workspace/etc")
    return "saved"
"""


def test_new_and_changed_files_are_listed_and_links_are_neither_listed_nor_followed(
    tmp_path: Path,
) -> None:
    root = tmp_path / "workspace"
    (root / "kept").mkdir(parents=True)
    (root / "kept" / "same.txt").write_text("unchanged")
    (root / "old.txt").write_text("old")
    before = list_files(root)
    (root / "old.txt").write_text("changed, and longer")
    os.utime(root / "old.txt", ns=(10**18, 10**18))
    (root / "new.bin").write_bytes(b"\x00" * 1500)
    os.symlink("/etc/passwd", root / "passwd")
    os.symlink("/etc", root / "linked")
    written = {f.path: f for f in written_since(root, before)}
    assert set(written) == {"old.txt", "new.bin"}
    assert written["new.bin"].size == 1500
    assert written["new.bin"].sha256 == hashlib.sha256(b"\x00" * 1500).hexdigest()
    assert "linked/passwd" not in list_files(root)
    with pytest.raises(WorkspaceError):
        read_workspace_file(root, "passwd")
    with pytest.raises(WorkspaceError):
        read_workspace_file(root, "linked/hostname")
    with pytest.raises(WorkspaceError):
        read_workspace_file(root, "../outside.txt")
    assert read_workspace_file(root, "old.txt", limit=7) == b"changed"


async def test_a_run_that_saves_a_plot_lists_it_and_not_the_links_it_planted(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "workspace"
    settings = Settings(db=tmp_path / "s.db", workspace=workspace, sandbox=sandbox_backend())
    state = await record_exec(settings, ExecuteRequest(code=PLOT), "plot")
    assert state.status == "completed", state.errors
    execution = state.steps[1].execution
    assert isinstance(execution, ExecutionFinished)
    [plot] = execution.files  # the links it planted (to /etc/passwd, /etc) are not listed
    assert plot.path == "plots/plot.png" and plot.size > 1000
    assert execution.workspace == str(workspace)
    data = read_workspace_file(workspace, plot.path)
    assert data.startswith(b"\x89PNG") and hashlib.sha256(data).hexdigest() == plot.sha256
