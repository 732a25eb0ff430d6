"""The local backend is not isolated, but the host's environment reaches it only through an
allowlist: a connection URL or a token in a variable of any name stays on the host."""

from pathlib import Path

import pytest

from tui_agent.sandbox.local import LocalSandbox
from tui_agent.sandbox.wire import ExecuteRequest

HOST_ONLY = {
    "DATABASE_URL": "postgres://app:hunter2@127.0.0.1/app",
    "FOO_SECRET": "s3cr3t",
    "SENTRY_DSN": "https://key@127.0.0.1/1",
    "HTTPS_PROXY": "http://user:pass@127.0.0.1:3128",
}


async def test_the_local_backend_passes_only_allowlisted_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    for name, value in HOST_ONLY.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("LC_TIME", "C.UTF-8")
    async with LocalSandbox(workspace=tmp_path / "workspace") as box:
        result = await box.execute(ExecuteRequest(code="import os\ndict(os.environ)"))
    seen = result.result
    assert not set(HOST_ONLY) & set(seen), seen
    assert not set(HOST_ONLY.values()) & set(seen.values())
    assert seen["PATH"] and seen["LC_TIME"] == "C.UTF-8"
