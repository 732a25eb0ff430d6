"""Batches for the TUI tests, as the runner records them but at fixed times: the batch session
(its first event made by the runner's own `batch_started`, then BatchQueued and BatchItem
events) and a stored child session per item that ended with one (ids from `child_id`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from session_factory import T0

from tui_agent.batch.engines import LocalEngine
from tui_agent.batch.plan import BatchPlan, PlanItem, child_id
from tui_agent.batch.runner import BatchOptions, batch_started
from tui_agent.events import (
    BatchEntry,
    BatchItem,
    BatchOrigin,
    BatchQueued,
    Event,
    ItemsExtracted,
    LLMCall,
    PhaseFinished,
    PhaseStarted,
    SessionEnded,
    SessionStarted,
)
from tui_agent.web.recipe import load_recipe

SITE = "http://127.0.0.1:8765"
RECIPE = Path(__file__).resolve().parents[2] / "recipes" / "demo-panel.json"


@dataclass(frozen=True)
class Outcome:
    """How one item got on: its state (queued, started, finished, failed), the child's status,
    its line, its seconds, an eval check's verdict; `stored`: its session is in the store."""

    state: str = "finished"
    status: str = "completed"
    line: str = ""
    seconds: float = 4.0
    passed: bool | None = None

    @property
    def stored(self) -> bool:
        return self.state in ("finished", "failed") and self.status not in ("refused", "lost")


RECIPE_ITEMS = [
    (f"{SITE}/panel", Outcome(seconds=4.2)),
    (f"{SITE}/panel?page=2", Outcome(seconds=3.9)),
    (
        "http://127.0.0.1:9/missing",
        Outcome("failed", "refused", "url: cannot reach http://127.0.0.1:9/missing", 0.3),
    ),
    (f"{SITE}/panel?page=3", Outcome(seconds=4.6)),
    (
        f"{SITE}/panel?page=4",
        Outcome("failed", "failed", "TimeoutError: #details-panel never showed", 15.2),
    ),
    (f"{SITE}/panel?page=5", Outcome(seconds=4.1)),
]
EVAL_ITEMS = [
    ("HumanEval/0", Outcome(seconds=12.5, passed=True)),
    ("HumanEval/1", Outcome(seconds=20.1, passed=False, line="AssertionError: check failed")),
    ("HumanEval/2", Outcome(seconds=9.8, passed=True)),
]


def plan_of(of: str, labels: list[str]) -> BatchPlan:
    base: dict[str, Any]
    if of == "eval":
        base = {"kind": "code", "task": "(each line's task)", "model": "gpt-4o-mini"}
        items = [PlanItem(label=label, sets={"task": label}) for label in labels]
        return BatchPlan(of="eval", base=base, items=items, source="tasks.jsonl")
    base = {"kind": "recipe", "recipe": load_recipe(RECIPE).to_json(), "url": labels[0]}
    items = [PlanItem(label=label, sets={"url": label}) for label in labels]
    return BatchPlan(of="recipe", base=base, items=items, source="urls.txt")


def batch_sessions(
    batch_id: str,
    items: list[tuple[str, Outcome]],
    *,
    of: str = "recipe",
    ended: bool = True,
    start: float = T0,
) -> list[list[Event]]:
    """The batch session's events, then each stored child session's, all at fixed times: items
    start two at a time, one second apart, and end `seconds` later."""
    plan = plan_of(of, [label for label, _ in items])
    started = batch_started(plan, LocalEngine(4), BatchOptions())
    entries = [
        BatchEntry(item=i, label=label, child=child_id(batch_id, i))
        for i, (label, _) in enumerate(items)
    ]
    timed: list[tuple[float, Event]] = [
        (start, started),
        (start + 0.1, BatchQueued(entries=entries, total=len(entries))),
    ]
    children: list[list[Event]] = []
    for i, (label, outcome) in enumerate(items):
        if outcome.state == "queued":
            continue
        child = child_id(batch_id, i)
        began = start + 1 + i // 2
        timed.append((began, BatchItem(item=i, state="started", child=child)))
        if outcome.state == "started":
            continue
        finished = BatchItem(
            item=i,
            state=outcome.state,  # type: ignore[arg-type]
            child=child if outcome.stored else "",
            status=outcome.status,
            line=outcome.line,
            seconds=outcome.seconds,
            worker="host:1",
            passed=outcome.passed,
        )
        timed.append((began + outcome.seconds, finished))
        if outcome.stored:
            children.append(child_session(batch_id, i, label, outcome, of, began))
    last = max(ts for ts, _ in timed)
    if ended:
        failed = sum(1 for _, o in items if o.state == "failed")
        end = SessionEnded(
            status="partial" if failed else "completed",
            summary=f"{len(items)} of {len(items)} items done, {failed} failed",
        )
        timed.append((last + 0.1, end))
    timed.sort(key=lambda pair: pair[0])
    batch = [
        event.model_copy(update={"session_id": batch_id, "seq": n, "ts": ts})
        for n, (ts, event) in enumerate(timed, start=1)
    ]
    return [batch, *children]


def child_session(
    batch_id: str, index: int, label: str, outcome: Outcome, of: str, began: float
) -> list[Event]:
    """An item's own session: a recipe run (a few items) or a CodeAct answer."""
    origin = BatchOrigin(session_id=batch_id, item=index)
    if of == "eval":
        first = SessionStarted(kind="code", title=f"Complete {label}", batch=origin)
        body: list[Event] = [
            LLMCall(model="gpt-4o-mini", prompt_tokens=900, completion_tokens=120, cost=0.0006)
        ]
    else:
        first = SessionStarted(
            kind="scrape", title="recipe Demo Market: products from the side panel", batch=origin
        )
        body = [
            PhaseStarted(phase="list", detail=label),
            ItemsExtracted(items=[{"title": f"Oak desk {index}", "price": "$10.00"}]),
            PhaseFinished(phase="list", duration=outcome.seconds - 0.5, summary="1 item"),
        ]
    end = SessionEnded(
        status=outcome.status,  # type: ignore[arg-type]
        stopped_reason=outcome.line or None,
    )
    events = [first, *body, end]
    step = outcome.seconds / len(events)
    return [
        event.model_copy(
            update={"session_id": child_id(batch_id, index), "seq": n + 1, "ts": began + n * step}
        )
        for n, event in enumerate(events)
    ]
