"""Asking the user before a step's code runs: run it, skip it, or run an edited version.

Agents only know the `Approver` protocol. The TUI implements it with a modal
(tui/screens/approval.py); headless runs use `cli/approval.py`'s `TerminalApprover`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

DecisionKind = Literal["run", "skip", "edit"]


@dataclass(frozen=True)
class Decision:
    """What the user decided for one step; `code` is the edited code (only for `edit`)."""

    kind: DecisionKind
    code: str | None = None

    def __post_init__(self) -> None:
        if (self.kind == "edit") != (self.code is not None):
            raise ValueError("an edit decision carries the edited code, and only it does")


class Approver(Protocol):
    """Decides, before each run, whether a step's code runs."""

    async def approve(self, step: int, code: str) -> Decision:
        """Run, skip or edit `code` of step `step`."""
        ...


def decision_for(proposed: str, final: str) -> Decision:
    """`run` when the user left the code as proposed, else `edit` with their code."""
    return Decision("run") if final == proposed else Decision("edit", final)
