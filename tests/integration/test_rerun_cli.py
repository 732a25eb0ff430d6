"""`tui-agent rerun ID`: a session starts again from the request it stored, through the same
launch path; sessions without one, and imported ones, are refused in one line until trusted.
The real `tui-agent` process, a real sandbox, real SQLite."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from support.requirements import sandbox_backend

from tui_agent.agents.requests import ExecRequest
from tui_agent.events import SessionEnded, SessionStarted, dump_event

PROGRAM = "def main(n, label):\n    return [{'n': i, 'label': label} for i in range(n)]\n"
MARKING = "def main():\n    open('ran-{token}', 'w').write('ran')\n    return [{{'ran': 1}}]\n"


def tui_agent(tmp_path: Path, backend: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "TUI_AGENT_CONFIG_FILE": str(tmp_path / "none.toml"),
        "TUI_AGENT_MODEL": "",
        "TUI_AGENT_SANDBOX": backend,
        "TUI_AGENT_WORKSPACE": str(tmp_path / "workspace"),
        "TUI_AGENT_DB": str(tmp_path / "s.db"),
    }
    return subprocess.run(
        [sys.executable, "-m", "tui_agent", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
    )


def report(tmp_path: Path, backend: str, session_id: str) -> dict:
    shown = tui_agent(tmp_path, backend, "sessions", "show", session_id, "--json")
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)


def sessions(tmp_path: Path, backend: str) -> list[str]:
    listing = tui_agent(tmp_path, backend, "sessions", "list", "--json")
    return [json.loads(line)["session_id"] for line in listing.stdout.splitlines()]


def one_line_refusal(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode != 0, result.stdout
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def imported(tmp_path: Path, backend: str, started: SessionStarted) -> str:
    """A session file beginning with `started` imported here; its id."""
    session_id = uuid.uuid4().hex[:12]
    events = [started, SessionEnded(status="completed")]
    lines = [
        dump_event(e.model_copy(update={"session_id": session_id, "seq": n, "ts": 1000.0 + n}))
        for n, e in enumerate(events, start=1)
    ]
    file = tmp_path / f"{session_id}.jsonl"
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = tui_agent(tmp_path, backend, "sessions", "import", str(file))
    assert done.returncode == 0, done.stderr
    return session_id


@pytest.fixture
def backend() -> str:
    return sandbox_backend()


def test_a_rerun_starts_an_equal_request_and_the_report_carries_it(
    tmp_path: Path, backend: str
) -> None:
    program = tmp_path / "items.py"
    program.write_text(PROGRAM)
    first = tui_agent(tmp_path, backend, "exec", str(program), "--arg", "3", "--arg", "x")
    assert first.returncode == 0, first.stderr
    [original] = sessions(tmp_path, backend)

    again = tui_agent(tmp_path, backend, "rerun", original)

    assert again.returncode == 0, again.stderr
    [rerun] = [s for s in sessions(tmp_path, backend) if s != original]
    before, after = report(tmp_path, backend, original), report(tmp_path, backend, rerun)
    assert before["request"]["kind"] == "exec" and before["request"]["args"] == [3, "x"]
    assert before["request"]["sandbox"] == backend  # resolved from the settings, as started
    assert after["request"] == before["request"]
    assert [item["n"] for item in after["items"]] == [0, 1, 2]


def test_a_session_without_a_stored_request_is_refused_in_one_line(
    tmp_path: Path, backend: str
) -> None:
    older = SessionStarted(kind="exec", title="older", params={}, test_context={"args": []})
    session_id = imported(tmp_path, backend, older)

    line = one_line_refusal(tui_agent(tmp_path, backend, "rerun", session_id))

    assert f"session {session_id}" in line and "without the request" in line
    assert sessions(tmp_path, backend) == [session_id]


def test_an_imported_session_runs_again_only_when_trusted(tmp_path: Path, backend: str) -> None:
    token = uuid.uuid4().hex[:8]
    code = MARKING.format(token=token)
    elsewhere = tmp_path / "their-workspace"
    request = ExecRequest(code=code, file="mark.py", sandbox="local", workspace=elsewhere)
    started = SessionStarted(
        kind="exec", title="mark", params={}, test_context={"args": []}, request=request.to_json()
    )
    session_id = imported(tmp_path, backend, started)

    refused = one_line_refusal(tui_agent(tmp_path, backend, "rerun", session_id))

    assert f"session {session_id} was imported from a file" in refused and "--trust" in refused
    assert not list(tmp_path.rglob(f"ran-{token}"))
    assert sessions(tmp_path, backend) == [session_id]

    trusted = tui_agent(tmp_path, backend, "rerun", session_id, "--trust")

    assert trusted.returncode == 0, trusted.stderr
    # it ran in this machine's sandbox and workspace, never the file's
    assert (tmp_path / "workspace" / f"ran-{token}").exists()
    assert not elsewhere.exists()
    [rerun] = [s for s in sessions(tmp_path, backend) if s != session_id]
    ran = report(tmp_path, backend, rerun)["request"]
    assert (ran["sandbox"], ran["workspace"]) == (backend, str(tmp_path / "workspace"))
