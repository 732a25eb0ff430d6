"""The workspace tools on the host: relative paths only, resolved (links included) and refused
when they leave the read or write roots, on a real file system."""

import os
from pathlib import Path

import pytest

from tui_agent.tools import WorkspaceGuard, WorkspaceRootError
from tui_agent.tools.workspace import Refused


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    (root / "data").mkdir(parents=True)
    (root / "data" / "notes.txt").write_text("hello")
    (root / "out").mkdir()
    return root


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A host file outside the workspace."""
    path = tmp_path / "host-secret.txt"
    path.write_text("the host's secret")
    return path


def call(guard: WorkspaceGuard, tool: str, **arguments: object) -> str:
    return guard.call(tool, arguments)


def test_reads_writes_and_lists_inside_the_workspace(workspace):
    guard = WorkspaceGuard(workspace)
    assert call(guard, "read_workspace_file", filepath="data/notes.txt") == "hello"
    written = call(guard, "update_workspace_file", filepath="out/new/a.txt", content="ünï")
    assert written == "wrote 3 characters to out/new/a.txt"
    assert (workspace / "out/new/a.txt").read_text() == "ünï"
    assert call(guard, "list_workspace", path="out/new") == "a.txt (5 bytes)"
    assert call(guard, "list_workspace") == "data/\nout/"


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        (
            "read_workspace_file",
            {"filepath": "/etc/passwd"},
            "Error: path outside boundary: /etc/passwd is an absolute path; use a path "
            "relative to the workspace, e.g. data/file.txt",
        ),
        (
            "read_workspace_file",
            {"filepath": "data/../../x"},
            "Error: path outside boundary: data/../../x goes up with `..`",
        ),
        ("update_workspace_file", {"filepath": "~/x", "content": ""}, "is an absolute path"),
        ("list_workspace", {"path": ".."}, "goes up with `..`"),
        ("read_workspace_file", {"filepath": ""}, "Error: filepath must be a non-empty path"),
        ("read_workspace_file", {"filepath": "data/none.txt"}, "does not exist"),
        ("read_workspace_file", {"filepath": "data"}, "is a folder; list it with list_workspace"),
        ("update_workspace_file", {"filepath": "a.txt", "content": 3}, "content must be text"),
        ("delete_everything", {}, "Error: no workspace tool 'delete_everything'"),
    ],
)
def test_bad_requests_come_back_as_errors(workspace, tool, arguments, message):
    answer = WorkspaceGuard(workspace).call(tool, arguments)
    assert answer.startswith("Error:") and message in answer


def test_a_planted_link_to_a_host_file_is_refused(workspace, secret):
    (workspace / "data" / "leak.txt").symlink_to(secret)
    (workspace / "host").symlink_to(secret.parent, target_is_directory=True)
    guard = WorkspaceGuard(workspace)
    for path in ("data/leak.txt", f"host/{secret.name}"):
        answer = call(guard, "read_workspace_file", filepath=path)
        assert answer.startswith("Error: path outside boundary:"), answer
        assert "secret" not in answer.replace(secret.name, "")
    answer = call(guard, "update_workspace_file", filepath="data/leak.txt", content="x")
    assert answer.startswith("Error: path outside boundary")
    assert secret.read_text() == "the host's secret"
    answer = call(guard, "update_workspace_file", filepath="host/new.txt", content="x")
    assert answer.startswith("Error: path outside boundary")
    assert not (secret.parent / "new.txt").exists()
    assert call(guard, "list_workspace", path="host").startswith("Error: path outside boundary")


def test_a_link_that_stays_inside_is_followed(workspace):
    (workspace / "latest.txt").symlink_to(workspace / "data" / "notes.txt")
    guard = WorkspaceGuard(workspace)
    assert call(guard, "read_workspace_file", filepath="latest.txt") == "hello"
    assert "latest.txt@ (a link)" in call(guard, "list_workspace")


def test_a_link_swapped_in_after_the_check_is_not_followed(workspace, secret):
    """The file is opened folder by folder without following links: a link that appears
    between resolving and opening (a race the sandboxed code could run) is refused."""
    guard = WorkspaceGuard(workspace)
    resolved = guard._inside(Path("data/notes.txt"), guard.read_roots, "read")
    (workspace / "data" / "notes.txt").unlink()
    (workspace / "data" / "notes.txt").symlink_to(secret)
    with (
        pytest.raises(Refused, match="path outside boundary"),
        guard._opened(resolved, os.O_RDONLY),
    ):
        pass


def test_reads_and_writes_stay_in_their_roots(workspace):
    guard = WorkspaceGuard(workspace, read_roots=["data"], write_roots=["out"])
    assert call(guard, "read_workspace_file", filepath="data/notes.txt") == "hello"
    assert "outside the folders this tool may read (data)" in call(
        guard, "list_workspace", path="out"
    )
    answer = call(guard, "update_workspace_file", filepath="data/x.txt", content="x")
    assert "outside the folders this tool may write (out)" in answer
    assert call(guard, "update_workspace_file", filepath="out/x.txt", content="x").startswith(
        "wrote"
    )


def test_roots_outside_the_workspace_are_refused(workspace):
    with pytest.raises(WorkspaceRootError, match=r"the read root \.\./elsewhere is outside"):
        WorkspaceGuard(workspace, read_roots=["../elsewhere"])


def test_a_file_over_the_read_limit_is_refused(workspace):
    (workspace / "big.bin").write_bytes(b"x" * (2 << 20))
    answer = call(WorkspaceGuard(workspace), "read_workspace_file", filepath="big.bin")
    assert answer == "Error: big.bin is 2.0 MiB; read_workspace_file reads at most 1 MiB"
