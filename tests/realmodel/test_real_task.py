"""The task executor driven by a real model: `tui-agent task --json` against the server named
by TUI_AGENT_TEST_MODEL_BASE (skipped without it), a real sandbox, real SQLite."""

from __future__ import annotations

import json

from support.real_model import tui_agent
from support.requirements import sandbox_backend


def test_task_executor_updates_the_context_and_completes(real_model, tmp_path):
    context = tmp_path / "ctx.json"
    context.write_text(json.dumps({"total": 1500}))
    result = tui_agent(
        tmp_path,
        real_model,
        "task",
        "Calculate discount (10% if total > 1000)",
        "--context",
        str(context),
        "--sandbox",
        sandbox_backend(),
        "--json",
        env={"TUI_AGENT_WORKSPACE": str(tmp_path / "workspace")},
    )
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert events and events[-1]["type"] == "session_ended", result.stderr[-2000:]
    assert events[-1]["status"] == "completed", (events[-1], result.stderr[-2000:])
    [outcome] = [e for e in events if e["type"] == "task_result"]
    assert outcome["status"] == "success"
    assert outcome["context"]["discount"] == 150.0
