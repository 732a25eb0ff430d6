"""What ctrl+c stops: a screen that runs work says whether it does and stops its current step
(the app asks the screen on top)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class StepStopper(Protocol):
    """A screen whose ctrl+c stops the step running on it."""

    def step_running(self) -> bool:
        """Whether something runs here that ctrl+c would stop."""
        ...

    def stop_step(self) -> str:
        """Stop it; the toast that says what stopped."""
        ...
