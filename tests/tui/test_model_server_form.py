"""Choosing the model server on the new-session form, and the circuit breaker seen from the
TUI: a failed server's circuit opens for it alone, says how to retry, and a retry goes
through at once once the server is back (task sessions: a real sandbox, scripted servers)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from session_factory import wait_until
from support.requirements import sandbox_backend
from support.scripted_model import ScriptedModel, text
from test_new_session import open_form
from textual.pilot import Pilot
from textual.widgets import Input

from tui_agent.agents.task.breaker import BREAKER, CircuitBreaker, model_server
from tui_agent.config import Settings
from tui_agent.events import SessionStarted
from tui_agent.session import SessionState
from tui_agent.store import Store
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.retry import RETRY_HINT
from tui_agent.tui.screens.home import HomeScreen
from tui_agent.tui.screens.new_session import NewSessionModal
from tui_agent.tui.screens.session import SessionScreen

CODE_REPLY = "```python\n# STAGE: TASK\ncontext['doubled'] = context['n'] * 2\n```"
VALID = json.dumps({"valid": True, "reason": "n doubled"})


@pytest.fixture
def breaker() -> Iterator[CircuitBreaker]:
    """The process's breaker (the one the TUI's sessions share), closed before and after,
    its cool-down longer than the test: no probe goes through unless the user retries."""
    cool_down = BREAKER.cool_down
    BREAKER.reset()
    BREAKER.cool_down = 600
    yield BREAKER
    BREAKER.cool_down = cool_down
    BREAKER.reset()


async def start_task(pilot: Pilot[Any], api_base: str, context: Path) -> SessionState:
    """From home: `n` (the form opens on the task kind last started), the task typed, the
    context file and `api_base` given, ctrl+s; the session's state once it has ended."""
    app = pilot.app
    await pilot.press("n")
    await wait_until(pilot, lambda: isinstance(app.screen, NewSessionModal))
    modal = app.screen
    assert isinstance(modal, NewSessionModal) and modal.kind == "task"
    await wait_until(pilot, lambda: modal.focused is modal.query_one("#task-task"))
    modal.query_one("#task-api-base", Input).value = api_base
    await pilot.press(*"Double n", "tab", *str(context), "ctrl+s")
    return await ended(pilot)


async def ended(pilot: Pilot[Any]) -> SessionState:
    app = pilot.app
    await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen), timeout=30)
    screen = app.screen
    assert isinstance(screen, SessionScreen)
    await wait_until(pilot, lambda: screen.state.status != "running", timeout=60)
    state = screen.state
    await pilot.press("escape")
    await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
    return state


def shown_id(app: TuiAgentApp) -> str | None:
    """The id of the session the screen on top shows (None: not a session's)."""
    screen = app.screen
    return screen.session_id if isinstance(screen, SessionScreen) else None


async def test_a_failed_server_blocks_itself_only_and_a_retry_goes_through_at_once(
    tmp_path: Path, server: ScriptedModel, breaker: CircuitBreaker
) -> None:
    db = tmp_path / "s.db"
    model = server.model("gpt-4o-mini")
    settings = Settings(
        db=db, workspace=tmp_path / "ws", sandbox=sandbox_backend(), model=model
    )  # no API base configured: the form's field says which server
    context = tmp_path / "ctx.json"
    context.write_text(json.dumps({"n": 21}))
    server.push(text("x" * 200, stream=True, disconnect_after=1))  # the server fails
    app = TuiAgentApp(db, settings=settings)
    with ScriptedModel([text(CODE_REPLY), text(VALID)]) as other:
        other_base = other.api_base
        async with app.run_test(size=(120, 40)) as pilot:
            modal = await open_form(pilot, "task")
            field = modal.query_one("#task-api-base", Input)
            assert field.value == ""
            field.value = server.api_base
            await pilot.press(*"Double n", "tab", *str(context), "ctrl+s")
            down = await ended(pilot)
            assert down.stopped_reason == "model_unreachable"
            target = model_server(model, server.api_base)
            assert breaker.is_open(target)

            asked = len(server.requests)
            blocked = await start_task(pilot, server.api_base, context)
            assert blocked.stopped_reason == "circuit_open" and len(server.requests) == asked
            said = blocked.errors[-1].message
            assert said.startswith(f"{target} failed") and "tried again in" in said
            assert said.endswith(breaker.retry_hint)

            elsewhere = await start_task(
                pilot, other.api_base, context
            )  # another server: unaffected
            assert elsewhere.status == "completed", elsewhere.errors

            assert said.endswith(RETRY_HINT)  # the TUI's message names its key

            server.push(text(CODE_REPLY), text(VALID))  # the server is back
            await app.show_session(blocked.session_id, "stored")
            await wait_until(pilot, lambda: shown_id(app) == blocked.session_id)
            await pilot.press("ctrl+t")  # retry from the failed session's screen
            await wait_until(pilot, lambda: shown_id(app) not in (None, blocked.session_id))
            retried = app.screen
            assert isinstance(retried, SessionScreen)
            await wait_until(pilot, lambda: retried.state.status != "running", timeout=60)
            back = retried.state
            assert back.status == "completed", back.errors
            assert back.request == blocked.request  # the same request, again
            assert not breaker.is_open(target)
    async with await Store.open(db) as store:
        sessions = sorted(await store.list_sessions(), key=lambda s: s.started_at)
        firsts = [(await store.events(s.session_id))[0] for s in sessions]
    assert all(isinstance(first, SessionStarted) for first in firsts)
    servers = [(first.request or {})["api_base"] for first in firsts]  # type: ignore[union-attr]
    assert servers == [server.api_base, server.api_base, other_base, server.api_base]
