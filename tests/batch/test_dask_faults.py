"""Workers dying under a batch: a worker killed mid-item has the item run again elsewhere and
the batch still ends with exactly one child per URL; an item that crashes every worker that
runs it is failed after three, in one line, and the rest are done.

The killed worker is sent SIGKILL from outside while its item waits for a page the test holds
(HeldPage). The crashing item's worker exits from inside: a plugin registered on the cluster
(dask_faults.py) once the batch's id is known (its first event, printed before any item
starts), while the item before it waits for its held page.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

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
from dask_faults import CrashEveryTime, by_value, deaths

from tui_agent.batch.plan import child_id
from tui_agent.demo_site import DemoSite

pytestmark = pytest.mark.chromium


@pytest.fixture
def faults(tmp_path: Path) -> Path:
    """Where the plugin leaves a file per worker it killed."""
    folder = tmp_path / "faults"
    folder.mkdir()
    by_value()
    return folder


@pytest.fixture
def plugins(cluster: Cluster) -> Iterator[list[str]]:
    """The names of the plugins a test registers: unregistered after it, and the cluster given
    time to have its two workers again."""
    names: list[str] = []
    yield names
    for name in names:
        cluster.client.unregister_worker_plugin(name)
    cluster.client.wait_for_workers(2, timeout=60)


def test_a_worker_killed_mid_item_leaves_exactly_one_child_per_url(
    cluster: Cluster, cli: Cli, demo: DemoSite, held: HeldPage
):
    path, urls = write_urls(cli.folder, demo, 6, held)
    with cli.start(*recipe_batch(path, cluster.engine)) as running:
        victim = child_id(running.batch_id(), 3)
        assert held.arrived.wait(timeout=180), "item 3 never loaded its page"
        processing = cluster.client.processing()
        [worker] = [w for w, keys in processing.items() if f"item-{victim}-1" in keys]
        pid = cluster.client.run(os.getpid, workers=[worker])[worker]
        os.kill(pid, signal.SIGKILL)  # the worker running item 3, mid-item
        held.release.set()
        list(running.events())
        code, errors = running.finish()
    assert code == 0, errors

    stored = read_store(cli.db)
    assert_children(stored, demo, urls)  # still exactly 6, none twice
    assert stored.batch.status == "completed"
    # Dask ran item 3 again on a live worker: the driver saw one start and one finish
    again = stored.items_of(3)
    assert [(e.state, e.attempt) for e in again] == [("started", 1), ("finished", 1)]
    assert again[-1].worker and not again[-1].worker.endswith(f":{pid}")
    cluster.client.wait_for_workers(2, timeout=120)  # its nanny started another


def test_an_item_that_crashes_every_worker_fails_alone_after_three(
    cluster: Cluster, cli: Cli, demo: DemoSite, faults: Path, plugins: list[str]
):
    with HeldPage(demo, page=1) as first:  # item 0 runs until the crash is in place
        path, _ = write_urls(cli.folder, demo, 3, first)
        # One item in flight at a time: Dask counts a death against every task the dead
        # worker held, so a crash is then only ever held against the item that caused it.
        with cli.start(*recipe_batch(path, cluster.engine, "--max-in-flight", "1")) as running:
            batch_id = running.batch_id()
            crasher = child_id(batch_id, 1)
            plugins.append(f"crash-{crasher}")
            cluster.client.register_plugin(CrashEveryTime(crasher, faults), name=plugins[-1])
            first.release.set()
            printed = list(running.events())
            code, errors = running.finish()
    assert code == 1, errors

    died = [death.split() for death in deaths(faults)]
    assert len(died) == 3 and len({pid for pid, _ in died}) == 3
    assert {key for _, key in died} == {f"item-{crasher}-1"}
    ended = printed[-1]
    assert (ended["type"], ended["status"]) == ("session_ended", "partial")
    assert ended["summary"].startswith("3 of 3 items done, 1 failed")
    stored = read_store(cli.db)
    assert stored.batch.status == "partial"
    batch = stored.batch.batch
    assert batch is not None
    [failed] = batch.failures
    assert (failed.item, failed.status) == (1, "lost")
    assert failed.line == "it took down 3 workers running it"
    assert [batch.items[i].state for i in (0, 2)] == ["finished", "finished"]
    # the two others are the batch's children, whole; the lost item left no session
    assert set(stored.children) == {child_id(batch_id, 0), child_id(batch_id, 2)}
    for index in (0, 2):
        child = child_id(batch_id, index)
        assert stored.children[child].status == "completed"
        assert stored.children[child].item_count == 2
    assert crasher not in {s.session_id for s in stored.sessions}
