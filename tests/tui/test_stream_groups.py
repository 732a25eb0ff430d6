"""Grouping a timeline into the stream pane's cards: a phase with its probes, one card per
list item, info logs folded in, warnings apart; incremental as the timeline grows."""

from __future__ import annotations

from tui_agent.events import Log, PhaseStarted, SessionStarted, ToolCall, ToolResult
from tui_agent.session import SessionState, fold
from tui_agent.tui.stream_groups import CallGroup, StreamGroups
from tui_agent.tui.widgets.group_card import folded_content


def call(call_id: str, name: str, item: int | None = None) -> list[ToolCall | ToolResult]:
    return [
        ToolCall(call_id=call_id, name=name, item=item),
        ToolResult(call_id=call_id, name=name, output=f"{name} done", duration=0.1),
    ]


def state_of(*events: object) -> SessionState:
    return fold([SessionStarted(kind="scrape", title="t"), *events])  # type: ignore[list-item]


def test_probes_fold_under_their_phase_and_items_get_a_card_each() -> None:
    state = state_of(
        PhaseStarted(phase="plan"),
        *call("p1", "find_lists"),
        Log(message="24 items"),
        *call("p2", "probe_click"),
        Log(level="warning", message="no next page"),
        PhaseStarted(phase="list"),
        *call("c1", "WAIT_FOR"),
        *call("i1a", "EXTRACT_DETAILS", item=1),
        *call("i1b", "SAVE", item=1),
        *call("i2a", "EXTRACT_DETAILS", item=2),
        *call("c2", "CLICK"),
    )
    entries = StreamGroups().entries(state)
    kinds = [
        (e.phase_name, e.item, len(e.entries), e.phase is not None)
        if isinstance(e, CallGroup)
        else type(e).__name__
        for e in entries
    ]
    assert kinds == [
        ("plan", 0, 3, True),  # two probes and the log between them
        "Log",  # a warning stays a card of its own
        ("list", 0, 1, True),
        ("list", 1, 2, False),
        ("list", 2, 1, False),
        ("list", 0, 1, False),  # the next page's click, after the items
    ]


def test_calls_outside_a_phase_stay_one_card_each_and_growth_is_incremental() -> None:
    groups = StreamGroups()
    state = state_of(*call("a", "search"), *call("b", "search"))
    first = groups.entries(state)
    assert [e.single for e in first] == [True, True]  # type: ignore[union-attr]
    state.apply(PhaseStarted(phase="plan"))
    again = groups.entries(state)
    assert again is first and len(again) == 3  # the same list, extended
    assert len(groups.entries(state_of())) == 0  # another state is grouped afresh


def test_a_phase_going_on_after_its_items_shows_the_call_it_went_on_with() -> None:
    state = state_of(
        PhaseStarted(phase="list"),
        *call("i1", "SAVE", item=1),
        *call("c2", "CLICK_IF_EXISTS"),
        *call("c3", "WAIT_FOR"),
        *call("c4", "FOR_EACH_ITEM_IN_LIST"),
    )
    *_, page_turn = StreamGroups().entries(state)
    assert isinstance(page_turn, CallGroup) and page_turn.phase is None
    lines = folded_content(page_turn).plain.splitlines()
    assert lines[0].startswith("▸ list (cont.) · 3 commands")
    assert "CLICK_IF_EXISTS" in lines[1] and "FOR_EACH_ITEM_IN_LIST" in lines[2]
    assert len(lines) == 3
