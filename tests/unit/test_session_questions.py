"""Session questions answered once: the feedback form shows the code refinement rewrites, and
the TUI's `d` and the CLI's refine review the same waiting candidate."""

from __future__ import annotations

from tui_agent.agents.refine.code_runs import code_source
from tui_agent.events import (
    Artifact,
    CodeProposed,
    Event,
    ExecutionFinished,
    SessionStarted,
    VersionDecided,
)
from tui_agent.session import fold
from tui_agent.session_questions import (
    candidate_awaiting_decision,
    candidates_awaiting_decision,
    code_in_force,
)
from tui_agent.tui.current_logic import current_logic

LISTING = "rows = [{'price': p} for p in prices]\nrows"
SUMMARY = "total = sum(r['price'] for r in rows)\ntotal"


def ran(step: int, code: str, result: object, success: bool = True) -> list[Event]:
    return [
        CodeProposed(step=step, code=code),
        ExecutionFinished(step=step, success=success, result=result),
    ]


def test_the_feedback_form_and_refinement_pick_the_same_step() -> None:
    """The records came from step 1; step 2 ran too, successfully, and returned a number."""
    state = fold(
        [
            SessionStarted(kind="code", title="prices"),
            *ran(1, LISTING, [{"price": 1.0}, {"price": 2.5}]),
            *ran(2, SUMMARY, 3.5),
            *ran(3, "rows = None", None, success=False),
        ]
    )
    assert current_logic(state, "price") == "   1  rows = [{'price': p} for p in prices]"
    assert code_source(state).code == LISTING
    assert code_in_force(state) is not None and code_in_force(state).step == 1  # type: ignore[union-attr]
    fixed = "rows = [{'price': 9}]"
    state.apply(Artifact(name="code", format="python", content=LISTING, version=1))
    state.apply(Artifact(name="code", format="python", content=fixed, version=2, candidate=True))
    state.apply(VersionDecided(name="code", version=2, accepted=True))
    assert current_logic(state, "price") == "   1  rows = [{'price': 9}]"
    assert code_source(state).code == fixed
    assert code_in_force(state).step == 1  # type: ignore[union-attr]


def test_the_candidate_awaiting_a_decision_is_the_newest_undecided() -> None:
    code = Artifact(name="code", format="python", content="a", version=2, candidate=True, seq=5)
    recipe = Artifact(name="recipe", format="json", content="{}", version=2, candidate=True, seq=3)
    state = fold([SessionStarted(kind="code", title="t")])
    for artifact in (code, recipe):
        state.apply(artifact)
    assert candidates_awaiting_decision(state) == [recipe, code]
    assert candidate_awaiting_decision(state) == code
    state.apply(VersionDecided(name="code", version=2, accepted=False))
    assert candidate_awaiting_decision(state) == recipe
    state.apply(VersionDecided(name="recipe", version=2, accepted=True))
    assert candidate_awaiting_decision(state) is None
