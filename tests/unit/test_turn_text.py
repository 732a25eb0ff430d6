"""The words of conversation events, in the headless printer (and the TUI's cards)."""

from __future__ import annotations

from rich.console import Console

from tui_agent.events import (
    ForkOrigin,
    HistoryFitted,
    ModelChanged,
    SessionResumed,
    SessionStarted,
    StateRestored,
    StateRestoreRun,
    TurnEnded,
    UserMessage,
)
from tui_agent.printer import render_event


def printed(event) -> str:
    console = Console(width=200, record=True, color_system=None)
    rendered = render_event(event)
    assert rendered is not None
    console.print(rendered)
    return console.export_text().strip()


def test_each_conversation_event_prints_one_plain_line():
    cases = [
        (UserMessage(turn=2, text="and x?"), "you (turn 2): and x?"),
        (UserMessage(turn=2, text="in French", queued=True), "you (sent while the agent worked)"),
        (
            TurnEnded(turn=1, status="stopped", stopped_reason="interrupted"),
            "turn 1 stopped (interrupted): waiting for you",
        ),
        (
            ModelChanged(model="openai/b", previous="openai/a"),
            "model: openai/b from now on (was openai/a)",
        ),
        (
            SessionResumed(restore="state", runs=3, flagged=[2]),
            "running 3 runs again; flagged, asked first: step 2",
        ),
        (SessionResumed(restore="clean"), "continued in a clean sandbox"),
        (
            StateRestoreRun(step=4, done=2, total=3, ok=False, error="NameError: y"),
            "restoring state: 2 of 3 runs (step 4) failed: NameError: y",
        ),
        (
            StateRestored(ran=3, total=3, failed=[4], skipped=[2], duration=1.25),
            "state restored: 2 of 3 runs; failed and left out: step 4; "
            "not run again (flagged): step 2 (1.2 s)",
        ),
        (
            StateRestored(ran=1, total=3, failed=[1], clean=True),
            "started clean after step 1 failed",
        ),
        (
            HistoryFitted(
                step=5, before=41200, after=7900, limit=8192, shortened=12, summarised=18
            ),
            "41,200 -> 7,900 (12 older outputs shortened, 18 messages summarised)",
        ),
        (
            SessionStarted(kind="code", title="t", parent=ForkOrigin(session_id="abc", at_step=3)),
            "fork of abc at step 3",
        ),
    ]
    for event, words in cases:
        assert words in printed(event), (event, printed(event))


def test_a_message_with_a_control_sequence_prints_it_drawn_not_sent():
    line = printed(UserMessage(turn=2, text="hi\x1b[2Jthere"))
    assert "\x1b" not in line and "␛[2J" in line
