"""Three batch features as a user runs them, each a real `tui-agent batch` process storing into
real SQLite: a workflow batch over rows (each row a child session under its derived id, the
workflow's code generated once per row shape, through the scripted model and a real sandbox);
`--per-host N` (a recipe batch on the demo shop, real Chromium: at most N items loading one
site at once); `--retries N` (an item whose session does not complete is run again N times,
then failed, while the other items finish). Every server is on 127.0.0.1."""

from __future__ import annotations

import json
import threading

import pytest
from batch_support import Cli, HeldPage, read_store, recipe_batch, write_urls
from support.requirements import require_chromium, sandbox_backend
from support.scripted_model import ScriptedModel, text

from tui_agent.batch.plan import child_id
from tui_agent.demo_site import DemoSite
from tui_agent.events import BatchItem, SessionStarted, TaskResult

MODEL = "openai/gpt-4o-mini"
CODE = "context['n2'] = context['n'] * 2\ncontext['nodes'] = context.get('nodes', 0) + 1"
EITHER = text(
    f"```python\n# STAGE: TASK\n{CODE}\n```\n" + json.dumps({"valid": True, "reason": "n doubled"})
)
"""A reply that serves as either node's code (each run changes `nodes`) and as its validator's
verdict: the first rows of two shapes run at once, so which request gets which reply is not
fixed."""
REFUSED = "http://127.0.0.1:9/x"
"""A URL whose port refuses connections (discard, never served here)."""
HOLD = 2.0
"""Seconds the first item's page is held: long enough for two other items to run meanwhile."""


def test_a_workflow_batch_runs_each_row_and_generates_once_per_shape(
    cli: Cli, server: ScriptedModel
) -> None:
    workflow = cli.folder / "wf.json"
    workflow.write_text(
        json.dumps(
            {
                "model": MODEL,
                "nodes": [
                    {"id": "double", "prompt": "Double n into n2"},
                    {"id": "count", "prompt": "Count the nodes run in `nodes`"},
                ],
            }
        )
    )
    rows = cli.folder / "rows.jsonl"
    values: list[int | float] = [7, 2, 1.5, 6.5]  # ints and floats: two shapes
    rows.write_text("".join(json.dumps({"n": n}) + "\n" for n in values))
    server.push(*[EITHER] * 8)  # per shape: two nodes, each generated and validated once
    done = cli.run(
        "batch",
        "workflow",
        str(workflow),
        "--rows",
        str(rows),
        "--api-base",
        server.api_base,
        "--sandbox",
        sandbox_backend(),
        "--engine",
        "local:4",
        "--json",
    )
    assert done.returncode == 0, done.stderr + done.stdout
    generations = [r for r in server.requests if "STAGE" in json.dumps(r.messages[0])]
    assert len(generations) == 4, f"{len(server.requests)} model calls"
    assert len(server.requests) == 8  # each generation and its output check, nothing more

    stored = read_store(cli.db)
    batch_id = stored.batch.session_id
    assert stored.batch.status == "completed"
    expected = {child_id(batch_id, i): i for i in range(len(values))}
    assert set(stored.children) == set(expected)
    for child, index in expected.items():
        assert stored.children[child].status == "completed"
        events = stored.child_events[child]
        started = events[0]
        assert isinstance(started, SessionStarted)
        assert started.title == "workflow wf.json (2 nodes)"
        assert started.batch is not None and started.batch.item == index
        results = [e for e in events if isinstance(e, TaskResult)]
        assert [r.node for r in results] == ["double", "count"]
        assert results[-1].context["n2"] == values[index] * 2
        assert results[-1].context["nodes"] == 2
    assert sorted(stored.states("finished")) == list(range(len(values)))


def _intervals(events: list[BatchItem]) -> dict[int, tuple[int, int]]:
    """Each item's (started, ended) positions in the batch's events (its one attempt)."""
    spans: dict[int, tuple[int, int]] = {}
    for e in events:
        if e.state == "started":
            spans[e.item] = (e.seq, -1)
        elif e.state in ("finished", "failed", "retrying"):
            spans[e.item] = (spans[e.item][0], e.seq)
    return spans


def _overlapping(spans: dict[int, tuple[int, int]]) -> list[tuple[int, int]]:
    return [
        (a, b)
        for a, (start_a, end_a) in spans.items()
        for b, (start_b, end_b) in spans.items()
        if a < b and start_a < end_b and start_b < end_a
    ]


@pytest.mark.parametrize("per_host", [1, None], ids=["per-host-1", "no-limit"])
def test_per_host_keeps_items_of_one_site_from_overlapping(
    cli: Cli, demo: DemoSite, per_host: int | None
) -> None:
    """Three items on one site (127.0.0.1), three slots, the first item's page held for a
    while. With --per-host 1 no two items' runs overlap, in the batch's events or in their
    sessions' own timestamps; with no limit the other two run while the first is held (the
    same check then finds overlaps: it can fail)."""
    require_chromium()
    with HeldPage(demo, page=1) as held:
        release = threading.Timer(HOLD, held.release.set)

        def let_go_later() -> None:
            """The page is let go HOLD s after it is asked for."""
            if held.arrived.wait(120):
                release.start()

        threading.Thread(target=let_go_later, daemon=True).start()
        urls, listed = write_urls(cli.folder, demo, 3, held)
        more = ["--per-host", str(per_host)] if per_host else []
        done = cli.run(*recipe_batch(urls, "local:3", *more), timeout=120)
        release.cancel()
    assert done.returncode == 0, done.stderr
    stored = read_store(cli.db)
    assert stored.batch.status == "completed"
    assert sorted(stored.states("finished")) == [0, 1, 2]
    items = [e for e in stored.events if isinstance(e, BatchItem)]
    spans = _intervals(items)
    batch_id = stored.batch.session_id
    times: dict[int, tuple[float, float]] = {}
    for index in range(3):
        events = stored.child_events[child_id(batch_id, index)]
        times[index] = (events[0].ts, events[-1].ts)
    overlaps_in_time = [
        (a, b)
        for a in range(3)
        for b in range(a + 1, 3)
        if times[a][0] < times[b][1] and times[b][0] < times[a][1]
    ]
    if per_host == 1:
        assert _overlapping(spans) == [], [(e.item, e.state) for e in items]
        assert overlaps_in_time == [], times
    else:
        assert _overlapping(spans), [(e.item, e.state) for e in items]
        assert (0, 1) in overlaps_in_time and (0, 2) in overlaps_in_time, times
    assert [stored.children[child_id(batch_id, i)].status for i in range(3)] == ["completed"] * 3
    assert listed[0] == held.url


def test_an_item_that_does_not_complete_is_retried_then_failed(cli: Cli, demo: DemoSite) -> None:
    """A URL whose port refuses connections runs once and twice more (--retries 2), then is
    failed; the batch ends partial with exit code 1, the two good items done once each."""
    require_chromium()
    urls = cli.folder / "urls.txt"
    good = [demo.url("pagination", page=page) for page in (1, 2)]
    urls.write_text(f"{good[0]}\n{REFUSED}\n{good[1]}\n")
    done = cli.run(*recipe_batch(urls, "local:3", "--retries", "2"), timeout=120)
    assert done.returncode == 1, done.stderr
    stored = read_store(cli.db)
    assert stored.batch.status == "partial"
    refused = stored.items_of(1)
    assert [(e.state, e.attempt) for e in refused] == [
        ("started", 1),
        ("retrying", 1),
        ("started", 2),
        ("retrying", 2),
        ("started", 3),
        ("failed", 3),
    ]
    ended = [e for e in refused if e.state != "started"]
    assert all(e.status == "refused" and "connection refused" in e.line for e in ended)
    batch_id = stored.batch.session_id
    for index in (0, 2):
        assert [e.state for e in stored.items_of(index)] == ["started", "finished"]
        assert stored.children[child_id(batch_id, index)].status == "completed"
    # The URL was refused before a session began: nothing of it is stored, on any attempt.
    assert set(stored.children) == {child_id(batch_id, 0), child_id(batch_id, 2)}
    assert len(stored.sessions) == 3
