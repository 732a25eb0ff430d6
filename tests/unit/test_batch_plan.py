"""Batch plans, item ids, the batch fold and --engine, without running anything."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypeVar

import pytest

from tui_agent.agents.requests import RecipeRunRequest, TaskRequest
from tui_agent.batch.engines import DaskEngine, EngineError, LocalEngine, engine_for
from tui_agent.batch.plan import BatchPlan, PlanError, child_id, recipe_plan, row_plan
from tui_agent.events import (
    BatchEntry,
    BatchItem,
    BatchQueued,
    Event,
    SessionEnded,
    SessionStarted,
)
from tui_agent.session import fold

E = TypeVar("E", bound=Event)

RECIPE = json.loads((Path(__file__).parents[2] / "recipes" / "demo-pagination.json").read_text())


def task(**context: object) -> TaskRequest:
    return TaskRequest(task="Double n", context=dict(context))


def test_an_items_id_is_derived_from_its_batch_and_index_alone() -> None:
    assert child_id("b1", 3) == child_id("b1", 3)
    ids = {child_id("b1", i) for i in range(1000)} | {child_id("b2", i) for i in range(1000)}
    assert len(ids) == 2000 and all(len(i) == 12 for i in ids)


def test_csv_rows_are_read_with_numbers_as_numbers(tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text("n,name,price\n1,a,2.5\n\n2,b,x\n")
    plan = row_plan("task", task(source="csv"), rows)
    contexts = [item.sets["context"] for item in plan.items]
    assert contexts == [
        {"source": "csv", "n": 1, "name": "a", "price": 2.5},
        {"source": "csv", "n": 2, "name": "b", "price": "x"},
    ]
    assert plan.request(1).context["n"] == 2  # type: ignore[attr-defined]


def test_rows_of_one_schema_share_a_shape_and_other_schemas_do_not(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"n": 1}\n{"n": 2}\n{"n": 2.5}\n{"n": 1, "m": 1}\n')
    plan = row_plan("task", task(), rows)
    shapes = [plan.shape(i) for i in range(4)]
    assert shapes[0] == shapes[1] and len(set(shapes)) == 3
    uncached = row_plan("task", task().model_copy(update={"use_cache": False}), rows)
    assert uncached.shape(0) is None


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("{}\n[1]\n", "rows.jsonl line 2: a row must be a JSON object"),
        ('{"n": 1}\n{oops\n', "rows.jsonl line 2: not JSON"),
        ("# nothing\n\n", "holds no items"),
    ],
)
def test_a_bad_row_names_its_line(tmp_path: Path, text: str, said: str) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text(text)
    with pytest.raises(PlanError, match=said):
        row_plan("task", task(), rows)


def test_a_recipe_plan_checks_every_url_and_groups_them_by_host(tmp_path: Path) -> None:
    urls = tmp_path / "urls.txt"
    urls.write_text("http://127.0.0.1:1/a\n# skipped\nhttp://localhost:2/b\n")
    base = RecipeRunRequest(recipe=RECIPE, url="http://127.0.0.1:1/a")
    plan = recipe_plan(base, urls)
    assert [item.label for item in plan.items] == ["http://127.0.0.1:1/a", "http://localhost:2/b"]
    assert [plan.host(0), plan.host(1)] == ["127.0.0.1", "localhost"]
    again = BatchPlan.model_validate(json.loads(plan.model_dump_json()))
    assert again.request(1) == plan.request(1)  # stored and read back: the same requests
    urls.write_text("http://127.0.0.1:1/a\nnot a url\n")
    with pytest.raises(PlanError, match=r"urls\.txt line 2"):
        recipe_plan(base, urls)


def at(ts: float, event: E) -> E:
    """`event` of batch session "b", recorded at `ts`."""
    return event.model_copy(update={"session_id": "b", "ts": ts})


def test_the_fold_counts_items_rate_and_a_resume_running_again() -> None:
    entries = [BatchEntry(item=i, label=f"u{i}", child=child_id("b", i)) for i in range(4)]
    events = [
        at(0, SessionStarted(kind="batch", title="batch")),
        at(0, BatchQueued(entries=entries, total=4)),
        at(1, BatchItem(item=0, state="started", child=entries[0].child)),
        at(1, BatchItem(item=1, state="started", child=entries[1].child)),
        at(3, BatchItem(item=0, state="finished", child=entries[0].child, status="completed")),
        at(5, BatchItem(item=1, state="failed", status="lost", line="it took down 3 workers")),
        at(6, SessionEnded(status="cancelled")),
    ]
    state = fold(events)
    batch = state.batch
    assert batch is not None and state.status == "cancelled"
    assert (batch.done, batch.total, [f.label for f in batch.failures]) == (2, 4, ["u1"])
    assert batch.rate == pytest.approx(0.5) and batch.eta() == pytest.approx(4.0)
    assert batch.items[0].stored and not batch.items[1].stored
    resumed = fold([*events, at(9, BatchQueued(entries=entries[2:], total=4))])
    assert resumed.status == "running" and resumed.batch is not None
    assert resumed.batch.items[2].state == "queued" and resumed.batch.done == 2


def test_a_batch_done_in_under_a_second_has_its_rate() -> None:
    entries = [BatchEntry(item=i, label=f"u{i}", child=child_id("b", i)) for i in range(2)]
    events = [
        at(0, SessionStarted(kind="batch", title="batch")),
        at(0, BatchQueued(entries=entries, total=2)),
        at(0.1, BatchItem(item=0, state="started", child=entries[0].child)),
        at(0.1, BatchItem(item=1, state="started", child=entries[1].child)),
        at(0.3, BatchItem(item=0, state="finished", child=entries[0].child, status="completed")),
    ]
    batch = fold(events).batch
    assert batch is not None and batch.rate is None  # one of two done: no rate to tell yet
    done = fold([*events, at(0.5, BatchItem(item=1, state="finished", child=entries[1].child))])
    assert done.batch is not None and done.batch.rate == pytest.approx(5.0)  # 2 in 0.4 s


def test_engine_specs() -> None:
    assert isinstance(engine_for("local"), LocalEngine) and engine_for("local").slots == 4
    assert engine_for("local:2").slots == 2
    dask = engine_for("dask-local:3")
    assert isinstance(dask, DaskEngine) and dask.workers == 3 and dask.address is None
    assert engine_for("tcp://127.0.0.1:8786").name == "tcp://127.0.0.1:8786"
    for bad in ("dask", "local:0", "http://x:1", "local:x"):
        with pytest.raises(EngineError, match="--engine"):
            engine_for(bad)
