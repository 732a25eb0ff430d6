"""What the header says a session used: the model only when it called one (or may still, for a
kind whose form asks for one), and one way to show a cost that is not known."""

from __future__ import annotations

from tui_agent.events import LLMCall, SessionEnded, SessionStarted
from tui_agent.session import SessionState, fold
from tui_agent.tui.widgets.context_panel import metadata_content
from tui_agent.tui.widgets.status_line import model_used


def session(kind: str, *more: object, model: str = "gpt-4o-mini") -> SessionState:
    started = SessionStarted(kind=kind, title="t", model=model)
    return fold([started, *more])  # type: ignore[list-item]


def test_a_run_that_called_no_model_names_none() -> None:
    assert model_used(session("exec")) == "no model"  # its form asks for no model
    assert model_used(session("exec", SessionEnded(status="completed"))) == "no model"
    assert model_used(session("code", SessionEnded(status="failed"))) == "no model"


def test_a_session_names_the_model_it_calls() -> None:
    assert model_used(session("code")) == "gpt-4o-mini"  # running: it is about to call it
    called = LLMCall(model="gpt-4o-mini", prompt_tokens=1, completion_tokens=1, cost=None)
    done = session("code", called, SessionEnded(status="completed"))
    assert model_used(done) == "gpt-4o-mini"
    assert model_used(session("exec", called, SessionEnded(status="completed"))) == "gpt-4o-mini"


def test_a_task_without_a_model_call_shows_its_cost_as_unknown() -> None:
    """As the status line does: a made-up $0.0000 never stands for no price."""
    cached = {"usage_source": "none", "cost_usd_estimated": 0.0, "model": "m"}
    assert "—" in str(metadata_content(cached)) and "$0.0000" not in str(metadata_content(cached))
    paid = {"usage_source": "provider", "cost_usd_estimated": 0.0123, "model": "m"}
    assert "$0.0123" in str(metadata_content(paid))
