"""`tui-agent task`, `workflow run` and `cache list|clear` as a user runs them: a real process,
the scripted model through litellm, a real sandbox (docker under CI), real SQLite. Bad input
gets one line and exit 1 with nothing recorded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.requirements import sandbox_backend
from support.scripted_model import ScriptedModel, text

MODEL = "openai/gpt-4o-mini"
DISCOUNT = "Calculate discount (10% if total > 1000)"
CODE = (
    "```python\n# STAGE: TASK\ntotal = context['total']\n"
    "context['discount'] = total * 0.10 if total > 1000 else 0.0\n```"
)
VALID = json.dumps({"valid": True, "reason": "10% of 1500"})
DROPPED = ("TUI_AGENT_MODEL", "TUI_AGENT_API_BASE", "TUI_AGENT_SANDBOX", "TUI_AGENT_DB")


def tui_agent(
    tmp_path: Path, *args: str, drop: tuple[str, ...] = (), stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    import os

    env = {k: v for k, v in os.environ.items() if k not in DROPPED + drop}
    env["TUI_AGENT_CONFIG_FILE"] = str(tmp_path / "none.toml")
    env["TUI_AGENT_WORKSPACE"] = str(tmp_path / "workspace")
    env["COLUMNS"] = "120"
    return subprocess.run(
        [sys.executable, "-m", "tui_agent", "--db", str(tmp_path / "s.db"), *args],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        cwd=tmp_path,
    )


def scripted(server: ScriptedModel, backend: str) -> list[str]:
    return ["--model", MODEL, "--api-base", server.api_base, "--sandbox", backend]


@pytest.fixture
def backend() -> str:
    return sandbox_backend()


@pytest.fixture
def context_file(tmp_path: Path) -> Path:
    path = tmp_path / "ctx.json"
    path.write_text(json.dumps({"total": 1500, "api_key": "sk-test-12345678"}))
    return path


def sessions(tmp_path: Path) -> list[dict]:
    listed = tui_agent(tmp_path, "sessions", "list", "--json")
    return [json.loads(line) for line in listed.stdout.splitlines()]


def test_headless_prints_the_updated_context_and_o_writes_it(
    tmp_path: Path, server: ScriptedModel, backend: str, context_file: Path
):
    server.push(text(CODE), text(VALID))
    out = tmp_path / "out.json"
    done = tui_agent(
        tmp_path,
        "task",
        DISCOUNT,
        "--context",
        str(context_file),
        *scripted(server, backend),
        "--headless",
        "-o",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout[done.stdout.index("{\n") :])
    assert printed["discount"] == 150.0 and printed["api_key"] == "***"
    saved = json.loads(out.read_text())
    assert saved["discount"] == 150.0 and saved["api_key"] == "sk-test-12345678"
    assert saved["_ai_metadata"]["attempts"] == 1
    assert "✓ output: 10% of 1500" in done.stdout
    [session] = sessions(tmp_path)
    assert session["kind"] == "task" and session["status"] == "completed"
    shown = tui_agent(tmp_path, "sessions", "show", session["session_id"], "--json")
    report = json.loads(shown.stdout)
    assert report["tasks"][0]["context"]["discount"] == 150.0
    assert "sk-test-12345678" not in shown.stdout


def test_json_mode_ends_with_an_event_carrying_the_context(
    tmp_path: Path, server: ScriptedModel, backend: str, context_file: Path
):
    server.push(text(CODE), text(VALID))
    done = tui_agent(
        tmp_path,
        "task",
        DISCOUNT,
        "--context",
        str(context_file),
        *scripted(server, backend),
        "--json",
    )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    [result] = [e for e in events if e["type"] == "task_result"]
    assert result["status"] == "success" and result["context"]["discount"] == 150.0
    assert result["context"]["_ai_metadata"]["cache_hit"] is False
    assert events[-1]["type"] == "session_ended"


def test_the_cache_is_listed_used_and_cleared(
    tmp_path: Path, server: ScriptedModel, backend: str, context_file: Path
):
    server.push(text(CODE), text(VALID))
    first = tui_agent(
        tmp_path,
        "task",
        DISCOUNT,
        "--context",
        str(context_file),
        *scripted(server, backend),
        "--headless",
    )
    assert first.returncode == 0, first.stderr
    listed = tui_agent(tmp_path, "cache", "list", "--json")
    [entry] = [json.loads(line) for line in listed.stdout.splitlines()]
    assert entry["task"] == DISCOUNT and entry["model"] == MODEL and entry["hits"] == 0
    assert entry["schema"] == {"object": {"api_key": "str", "total": "int"}}

    again = tui_agent(
        tmp_path,
        "task",
        DISCOUNT,
        "--context",
        str(context_file),
        *scripted(server, backend),
        "--headless",
    )
    assert again.returncode == 0, again.stderr
    assert "cache hit (exact)" in again.stdout
    assert len(server.requests) == 2  # the second run asked the model nothing

    table = tui_agent(tmp_path, "cache", "list")
    assert DISCOUNT[:20] in table.stdout
    cleared = tui_agent(tmp_path, "cache", "clear")
    assert cleared.stdout.strip() == "removed 1 cached entry"
    assert tui_agent(tmp_path, "cache", "list").stdout.strip() == "the code cache is empty"


def test_a_workflow_file_runs_its_nodes_in_order(
    tmp_path: Path, server: ScriptedModel, backend: str
):
    workflow = tmp_path / "wf.json"
    workflow.write_text(
        json.dumps(
            {
                "model": MODEL,
                "nodes": [
                    {"id": "double", "executor": "cached", "prompt": "Double n"},
                    {"id": "label", "prompt": "Label n2 as big when over 10"},
                ],
            }
        )
    )
    server.push(
        text("```python\ncontext['n2'] = context['n'] * 2\n```"),
        text(VALID),
        text("```python\ncontext['label'] = 'big' if context['n2'] > 10 else 'small'\n```"),
        text(VALID),
    )
    done = tui_agent(
        tmp_path,
        "workflow",
        "run",
        str(workflow),
        "--api-base",
        server.api_base,
        "--sandbox",
        backend,
        "--context",
        "-",
        "--json",
        stdin='{"n": 7}',
    )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    results = [e for e in events if e["type"] == "task_result"]
    assert [r["node"] for r in results] == ["double", "label"]
    assert results[-1]["context"]["label"] == "big" and results[-1]["context"]["n2"] == 14
    assert events[0]["title"] == "workflow wf.json (2 nodes)"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("task", "  ", "--model", MODEL), "the task is empty"),
        (("task", "x", "--context", "missing.json", "--model", MODEL), "cannot read context file"),
        (("task", "x", "--context", "bad.json", "--model", MODEL), "is not valid JSON"),
        (("task", "x", "--context", "list.json", "--model", MODEL), "must hold a JSON object"),
        (("task", "x"), "no model for the task: pass --model or set TUI_AGENT_MODEL"),
        (("task", "x", "--model", "no-such-model-xyz"), "unknown model 'no-such-model-xyz'"),
        (("task", "x", "--model", "gpt-4o-mini"), "OPENAI_API_KEY is not set"),
        (
            ("task", "x", "--model", MODEL, "--max-attempts", "0"),
            "--max-attempts must be at least 1",
        ),
        (("task", "x", "--model", MODEL, "-o", "nowhere/out.json"), "its folder does not exist"),
        (
            (
                "task",
                "x",
                "--model",
                MODEL,
                "--api-base",
                "http://127.0.0.1:9",
                "--sandbox",
                "local",
            ),
            "the local sandbox is not isolated",
        ),
        (("workflow", "run", "wf-bad.json", "--model", MODEL), "nodes.0.prompt: Field required"),
        (
            ("workflow", "run", "wf-exec.json", "--model", MODEL),
            "executor 'other' is not supported",
        ),
        (("workflow", "run", "wf-dup.json", "--model", MODEL), "two nodes have the id 'a'"),
    ],
)
def test_bad_input_is_one_line_and_records_nothing(tmp_path: Path, args, message):
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "list.json").write_text("[1]")
    (tmp_path / "wf-bad.json").write_text('{"nodes": [{"id": "a"}]}')
    (tmp_path / "wf-exec.json").write_text(
        '{"nodes": [{"id": "a", "prompt": "p", "executor": "other"}]}'
    )
    (tmp_path / "wf-dup.json").write_text(
        '{"nodes": [{"id": "a", "prompt": "p"}, {"id": "a", "prompt": "q"}]}'
    )
    done = tui_agent(tmp_path, *args, "--headless", drop=("OPENAI_API_KEY",))
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr
    assert "Traceback" not in done.stderr
    assert sessions(tmp_path) == []
