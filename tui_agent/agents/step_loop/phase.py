"""A phase of an agent's work (connecting servers, writing packages), timed from its start."""

from __future__ import annotations

import time

from tui_agent.events import PhaseFinished, PhaseStarted


class Phase:
    """The clock starts when the phase is made; `finished` reports the seconds since."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.began = time.monotonic()

    def started(self, detail: str = "") -> PhaseStarted:
        return PhaseStarted(phase=self.name, detail=detail)

    def finished(self, *, ok: bool = True, summary: str = "") -> PhaseFinished:
        duration = time.monotonic() - self.began
        return PhaseFinished(phase=self.name, ok=ok, duration=duration, summary=summary)
