"""The web phases' one convention: events while working, then one typed outcome.

A phase (planning a page, proving a filter fragment, writing a recipe, a dry run, running a
recipe, ...) is an async generator typed `Phase[SomeOutcome]`: it yields session events while it
works and, last, exactly one outcome, a frozen dataclass of its own defined next to it that
says what the phase gave or why it gave nothing. A failure is an outcome too (its `failure`
field), never an exception for the caller to catch nor an attribute to read afterwards.

A caller relays the events and then reads the outcome through `PhaseRun`:

    planned = PhaseRun(planner.run(), PlanOutcome)
    async for event in planned:
        yield event
    if planned.outcome.strategy is None: ...

or, when it only wants the events as a list, `events, outcome = await collect(phase, Kind)`.
A new phase (say, filling a search form) is one more generator typed `Phase[FormOutcome]`.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Generic, TypeAlias, TypeVar, cast

from tui_agent.events import Event

OutcomeT = TypeVar("OutcomeT")

Phase: TypeAlias = AsyncGenerator[Event | OutcomeT, None]
"""A phase's stream: events, then its one outcome of type `OutcomeT`."""


class PhaseError(RuntimeError):
    """A phase broke the convention (no outcome, two, or events after it): a bug, not input."""


class PhaseRun(Generic[OutcomeT]):
    """One run of a phase: iterate it for the events, then read `outcome`."""

    def __init__(self, phase: Phase[OutcomeT], kind: type[OutcomeT]) -> None:
        self._phase = phase
        self._kind = kind
        self._outcome: OutcomeT | None = None

    async def __aiter__(self) -> AsyncIterator[Event]:
        async with contextlib.aclosing(self._phase) as items:
            async for item in items:
                if isinstance(item, self._kind):
                    if self._outcome is not None:
                        raise PhaseError(f"a phase yielded two {self._kind.__name__}s")
                    self._outcome = item
                elif self._outcome is not None:
                    raise PhaseError(f"a phase yielded an event after its {self._kind.__name__}")
                else:
                    yield cast(Event, item)
        if self._outcome is None:
            raise PhaseError(f"a phase ended without its {self._kind.__name__}")

    @property
    def outcome(self) -> OutcomeT:
        """The phase's outcome, once its events are all read."""
        if self._outcome is None:
            raise PhaseError(f"the {self._kind.__name__} is read before the phase ended")
        return self._outcome


async def collect(phase: Phase[OutcomeT], kind: type[OutcomeT]) -> tuple[list[Event], OutcomeT]:
    """Run `phase` to its end: its events, in order, and its outcome."""
    run = PhaseRun(phase, kind)
    events = [event async for event in run]
    return events, run.outcome
