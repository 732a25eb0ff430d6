"""Continuing a session that ended, or forking one: the history from its stored events, the
sandbox's state rebuilt by running its successful code again, in order, in a fresh sandbox.

A `Continuation` says what to continue from (the stored events; a fork's stop at its step),
whether to restore the state or start clean, and who decides when restoring meets a run that
is flagged (it ran with the network, or may write outside the workspace) or one that fails
(`RestoreChoices`). Nothing recorded before changes: the continued session appends a
SessionResumed, a StateRestoreRun per run and a StateRestored, then goes on.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from tui_agent.events import (
    CodeProposed,
    Event,
    ExecutionFinished,
    ModelChanged,
    SessionResumed,
    SessionStarted,
    StateRestored,
    StateRestoreRun,
    TurnEnded,
    UserMessage,
)
from tui_agent.sandbox.wire import ExecuteResult

FailureChoice = Literal["skip", "clean", "cancel"]
"""After a run fails while restoring: go on without it, start clean, or cancel."""
Restore = Literal["state", "clean"]

_OUTSIDE_PATH = re.compile(r"""["'](/(?!workspace\b)[^"'\s]*|~[^"'\s]*)["']""")
"""A quoted absolute path outside /workspace (or one under ~): code that may write there."""


@dataclass(frozen=True)
class RestoreRun:
    """A run to do again: the code of step `step`, and why it is flagged ("" when not)."""

    step: int
    code: str
    flag: str = ""


class RestoreChoices(Protocol):
    """Who decides while restoring: whether flagged runs run again, and what follows a run
    that fails."""

    async def run_flagged(self, runs: Sequence[RestoreRun]) -> bool: ...

    async def after_failure(self, run: RestoreRun, error: str) -> FailureChoice: ...


@dataclass(frozen=True)
class FixedChoices:
    """Choices made in advance (command-line flags)."""

    flagged: bool = False
    on_failure: FailureChoice = "cancel"

    async def run_flagged(self, runs: Sequence[RestoreRun]) -> bool:
        return self.flagged

    async def after_failure(self, run: RestoreRun, error: str) -> FailureChoice:
        return self.on_failure


@dataclass(frozen=True)
class Continuation:
    """What a session continues from: its stored `events` (a fork's, up to `at_step`), the
    message opening the next turn (None: wait for one), how the state comes back."""

    events: Sequence[Event]
    message: str | None = None
    restore: Restore = "state"
    choices: RestoreChoices = field(default_factory=FixedChoices)
    fork: bool = False
    """The events are another session's: the fork records them again, before it goes on."""


@dataclass
class RestoreOutcome:
    """How restoring ended: `cancelled` when the user chose to cancel."""

    cancelled: bool = False


def fork_events(events: Sequence[Event], at_step: int) -> list[Event]:
    """The events of a session up to the end of step `at_step` (the steps after it, and the
    session's end, left out)."""
    kept: list[Event] = []
    for event in events:
        step = getattr(event, "step", None)
        if isinstance(step, int) and step > at_step:
            break
        if isinstance(event, UserMessage | TurnEnded) and kept and last_step(kept) >= at_step:
            break
        kept.append(event)
    return [e for e in kept if e.type != "session_ended"]


def last_step(events: Sequence[Event]) -> int:
    return max((s for e in events if isinstance(s := getattr(e, "step", None), int)), default=0)


def last_turn(events: Sequence[Event]) -> int:
    """The turn the stored events ended in (1: the task's)."""
    turns = [e.turn for e in events if isinstance(e, UserMessage)]
    return max(turns, default=1)


def last_model(events: Sequence[Event]) -> str | None:
    """The model the stored events last used."""
    model = None
    for event in events:
        if isinstance(event, SessionStarted | ModelChanged):
            model = event.model
    return model


def successful_runs(events: Sequence[Event], network: bool) -> list[RestoreRun]:
    """The code that ran successfully, in order (the code that ran: an edit's, not the
    proposal's), each flagged when running it again may reach beyond the sandbox."""
    code: dict[int, str] = {}
    runs: list[RestoreRun] = []
    for event in events:
        if isinstance(event, CodeProposed):
            code[event.step] = event.code
        elif isinstance(event, ExecutionFinished) and event.success and event.step in code:
            ran = code[event.step]
            runs.append(RestoreRun(event.step, ran, flag_of(ran, network)))
    return runs


def flag_of(code: str, network: bool) -> str:
    """Why running `code` again should be asked first ("" when it need not be)."""
    if network:
        return "it ran with the network on"
    outside = _OUTSIDE_PATH.search(code)
    if outside:
        return f"it may write outside the workspace ({outside.group(1)})"
    return ""


async def restore_state(
    runs: Sequence[RestoreRun],
    choices: RestoreChoices,
    execute: Callable[[RestoreRun], Awaitable[ExecuteResult]],
    clean: Callable[[], Awaitable[None]],
    outcome: RestoreOutcome,
) -> AsyncGenerator[Event, None]:
    """Run `runs` again through `execute`, with a StateRestoreRun each and a StateRestored at
    the end; flagged runs only when `choices` says so; after a failure, what it says (`clean`
    makes the sandbox fresh again). `outcome.cancelled` when the user cancelled."""
    began = time.monotonic()
    flagged = [run for run in runs if run.flag]
    with_flagged = bool(flagged) and await choices.run_flagged(flagged)
    skipped = [run.step for run in flagged] if not with_flagged else []
    todo = [run for run in runs if run.step not in skipped]
    failed: list[int] = []
    ran = 0
    for done, run in enumerate(todo, start=1):
        run_began = time.monotonic()
        result = await execute(run)
        ran += 1
        error = _error_of(result)
        yield StateRestoreRun(
            step=run.step,
            done=done,
            total=len(todo),
            ok=result.success,
            error=error,
            duration=time.monotonic() - run_began,
        )
        if result.success:
            continue
        choice = await choices.after_failure(run, error)
        if choice == "skip":
            failed.append(run.step)
            continue
        if choice == "clean":
            await clean()
            yield StateRestored(
                ran=ran,
                total=len(todo),
                failed=[*failed, run.step],
                skipped=skipped,
                clean=True,
                duration=time.monotonic() - began,
            )
            return
        outcome.cancelled = True
        yield StateRestored(
            ran=ran,
            total=len(todo),
            failed=[*failed, run.step],
            skipped=skipped,
            duration=time.monotonic() - began,
        )
        return
    yield StateRestored(
        ran=ran,
        total=len(todo),
        failed=failed,
        skipped=skipped,
        duration=time.monotonic() - began,
    )


def resumed_event(continuation: Continuation, runs: Sequence[RestoreRun]) -> SessionResumed:
    """The SessionResumed a continuation starts with."""
    return SessionResumed(
        restore=continuation.restore,
        runs=len(runs) if continuation.restore == "state" else 0,
        flagged=[run.step for run in runs if run.flag] if continuation.restore == "state" else [],
    )


def _error_of(result: ExecuteResult) -> str:
    if result.success:
        return ""
    if result.error is not None:
        return f"{result.error.type}: {result.error.message}"
    return result.killed_reason or "the run failed"
