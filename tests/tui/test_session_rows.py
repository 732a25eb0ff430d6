"""The home list's rows: a batch's item sessions under it (in item order, once expanded),
with its counts and sums; a filter lists a batch with the items it keeps."""

from __future__ import annotations

from batch_factory import RECIPE_ITEMS, batch_sessions
from session_factory import T0, fixed_sessions

from tui_agent.batch.plan import child_id
from tui_agent.batch.state import BatchState
from tui_agent.session import SessionSummary, fold
from tui_agent.tui.session_rows import BatchCounts, session_rows

BATCH = "ba7c40000001"


def listed() -> tuple[list[SessionSummary], dict[str, BatchState]]:
    """The store's list (newest first): the fixed sessions, the batch and its stored items."""
    recorded = [*fixed_sessions(), *batch_sessions(BATCH, RECIPE_ITEMS, start=T0 + 9000)]
    states = [fold(events) for events in recorded]
    summaries = sorted((s.summary() for s in states), key=lambda s: -s.started_at)
    batches = {s.session_id: s.batch for s in states if s.batch is not None}
    return summaries, batches


def test_items_are_listed_under_their_batch_only_once_it_is_expanded() -> None:
    summaries, batches = listed()
    rows = session_rows(summaries, batches, expanded=set())
    assert len(rows) == 4
    [batch] = [row for row in rows if row.counts is not None]
    assert batch.counts == BatchCounts(total=6, done=6, failed=2, running=0)
    assert batch.summary.item_count == 5  # its items' items, added up
    rows = session_rows(summaries, batches, expanded={BATCH})
    assert rows[0].summary.session_id == BATCH and rows[0].expanded
    under = [row for row in rows if row.under == BATCH]
    assert [row.summary.session_id for row in under] == [
        child_id(BATCH, n) for n in (0, 1, 3, 4, 5)
    ]
    assert [row.number for row in under] == [1, 2, 4, 5, 6]
    assert [row.last for row in under] == [False] * 4 + [True]
    assert rows[1:6] == under


def test_a_filter_lists_a_batch_with_the_items_it_keeps() -> None:
    summaries, batches = listed()
    rows = session_rows(summaries, batches, set(), keep=lambda s: s.status == "failed")
    shown = [(row.summary.kind, row.under is not None) for row in rows]
    assert shown == [("batch", False), ("scrape", True), ("scrape", False)]
    assert rows[0].expanded and rows[1].summary.session_id == child_id(BATCH, 4)


def test_an_item_whose_batch_is_gone_is_listed_on_its_own() -> None:
    summaries, _ = listed()
    rest = [s for s in summaries if s.session_id != BATCH]
    rows = session_rows(rest, {}, set())
    assert len(rows) == len(rest) and all(row.under is None for row in rows)
