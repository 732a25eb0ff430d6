"""Task sessions in the TUI: started from the home screen's form (a real sandbox, the scripted
model through litellm), each attempt with its checks, the context tree with the new keys
marked, the metadata; the same screen in replay; a snapshot of a stored one."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from session_factory import at_fixed_times, store_events, wait_until
from support.requirements import sandbox_backend
from support.scripted_model import ScriptedModel, text
from test_new_session import open_form
from textual.pilot import Pilot
from textual.widgets import Static, Tree

from tui_agent.config import Settings
from tui_agent.events import (
    AttemptStarted,
    CheckVerdict,
    CodeProposed,
    Event,
    ExecutionFinished,
    ExecutionStarted,
    LLMCall,
    LogLine,
    SessionEnded,
    SessionStarted,
    TaskResult,
    Thought,
)
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.screens.new_session import NewSessionModal
from tui_agent.tui.screens.replay import ReplayScreen
from tui_agent.tui.screens.session import SessionScreen
from tui_agent.tui.widgets.context_panel import ContextPanel

CODE_REPLY = "```python\n# STAGE: TASK\ncontext['doubled'] = context['n'] * 2\n```"
VALID = json.dumps({"valid": True, "reason": "n doubled"})


def tree_text(panel: ContextPanel) -> str:
    tree = panel.query_one(Tree)
    lines: list[str] = []

    def walk(node: Any) -> None:
        for child in node.children:
            lines.append(str(child.label))
            walk(child)

    walk(tree.root)
    return "\n".join(lines)


async def test_a_task_from_the_form_runs_and_shows_its_context(
    tmp_path: Path, server: ScriptedModel
) -> None:
    backend = sandbox_backend()
    db = tmp_path / "s.db"
    settings = Settings(
        db=db,
        workspace=tmp_path / "ws",
        sandbox=backend,
        model=server.model("gpt-4o-mini"),
        api_base=server.api_base,
    )
    (tmp_path / "bad.json").write_text("[1, 2]")
    (tmp_path / "ctx.json").write_text(json.dumps({"n": 21, "db_password": "hunter2"}))
    server.push(text("Oops, no code here."), text(CODE_REPLY), text(VALID))
    app = TuiAgentApp(db, settings=settings)
    async with app.run_test(size=(120, 40)) as pilot:
        modal = await open_form(pilot, "task")
        await pilot.press("ctrl+s")
        assert "What should the code do?" in modal.problem
        await pilot.press(*"Double n", "tab", *str(tmp_path / "bad.json"), "ctrl+s")
        assert "must hold a JSON object" in modal.problem
        assert isinstance(app.screen, NewSessionModal)  # the form stays, with what was typed
        path = modal.query_one("#task-context")
        path.value = str(tmp_path / "ctx.json")  # type: ignore[attr-defined]
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen), timeout=30)
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await wait_until(pilot, lambda: screen.state.status != "running", timeout=60)
        assert screen.state.status == "completed", screen.state.errors
        await pilot.pause()
        panel = screen.query_one(ContextPanel)
        assert panel.display
        shown = tree_text(panel)
        assert "doubled: 42  + new" in shown
        assert 'db_password: "***"' in shown and "hunter2" not in shown
        metadata = str(screen.query_one("#metadata", Static).render())
        assert "attempts" in metadata and "model calls" in metadata
        [step] = screen.state.steps.values()
        assert step.model_calls == 3  # the re-ask and the validator on one attempt
        session_id = screen.session_id

    replay = TuiAgentApp(db, settings=settings, replay_session=session_id)
    async with replay.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(replay.screen, ReplayScreen))
        await pilot.press("end")
        screen = replay.screen
        assert isinstance(screen, ReplayScreen)
        await wait_until(pilot, lambda: bool(screen.state.task_results))
        await pilot.pause()
        assert "doubled: 42  + new" in tree_text(screen.query_one(ContextPanel))


def task_events() -> list[Event]:
    """A stored task: one attempt refused before running, one that passes every check."""
    context = {"total": 1500, "smtp_password": "***"}
    after = {
        **context,
        "discount": 150.0,
        "final_total": 1350.0,
        "_ai_metadata": {
            "model": "gpt-4o-mini",
            "model_source": "default",
            "validator_model": "gpt-4o-mini",
            "attempts": 2,
            "cache_hit": False,
            "stages_used": 1,
            "model_calls": 3,
            "tokens_input_estimated": 2210,
            "tokens_output_estimated": 131,
            "cost_usd_estimated": 0.00041,
            "usage_source": "provider",
            "generation_time_ms": 2310,
            "execution_time_ms": 38,
            "total_time_ms": 3120,
            "total_tool_calls": 0,
            "output_validation": {"valid": True, "reason": "10% of 1500 is 150"},
            "status": "success",
        },
    }
    return [
        AttemptStarted(step=1, attempt=1, max_attempts=3),
        LLMCall(model="gpt-4o-mini", prompt_tokens=700, completion_tokens=30, cost=0.0001, step=1),
        CodeProposed(
            step=1, code="# STAGE: TASK\ncontext['discount'] = total * 0.1", action="task"
        ),
        CheckVerdict(
            step=1,
            check="context_access",
            passed=False,
            message="context access: name 'total' (line 2) is used but never defined: read it "
            "from the context first: total = context['total']",
        ),
        AttemptStarted(step=2, attempt=2, max_attempts=3),
        Thought(step=2, text="Reading the total from the context this time."),
        LLMCall(model="gpt-4o-mini", prompt_tokens=900, completion_tokens=80, cost=0.0002, step=2),
        CodeProposed(
            step=2,
            code="# STAGE: TASK\ntotal = context['total']\n"
            "context['discount'] = total * 0.10 if total > 1000 else 0.0\n"
            "context['final_total'] = total - context['discount']",
            action="task",
        ),
        CheckVerdict(step=2, check="context_access", passed=True),
        ExecutionStarted(step=2, backend="docker"),
        ExecutionFinished(
            step=2, success=True, duration=0.04, logs=[LogLine(stream="stdout", text="done")]
        ),
        CheckVerdict(step=2, check="serialization", passed=True),
        LLMCall(model="gpt-4o-mini", prompt_tokens=610, completion_tokens=21, cost=0.0001, step=2),
        CheckVerdict(step=2, check="output", passed=True, message="10% of 1500 is 150"),
        TaskResult(status="success", node="task", context=after, input_context=context),
    ]


@pytest.fixture
def stored_task(db_path: Path) -> Path:
    first = SessionStarted(
        kind="task",
        title="Calculate discount (10% if total > 1000)",
        model="gpt-4o-mini",
        test_context={"context": {"total": 1500, "smtp_password": "***"}},
    )
    events = at_fixed_times("7a5c00000001", first, task_events(), SessionEnded(status="completed"))
    asyncio.run(store_events(db_path, events))
    return db_path


@pytest.mark.usefixtures("utc")
def test_snapshot_of_a_stored_task_session(snap_compare: Any, stored_task: Path) -> None:
    app = TuiAgentApp(stored_task, open_session="7a5c00000001")

    async def opened(pilot: Pilot[Any]) -> None:
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, SessionScreen))
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 44), run_before=opened)
