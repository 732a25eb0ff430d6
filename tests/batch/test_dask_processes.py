"""The engine as on real machines: a `dask scheduler` and a `dask worker` process started from
Dask's own command, the worker in a folder of its own (its own cwd, temp dir and data dirs),
sharing nothing with the driver but the installed package; and `--engine` mistakes, each one
line and nothing recorded."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest
from batch_support import (
    Cli,
    assert_children,
    read_store,
    recipe_batch,
    session_ids,
    write_urls,
)
from support.requirements import require_chromium

from tui_agent.demo_site import DemoSite

DASK = str(Path(sys.executable).parent / "dask")
LOOPBACK = "127.0.0.1"


@dataclass(frozen=True)
class Machines:
    """A scheduler and a worker started apart: the scheduler's address, the worker's folder,
    and the processes of both (the worker's nanny and its worker process)."""

    address: str
    worker_home: Path
    processes: list[psutil.Process]


def listening(processes: list[psutil.Process]) -> set[str]:
    """The addresses the processes listen on."""
    found = set()
    for process in processes:
        for connection in process.net_connections(kind="inet"):
            if connection.status == psutil.CONN_LISTEN:
                found.add(connection.laddr.ip)
    return found


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop a dask command as Ctrl+C in its terminal would; kill it if it lingers."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def scheduler_address(scheduler: subprocess.Popen[bytes], address_file: Path) -> str:
    """The address the scheduler wrote to its file once it listened."""
    deadline = time.monotonic() + 120
    while True:
        assert scheduler.poll() is None, (address_file.parent / "log.txt").read_text()
        assert time.monotonic() < deadline, "the scheduler did not start"
        try:
            return str(json.loads(address_file.read_text())["address"])
        except (OSError, ValueError, KeyError):  # not there yet, or half written
            time.sleep(0.1)


@pytest.fixture(scope="module")
def machines(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Machines]:
    require_chromium()
    from distributed import Client

    root = tmp_path_factory.mktemp("machines")
    scheduler_home, worker_home = root / "scheduler", root / "worker"
    for folder in (scheduler_home, worker_home, worker_home / "tmp"):
        folder.mkdir()
    worker_env = {
        **os.environ,
        "HOME": str(worker_home),
        "TMPDIR": str(worker_home / "tmp"),
        "XDG_DATA_HOME": str(worker_home / "data"),
        "XDG_CACHE_HOME": str(worker_home / "cache"),
    }
    address_file = scheduler_home / "scheduler.json"
    with (scheduler_home / "log.txt").open("w") as log:
        scheduler = subprocess.Popen(
            [
                *(DASK, "scheduler", "--host", LOOPBACK, "--port", "0"),
                *("--dashboard-address", f"{LOOPBACK}:0", "--scheduler-file", str(address_file)),
            ],
            cwd=scheduler_home,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    worker = None
    try:
        address = scheduler_address(scheduler, address_file)
        assert address.startswith(f"tcp://{LOOPBACK}:")
        with (worker_home / "log.txt").open("w") as log:
            worker = subprocess.Popen(
                [
                    *(DASK, "worker", address, "--nworkers", "1", "--nthreads", "1"),
                    *("--host", LOOPBACK, "--dashboard-address", f"{LOOPBACK}:0"),
                    *("--no-dashboard", "--local-directory", str(worker_home / "dask")),
                ],
                cwd=worker_home,
                env=worker_env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        with Client(address, timeout="60s") as client:
            client.wait_for_workers(1, timeout=120)
        started = [psutil.Process(scheduler.pid), psutil.Process(worker.pid)]
        processes = started + psutil.Process(worker.pid).children(recursive=True)
        yield Machines(address, worker_home, processes)
    finally:
        if worker is not None:
            stop(worker)
        stop(scheduler)


@pytest.mark.chromium
def test_a_scheduler_and_a_worker_started_apart_run_a_batch_for_the_driver(
    machines: Machines, cli: Cli, demo: DemoSite
):
    assert listening(machines.processes) == {LOOPBACK}  # nothing reachable from outside
    path, urls = write_urls(cli.folder, demo, 2)
    result = cli.run(*recipe_batch(path, machines.address))
    assert result.returncode == 0, result.stderr
    stored = read_store(cli.db)  # the children are in the driver's database
    assert_children(stored, demo, urls)
    batch = stored.batch.batch
    assert batch is not None
    ran_on = {int(item.worker.rpartition(":")[2]) for item in batch.items.values()}
    assert ran_on <= {p.pid for p in machines.processes[2:]}  # the worker process ran them
    # the worker recorded each item in a temporary store of its own, and removed it
    assert not list((machines.worker_home / "tmp").glob("tui-agent-item-*"))
    # and wrote nothing where the driver runs
    assert {p.name for p in cli.folder.iterdir()} <= {"s.db", "s.db-shm", "s.db-wal", "urls.txt"}


def test_an_engine_that_is_not_one_is_one_line_and_records_nothing(cli: Cli, demo: DemoSite):
    path, _ = write_urls(cli.folder, demo, 2)
    result = cli.run(*recipe_batch(path, "nope:3"))
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.splitlines() == [
        "tui-agent: --engine 'nope:3' is not an engine: use local[:N], dask-local:N or "
        "tcp://HOST:8786"
    ]
    assert not cli.db.exists()


def test_a_scheduler_that_does_not_answer_is_one_line_and_records_nothing(cli: Cli, demo: DemoSite):
    path, _ = write_urls(cli.folder, demo, 2)
    with socket.socket() as closed:  # bound, never listening: connections are refused
        closed.bind((LOOPBACK, 0))
        engine = f"tcp://{LOOPBACK}:{closed.getsockname()[1]}"
        result = cli.run(*recipe_batch(path, engine))
    assert (result.returncode, result.stdout) == (1, "")
    [line] = result.stderr.splitlines()
    assert line.startswith(f"tui-agent: cannot reach the Dask scheduler at {engine}: ")
    assert session_ids(cli.db) == []
