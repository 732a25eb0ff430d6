"""How one run of a recipe ended: the recipe interpreter's outcome (see web.phase)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

FailureKind = Literal["RecipeFailed", "BrowserGone", "PageLoadError"]
"""Why a run stopped before its end, named as its Error event is: a step the run cannot go on
without failed (the list never showed, a next page failed, ...), Chromium went away, or the
page could not be loaded at all."""

StopReason = Literal["max_items", "list_exhausted", "gave_up"]
"""Why a run that did not fail stopped: enough items, nothing left, or (`give_up_after`) more
items skipped than it was allowed."""


@dataclass(frozen=True)
class RunFailure:
    """Why a run stopped before its end; the items saved until then stay in the outcome."""

    kind: FailureKind
    message: str


@dataclass(frozen=True)
class RunOutcome:
    """What one run of a recipe gave, and how it stopped (`failure` None: it did not fail)."""

    items: list[dict[str, Any]] = field(default_factory=list)
    """Every saved record, in order."""
    stopped_reason: StopReason | None = None
    """None when the run failed."""
    failure: RunFailure | None = None
    failed: int = 0
    """Items skipped after a soft failure."""
    skipped: list[str] = field(default_factory=list)
    """Every soft failure, each also a warning Log: why an item was skipped, or its details
    did not close."""
    commands: int = 0
    """Commands executed."""
    pages: int = 1
    """The page of the list reached (1, then one more per next-page click)."""
    most_shown: int = 0
    """The most list items a wait for the list saw at once."""
    end_reached: bool = False
    """Whether an END command ran (a probe recipe's END marks the item it reached)."""

    @property
    def ok(self) -> bool:
        return self.failure is None
