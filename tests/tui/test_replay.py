"""The replay controller: positions, incremental apply vs. re-fold, the scaled clock."""

from __future__ import annotations

import pytest

from tui_agent.events import (
    CodeProposed,
    Event,
    ExecutionFinished,
    SessionEnded,
    SessionStarted,
    Thought,
    ThoughtDelta,
)
from tui_agent.session import fold
from tui_agent.terminal_text import visible_event
from tui_agent.tui.replay import MAX_GAP, SPEEDS, Replay


def stamped(events: list[Event], times: list[float]) -> list[Event]:
    return [
        e.model_copy(update={"session_id": "abc123abc123", "seq": i, "ts": ts})
        for i, (e, ts) in enumerate(zip(events, times, strict=True), start=1)
    ]


@pytest.fixture
def events() -> list[Event]:
    return stamped(
        [
            SessionStarted(kind="exec", title="demo"),
            ThoughtDelta(step=1, text="Let me "),
            ThoughtDelta(step=1, text="compute."),
            Thought(step=1, text="Let me compute."),
            CodeProposed(step=1, code="print(1)"),
            ExecutionFinished(step=1, success=True, result=1),
            SessionEnded(status="completed"),
        ],
        [100.0, 100.01, 100.02, 100.5, 101.5, 111.5, 112.0],
    )


def test_state_always_equals_fold_of_prefix(events: list[Event]) -> None:
    replay = Replay(events)
    path = [3, 5, 2, 7, 0, 4, 6, 1]
    for position in path:
        replay.seek(position)
        assert replay.position == position
        assert replay.state == fold(events[:position])


def test_forward_applies_only_new_events_and_back_refolds(events: list[Event]) -> None:
    replay = Replay(events)
    state = replay.state
    move = replay.forward(3)
    assert move.applied == events[:3] and not move.refolded
    assert replay.state is state  # applied in place, not folded anew
    move = replay.forward()
    assert move.applied == [events[3]]
    move = replay.back()
    assert move.refolded and move.applied == []
    assert replay.state is not state
    assert replay.state.steps[1].thought == "Let me compute."
    assert not replay.state.steps[1].thought_complete


def test_seek_clamps_and_reports_no_change(events: list[Event]) -> None:
    replay = Replay(events)
    assert replay.end().applied == events
    assert replay.at_end and replay.indicator == "event 7/7 · 1x"
    assert not replay.forward().changed
    replay.home()
    assert replay.position == 0 and not replay.back().changed
    assert replay.seek(99).applied == events


def test_speeds_step_and_stop_at_the_ends(events: list[Event]) -> None:
    replay = Replay(events)
    assert replay.faster() == 2.0
    assert replay.indicator == "event 0/7 · 2x"
    for _ in SPEEDS:
        replay.faster()
    assert replay.speed == SPEEDS[-1]
    for _ in SPEEDS:
        replay.slower()
    assert replay.speed == SPEEDS[0]
    assert replay.indicator == "event 0/7 · 0.25x"
    with pytest.raises(ValueError, match="speed must be one of"):
        Replay(events, speed=3.0)


def test_delay_is_the_recorded_gap_capped_and_scaled(events: list[Event]) -> None:
    replay = Replay(events)
    assert replay.delay() == 0.0  # the first event comes at once
    replay.seek(4)
    assert replay.delay() == pytest.approx(1.0)  # Thought -> CodeProposed: 1 s
    replay.seek(5)
    assert replay.delay() == MAX_GAP  # a 10 s pause is cut to the cap
    replay.faster()
    assert replay.delay() == MAX_GAP / 2
    replay.end()
    assert replay.delay() is None


def test_advance_batches_events_due_within_a_frame(events: list[Event]) -> None:
    replay = Replay(events)
    move = replay.advance(frame=0.05)
    # SessionStarted and both deltas (10 ms apart) fall in one frame; the Thought is 480 ms later.
    assert move.applied == events[:3]
    assert replay.advance(frame=0.05).applied == [events[3]]
    replay.end()
    assert not replay.advance(frame=0.05).changed


def test_the_state_is_folded_from_the_events_it_is_given(events: list[Event]) -> None:
    shown = [
        visible_event(events[0].model_copy(update={"title": "demo\x1b]0;owned\x07"})),
        visible_event(events[1].model_copy(update={"text": "Let me \x1b[2J"})),
        *events[2:],
    ]
    replay = Replay(shown)
    assert replay.first is shown[0]
    assert replay.session_id == "abc123abc123"
    replay.seek(3)
    assert replay.state == fold(shown[:3])
    assert replay.state.steps[1].thought == "Let me ␛[2J" + "compute."
    replay.back()  # re-folded from the same events
    assert replay.state.title == "demo␛]0;owned␇"


def test_an_empty_replay_has_no_first_event() -> None:
    replay = Replay([])
    assert replay.first is None and replay.session_id == "" and replay.at_end
