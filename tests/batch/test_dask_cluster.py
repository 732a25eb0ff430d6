"""A recipe batch on a 2-worker Dask cluster reached by its address: one child session per
URL, stored once, replayable; a second batch started on the same cluster meanwhile completes
as well; `--resume` of a finished batch runs nothing."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

import pytest
from batch_support import (
    Cli,
    Cluster,
    Stored,
    assert_children,
    read_store,
    recipe_batch,
    write_urls,
)

from tui_agent.batch.plan import child_id
from tui_agent.demo_site import DemoSite

pytestmark = pytest.mark.chromium


@dataclass(frozen=True)
class Done:
    """A finished batch: where it is stored, its URLs, what its run printed."""

    cli: Cli
    urls: list[str]
    printed: list[dict[str, Any]]
    stored: Stored


@dataclass(frozen=True)
class Both:
    """A batch of 6 URLs, and one of 2 started on the same cluster once the first had an
    item done; the cluster's worker processes as they ended."""

    six: Done
    two: Done
    pids: set[int]


@pytest.fixture(scope="module")
def both(cluster: Cluster, demo: DemoSite, tmp_path_factory: pytest.TempPathFactory) -> Both:
    six, two = Cli(tmp_path_factory.mktemp("six")), Cli(tmp_path_factory.mktemp("two"))
    six_path, six_urls = write_urls(six.folder, demo, 6)
    two_path, two_urls = write_urls(two.folder, demo, 2)
    with contextlib.ExitStack() as running:
        first = running.enter_context(six.start(*recipe_batch(six_path, cluster.engine)))
        printed, second = [], None
        for event in first.events():
            printed.append(event)
            if second is None and event["type"] == "batch_item" and event["state"] == "finished":
                second = running.enter_context(two.start(*recipe_batch(two_path, cluster.engine)))
        code, errors = first.finish()
        assert code == 0, errors
        assert second is not None
        printed_two = list(second.events())
        code, errors = second.finish()
        assert code == 0, errors
    return Both(
        Done(six, six_urls, printed, read_store(six.db)),
        Done(two, two_urls, printed_two, read_store(two.db)),
        set(cluster.worker_pids().values()),
    )


def test_six_urls_are_six_child_sessions_each_with_its_items(
    both: Both, demo: DemoSite, cluster: Cluster
):
    stored = both.six.stored
    assert_children(stored, demo, both.six.urls)
    assert (stored.batch.kind, stored.batch.status) == ("batch", "completed")
    assert stored.batch.params["engine"] == cluster.address
    batch = stored.batch.batch
    assert batch is not None and (batch.total, batch.done, batch.failures) == (6, 6, [])
    assert sorted(stored.states("started")) == list(range(6))  # each item sent once
    # each ran in a worker process of the cluster, which said so (host:pid)
    assert {int(batch.items[i].worker.rpartition(":")[2]) for i in range(6)} <= both.pids
    # the batch's events as printed are the events stored, in order
    assert [e["seq"] for e in both.six.printed] == [e.seq for e in stored.events]


def test_a_second_batch_on_the_same_cluster_meanwhile_completes_too(both: Both, demo: DemoSite):
    # A driver connecting to a cluster must leave the items of one already there running.
    stored = both.two.stored
    assert_children(stored, demo, both.two.urls)
    assert stored.batch.status == "completed"
    assert not set(stored.children) & set(both.six.stored.children)


def test_resuming_a_finished_batch_runs_nothing(both: Both, cluster: Cluster):
    done = both.six
    batch_id = done.stored.batch.session_id
    result = done.cli.run("batch", "--resume", batch_id[:8], "--engine", cluster.engine)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"batch {batch_id}: nothing left to run"
    again = read_store(done.cli.db)
    assert [e.seq for e in again.events] == [e.seq for e in done.stored.events]
    assert again.batch.status == "completed"
    assert set(again.children) == {child_id(batch_id, i) for i in range(6)}
    assert {c: len(e) for c, e in again.child_events.items()} == {
        c: len(e) for c, e in done.stored.child_events.items()
    }
