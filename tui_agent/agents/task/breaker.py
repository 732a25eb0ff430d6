"""A circuit breaker for what a task cannot do without: a model server and the sandbox.

Code errors, timeouts and a sandbox's faults are worth another attempt; a model server or a
sandbox engine that cannot be reached is not. There is one circuit per target: each model
server (its API base, else its provider: `model_server`) and each sandbox backend, so a
failure of one never blocks another.

A failure opens the target's circuit (a model call has already outlasted the client's own
retries by then). For a short cool-down every task that needs it ends at once with one line
saying why and how to retry, instead of waiting out timeouts again (a workflow's next nodes,
a batch's next items). After it, one call is let through as a probe (half-open); others
still end at once until the probe ends or another cool-down passes (a probe that never
reports blocks nothing for long). Any success closes the circuit, and so does `close`: the
user's "retry now".
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from tui_agent.errors import UserError
from tui_agent.llm.errors import LLMError, redact
from tui_agent.llm.provider import resolve_provider

COOL_DOWN = 10.0
"""Seconds after a failure before one call is let through to try the target again."""
RETRY_HINT = "a new `tui-agent` command tries it at once"
"""How a user retries at once, said when a circuit is open; a front end that can close a
circuit (the TUI's retry key) sets its own on the breaker."""


class CircuitOpen(UserError):
    """A task needs something whose circuit is open; `str(error)` is the one line to show."""


def model_server(model: str, api_base: str | None) -> str:
    """The target of the server that serves `model`: "the model server at URL" (`api_base`),
    else "the <provider> API"."""
    if api_base:
        return f"the model server at {redact(api_base.rstrip('/'))}"
    try:
        _, provider = resolve_provider(model, None)
    except LLMError:
        provider = model.split("/")[0]
    return f"the {provider} API"


@dataclass
class _Circuit:
    failed_at: float
    reason: str
    probe_at: float
    """When the next call may go through to try the target (a probe)."""


@dataclass
class CircuitBreaker:
    """The circuits of targets ("the model server at http://...", "the docker sandbox") that
    failed and have not succeeded since (see the module docstring)."""

    cool_down: float = COOL_DOWN
    clock: Callable[[], float] = time.monotonic
    retry_hint: str = RETRY_HINT
    _open: dict[str, _Circuit] = field(default_factory=dict)

    def check(self, target: str) -> None:
        """Let a call to `target` go ahead, or raise CircuitOpen while its circuit is open
        and no probe is due; a call that goes ahead after a failure is the probe."""
        circuit = self._open.get(target)
        if circuit is None:
            return
        now = self.clock()
        if now >= circuit.probe_at:
            circuit.probe_at = now + self.cool_down  # one probe per cool-down
            return
        raise CircuitOpen(
            f"{target} failed {now - circuit.failed_at:.0f} s ago ({circuit.reason}); it is "
            f"tried again in {circuit.probe_at - now:.0f} s; {self.retry_hint}"
        )

    def failed(self, target: str, reason: str) -> None:
        """`target` could not be reached: open its circuit for the cool-down."""
        now = self.clock()
        self._open[target] = _Circuit(now, reason, now + self.cool_down)

    def succeeded(self, target: str) -> None:
        """`target` answered: its circuit closes."""
        self._open.pop(target, None)

    def close(self, target: str) -> bool:
        """Close `target`'s circuit (the user retries at once); whether it was open."""
        return self._open.pop(target, None) is not None

    def is_open(self, target: str) -> bool:
        """Whether `target` failed and has not succeeded (nor been closed) since."""
        return target in self._open

    def reset(self) -> None:
        """Close every circuit."""
        self._open.clear()


BREAKER = CircuitBreaker()
"""The breaker of this process: tasks run one after another share what they learnt."""
