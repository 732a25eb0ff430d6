"""Cost limits of a task: its own budget and its workflow's, both checked before every call."""

from __future__ import annotations

from collections.abc import Sequence

from tui_agent.agents.budget import Budget
from tui_agent.events import LLMCall
from tui_agent.llm import Message


class BudgetExceeded(Exception):
    """The next model call would pass a budget; the message says which and by how much."""


class Spending:
    """The budgets a task's model calls count against (none: no limit)."""

    def __init__(self, budgets: Sequence[tuple[str, Budget]] = ()) -> None:
        self.budgets = list(budgets)

    def within(self, name: str, budget: Budget) -> Spending:
        """These budgets and `budget` (called `name`, e.g. "task extract") as well."""
        return Spending([*self.budgets, (name, budget)])

    def check(self, model: str, messages: Sequence[Message], *, reask: bool = False) -> None:
        """Raise BudgetExceeded when a call to `model` with `messages` would pass a budget."""
        for name, budget in self.budgets:
            refusal = budget.refusal(messages, reask=reask, model=model)
            if refusal:
                raise BudgetExceeded(f"{name} budget: {refusal}")

    def record(self, call: LLMCall, messages: Sequence[Message]) -> None:
        """Count a finished call against every budget."""
        for _, budget in self.budgets:
            budget.record(call, messages)
