"""The rows of the home list: sessions newest first, each batch's items under their batch.

A batch's item sessions are not listed on their own: the batch's row carries their counts and
sums (items, tokens, cost), and its items are listed under it, in item order, once it is
expanded. A filter lists a batch whose items match with those items under it. An item whose
batch is not stored (deleted) is listed on its own.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from tui_agent.batch.state import BatchState
from tui_agent.session import SessionSummary


@dataclass(frozen=True)
class BatchCounts:
    """How far a batch got, for its row."""

    total: int
    done: int
    failed: int
    running: int

    @classmethod
    def of(cls, batch: BatchState) -> BatchCounts:
        return cls(batch.total, batch.done, len(batch.failures), batch.count("started"))


@dataclass(frozen=True)
class Row:
    """One row: a session; a batch's with its counts and whether its items are shown; an
    item's with the batch it is under and what it is (its label)."""

    summary: SessionSummary
    counts: BatchCounts | None = None
    expanded: bool = False
    under: str | None = None
    """The batch this row is listed under (None: a row of its own)."""
    number: int = 0
    """An item's place in its batch, from 1 (0: unknown)."""
    label: str = ""
    last: bool = False
    """The last item listed under its batch."""


def session_rows(
    summaries: list[SessionSummary],
    batches: Mapping[str, BatchState],
    expanded: Collection[str],
    keep: Callable[[SessionSummary], bool] | None = None,
) -> list[Row]:
    """The rows of `summaries` (newest first): `batches` holds each batch's state, `expanded`
    the batches whose items are listed; `keep` (a filter) lists only the sessions it keeps,
    and every batch with an item it keeps, expanded to those items."""
    items: dict[str, list[SessionSummary]] = {}
    for summary in summaries:
        if summary.batch is not None and summary.batch in batches:
            items.setdefault(summary.batch, []).append(summary)
    rows: list[Row] = []
    for summary in summaries:
        if summary.batch is not None and summary.batch in batches:
            continue
        state = batches.get(summary.session_id)
        if state is None:
            if keep is None or keep(summary):
                rows.append(Row(summary))
            continue
        mine = _in_item_order(items.get(summary.session_id, []), state)
        shown = [s for s in mine if keep(s)] if keep is not None else mine
        if keep is not None and not shown and not keep(summary):
            continue
        if keep is None and summary.session_id not in expanded:
            shown = []
        rows.append(Row(_with_sums(summary, mine), BatchCounts.of(state), bool(shown)))
        places = {item.child: (item.item + 1, item.label) for item in state.items.values()}
        for n, item in enumerate(shown, start=1):
            number, label = places.get(item.session_id, (0, ""))
            last = n == len(shown)
            rows.append(Row(item, under=summary.session_id, number=number, label=label, last=last))
    return rows


def _in_item_order(items: list[SessionSummary], state: BatchState) -> list[SessionSummary]:
    order = {item.child: item.item for item in state.items.values()}
    return sorted(items, key=lambda s: (order.get(s.session_id, len(order)), s.started_at))


def _with_sums(batch: SessionSummary, items: list[SessionSummary]) -> SessionSummary:
    """The batch's summary with its items' items, tokens and cost added up."""
    if not items:
        return batch
    costs = [item.cost for item in items if item.cost is not None]
    return batch.model_copy(
        update={
            "item_count": sum(item.item_count for item in items),
            "prompt_tokens": sum(item.prompt_tokens for item in items),
            "completion_tokens": sum(item.completion_tokens for item in items),
            "cost": sum(costs) if costs else None,
            "cost_complete": all(item.cost_complete for item in items),
        }
    )
