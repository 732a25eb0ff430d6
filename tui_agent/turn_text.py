"""One line of words for each conversation event (turns, model switches, continuing a
session, restoring its state, fitting its history): what the headless printer prints and the
TUI's cards say."""

from __future__ import annotations

from tui_agent.events import (
    HistoryFitted,
    ModelChanged,
    SessionResumed,
    StateRestored,
    StateRestoreRun,
    TurnEnded,
    UserMessage,
)


def user_message_line(event: UserMessage) -> str:
    when = "sent while the agent worked" if event.queued else f"turn {event.turn}"
    return f"you ({when}): {event.text}"


def turn_ended_line(event: TurnEnded) -> str:
    reason = f" ({event.stopped_reason})" if event.stopped_reason else ""
    return f"turn {event.turn} {event.status}{reason}: waiting for you"


def model_changed_line(event: ModelChanged) -> str:
    was = f" (was {event.previous})" if event.previous else ""
    return f"model: {event.model} from now on{was}"


def resumed_line(event: SessionResumed) -> str:
    if event.restore == "clean":
        return "continued in a clean sandbox (the state was not restored)"
    runs = "run" if event.runs == 1 else "runs"
    flagged = (
        f"; flagged, asked first: step{'s' if len(event.flagged) > 1 else ''} "
        + ", ".join(map(str, event.flagged))
        if event.flagged
        else ""
    )
    return f"continued: restoring the state by running {event.runs} {runs} again{flagged}"


def restore_run_line(event: StateRestoreRun) -> str:
    done = f"restoring state: {event.done} of {event.total} runs (step {event.step})"
    return done if event.ok else f"{done} failed: {event.error}"


def restored_line(event: StateRestored) -> str:
    if event.clean:
        return f"state: started clean after step {event.failed[-1]} failed while restoring"
    parts = [f"state restored: {event.ran - len(event.failed)} of {event.total} runs"]
    if event.failed:
        parts.append("failed and left out: step " + ", ".join(map(str, event.failed)))
    if event.skipped:
        parts.append("not run again (flagged): step " + ", ".join(map(str, event.skipped)))
    return "; ".join(parts) + f" ({event.duration:.1f} s)"


def fitted_line(event: HistoryFitted) -> str:
    done = [
        f"{count} {what}"
        for count, what in (
            (event.shortened, "older outputs shortened"),
            (event.summarised, "messages summarised"),
            (event.dropped, "messages left out"),
        )
        if count
    ]
    return (
        f"history fitted into {event.limit:,} tokens: {event.before:,} -> {event.after:,} "
        f"({', '.join(done) or 'nothing to cut'})"
    )
