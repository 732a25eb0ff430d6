"""Questions about a session that several places ask, answered once over its folded state.

- Which candidate awaits a decision: a candidate version nobody accepted or rejected yet
  (the TUI's `d` and the CLI's `refine --accept/--reject` alone take the newest).
- Which code is in force: the current "code" artifact when the session has one, else the code
  of the latest step that ran and returned records (the items the feedback is about). The
  feedback form shows it and refinement rewrites it.
"""

from __future__ import annotations

from dataclasses import dataclass

from tui_agent.analysis import analyze_output
from tui_agent.events import Artifact, VersionDecided
from tui_agent.session import SessionState, StepState


def candidates_awaiting_decision(state: SessionState) -> list[Artifact]:
    """Candidate versions nobody accepted or rejected yet, oldest first."""
    decided = {(e.name, e.version) for e in state.timeline if isinstance(e, VersionDecided)}
    waiting = [
        artifact
        for versions in state.artifacts.values()
        for artifact in versions
        if artifact.candidate and (artifact.name, artifact.version) not in decided
    ]
    return sorted(waiting, key=lambda artifact: artifact.seq)


def candidate_awaiting_decision(state: SessionState) -> Artifact | None:
    """The newest candidate version nobody accepted or rejected yet."""
    waiting = candidates_awaiting_decision(state)
    return waiting[-1] if waiting else None


@dataclass(frozen=True)
class CodeInForce:
    """The code in force and the step it came from (for a refined version: the step that
    ran the session's first version of it)."""

    code: str
    step: int


def code_in_force(state: SessionState) -> CodeInForce | None:
    """The session's code in force (None when no code of it returned records)."""
    current = state.artifact("code")
    if current is not None:
        first = state.artifacts["code"][0].content
        origin = next((i for i, s in sorted(state.steps.items()) if s.code == first), 0)
        return CodeInForce(current.content, origin)
    for index in sorted(state.steps, reverse=True):
        step = state.steps[index]
        if step.code and _returned_records(step):
            return CodeInForce(step.code, index)
    return None


def _returned_records(step: StepState) -> bool:
    """Whether the step's code ran and returned a list of records."""
    execution = step.execution
    if execution is None or not execution.success:
        return False
    return analyze_output(execution.result).is_structured
