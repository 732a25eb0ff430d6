"""Ctrl+C during a batch on a Dask cluster, then `--resume`: the interrupted batch exits 130,
its session ended "cancelled" with every item it finished stored; the resume runs exactly the
rest where the batch ran (its engine, unless given), and the batch ends with every item stored
once. Ctrl+C comes while an item is known to be mid-run: waiting for a page the test holds
(HeldPage)."""

from __future__ import annotations

import signal

import pytest
from batch_support import (
    Cli,
    Cluster,
    HeldPage,
    assert_children,
    read_store,
    recipe_batch,
    write_urls,
)

from tui_agent.batch.plan import child_id
from tui_agent.demo_site import DemoSite
from tui_agent.events import BatchQueued

pytestmark = pytest.mark.chromium


def test_ctrl_c_keeps_what_finished_and_resume_runs_exactly_the_rest(
    cluster: Cluster, cli: Cli, demo: DemoSite, held: HeldPage
):
    path, urls = write_urls(cli.folder, demo, 6, held)
    with cli.start(*recipe_batch(path, cluster.engine)) as running:
        assert held.arrived.wait(timeout=180), "item 3 never loaded its page"
        running.process.send_signal(signal.SIGINT)  # Ctrl+C, item 3 mid-run
        printed = list(running.events())
        code, errors = running.finish()
    held.release.set()  # item 3 goes on on its worker, no longer wanted: let it end
    if code != 130:  # how the batch ended says whether the Ctrl+C was lost or mishandled
        ended = read_store(cli.db)
        items = [(e.item, e.state, e.line) for e in ended.events if e.type == "batch_item"]
        errors += f"\nbatch {ended.batch.status} ({ended.batch.stopped_reason}): {items}"
    assert code == 130, errors
    assert errors.rstrip().endswith("tui-agent: interrupted")

    batch_id = printed[0]["session_id"]
    stopped = read_store(cli.db)
    assert (stopped.batch.status, stopped.batch.stopped_reason) == ("cancelled", "cancelled")
    # nothing printed is missing from the store (an event stored as the cancel came may not
    # have been printed), and every item it finished is there
    stored_events = {e.seq: e for e in stopped.events}
    for event in printed:
        assert stored_events[event["seq"]].type == event["type"]
    done = stopped.states("finished")
    assert len(done) >= 2 and {child_id(batch_id, i) for i in done} <= set(stopped.children)
    assert 3 in stopped.states("cancelled") and 3 not in done
    for child in stopped.children:
        assert stopped.children[child].status == "completed"
    assert not stopped.states("failed")
    cancelled = stopped.states("cancelled")
    assert cancelled and not set(cancelled) & set(done)
    kept = {i for i in range(6) if child_id(batch_id, i) in stopped.children}
    rest = sorted(set(range(6)) - kept)
    assert rest

    resumed = cli.run("batch", "--resume", batch_id, "--json")  # where the batch ran
    assert resumed.returncode == 0, resumed.stderr
    assert f"batch {batch_id}: {len(rest)} items on {cluster.engine}" in resumed.stderr
    after = read_store(cli.db)
    new = after.events[len(stopped.events) :]
    assert isinstance(new[0], BatchQueued) and [e.item for e in new[0].entries] == rest
    starts = [e.item for e in new if e.type == "batch_item" and e.state == "started"]
    assert sorted(starts) == rest  # exactly the rest, each once
    assert after.batch.status == "completed"
    assert_children(after, demo, urls)  # all 6 stored, each once
    assert sorted(after.states("finished")) == list(range(6))
