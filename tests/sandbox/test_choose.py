"""Choosing a backend: by name, automatically, and the one-line errors when none fits."""

import pytest
from support.requirements import require_backend

from tui_agent.sandbox.base import SandboxError
from tui_agent.sandbox.choose import check_backends, open_sandbox
from tui_agent.sandbox.local import LocalSandbox


def test_an_unknown_name_is_one_clear_error(tmp_path):
    with pytest.raises(SandboxError, match="unknown sandbox 'vm'; choose one of auto, docker"):
        open_sandbox("vm", workspace=tmp_path)


def test_local_is_only_given_by_name_and_says_it_is_not_isolated(tmp_path):
    sandbox = open_sandbox("local", workspace=tmp_path)
    assert isinstance(sandbox, LocalSandbox) and not sandbox.isolated


def test_auto_picks_an_isolated_backend(tmp_path):
    require_backend("bubblewrap")
    sandbox = open_sandbox("auto", workspace=tmp_path)
    assert sandbox.isolated and sandbox.name in ("docker", "bubblewrap")


def test_auto_without_docker_or_bubblewrap_says_how_to_get_one(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path / 'no-docker.sock'}")
    with pytest.raises(SandboxError) as caught:
        open_sandbox("auto", workspace=tmp_path)
    message = str(caught.value)
    assert "\n" not in message
    assert "bwrap not found" in message
    assert "apt-get install bubblewrap" in message and "--sandbox local" in message


def test_check_backends_runs_each_backend_for_real():
    checks = {check.name: check for check in check_backends()}
    assert list(checks) == ["docker", "bubblewrap", "local"]
    assert checks["local"].ok and "NOT isolated" in checks["local"].reason
    assert all(check.reason for check in checks.values())
