"""How planning a page ended: the planners' outcome (see web.phase)."""

from __future__ import annotations

from dataclasses import dataclass, field

from tui_agent.web.plan.strategy import Strategy


@dataclass(frozen=True)
class PlanOutcome:
    """A planner's strategy, every selector verified, or why it has none."""

    strategy: Strategy | None
    output: str = ""
    """The strategy's Markdown; with no strategy, the model's last answer (if any)."""
    failure: str | None = None
    """One line, set exactly when there is no strategy."""
    refused: list[str] = field(default_factory=list)
    """Selectors the model named that no probe verified, dropped."""
    tool_calls: int = 0
    """Probe calls the model made."""

    def __post_init__(self) -> None:
        if (self.strategy is None) == (self.failure is None):
            raise ValueError("a PlanOutcome holds a strategy or a failure, not both or neither")
