"""A circuit breaker for what a task cannot do without: the model's server and the sandbox.

Code errors, timeouts and a sandbox's faults are worth another attempt; a model or sandbox
engine that cannot be reached is not. When one is found unreachable its circuit opens for a
cool-down: within it, every task that needs it ends at once with one line saying why and
when to try again, instead of waiting out timeouts again (a workflow's next nodes, the next
task started from the same app).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from tui_agent.errors import UserError

COOL_DOWN = 60.0
"""Seconds a circuit stays open."""


class CircuitOpen(UserError):
    """A task needs something whose circuit is open; `str(error)` is the one line to show."""


@dataclass
class CircuitBreaker:
    """Open circuits by target ("model openai/gpt-4o-mini at http://...", "sandbox docker")."""

    cool_down: float = COOL_DOWN
    clock: Callable[[], float] = time.monotonic
    _open: dict[str, tuple[float, str]] = field(default_factory=dict)

    def trip(self, target: str, reason: str) -> None:
        """Open `target`'s circuit for the cool-down, remembering why."""
        self._open[target] = (self.clock() + self.cool_down, reason)

    def check(self, target: str) -> None:
        """Raise CircuitOpen while `target`'s circuit is open."""
        until, reason = self._open.get(target, (0.0, ""))
        left = until - self.clock()
        if left <= 0:
            self._open.pop(target, None)
            return
        raise CircuitOpen(
            f"{target} was unreachable {self.cool_down - left:.0f} s ago ({reason}); not trying "
            f"again for {left:.0f} s"
        )

    def reset(self) -> None:
        """Close every circuit."""
        self._open.clear()


BREAKER = CircuitBreaker()
"""The breaker of this process: tasks run one after another share what they learnt."""
