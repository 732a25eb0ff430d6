"""CodeAct driven by a real model: `tui-agent code --json` against the server named by
TUI_AGENT_TEST_MODEL_BASE (skipped without it), a real sandbox, real SQLite."""

from __future__ import annotations

import json

from support.real_model import tui_agent
from support.requirements import sandbox_backend

TASK = (
    "Write a Python function is_prime(n) that says whether n is a prime number, run it, and "
    "print is_prime(7) and is_prime(8). Then answer with what it printed."
)


def test_codeact_writes_and_calls_a_function_and_completes(real_model, tmp_path):
    result = tui_agent(
        tmp_path,
        real_model,
        "code",
        TASK,
        "--json",
        "--max-steps",
        "6",
        "--sandbox",
        sandbox_backend(),
        "--workspace",
        str(tmp_path / "ws"),
    )
    events = [json.loads(line) for line in result.stdout.splitlines()]
    ended = events[-1]
    assert ended["type"] == "session_ended", result.stderr[-2000:]
    assert ended["status"] == "completed", (ended, [e.shapes() for e in real_model.exchanges])
    printed = "".join(
        log["text"]
        for event in events
        if event["type"] == "execution_finished" and event["success"]
        for log in event["logs"]
    )
    assert "True" in printed and "False" in printed
    assert any(event["type"] == "final_answer" for event in events)
    assert real_model.exchanges, "every model call went through the recording proxy"
