"""Where a batch's items run: in this process on its event loop, or on Dask workers.

`--engine local[:N]` runs items as coroutines here (N at once; plain asyncio, one Chromium
shared). `--engine dask-local:N` starts a Dask `LocalCluster` of N worker processes on
loopback and reaches it by its address, as `--engine tcp://HOST:8786` reaches a scheduler
someone started (`dask scheduler`, `dask worker tcp://HOST:8786` on each machine): one code
path for both. A worker that dies mid-item has the item run again elsewhere (Dask does);
an item that took down `STRIKES` workers is lost (`ItemLost`) and the batch goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import sys
from collections.abc import Iterator
from typing import Any, Protocol

from tui_agent.batch.worker import ItemJob, ItemOutcome, run_job
from tui_agent.errors import UserError

STRIKES = 3
"""Workers an item may take down before it is failed (Dask's allowed-failures + 1)."""
DEFAULT_LOCAL = 4
LOST_WORKER_TIMEOUT = "1 day"
"""How long a LocalCluster waits for a dead worker's nanny to start it again (its nannies
always do) before closing that nanny."""
_SPEC = re.compile(r"(?P<kind>local|dask-local)(?::(?P<n>\d+))?|(?P<address>(tcp|tls)://\S+)")


class EngineError(UserError):
    """An engine that cannot be used: a bad --engine, a scheduler that does not answer."""


class ItemLost(Exception):
    """An item whose runs kept killing the workers running them."""


class Engine(Protocol):
    """Runs one item's job somewhere and returns its outcome."""

    name: str
    slots: int
    """How many items it runs at once by default."""

    async def start(self) -> None: ...

    async def run(self, job: ItemJob) -> ItemOutcome: ...

    async def close(self) -> None: ...


class LocalEngine:
    """Items as coroutines on this event loop (the default; no Dask)."""

    def __init__(self, slots: int = DEFAULT_LOCAL) -> None:
        self.name = f"local:{slots}"
        self.slots = slots
        self._browser: Any = None

    async def start(self) -> None:
        return None

    async def run(self, job: ItemJob) -> ItemOutcome:
        from tui_agent.batch.worker import kept_browser

        browser = None
        if job.request.get("kind") in ("recipe", "scrape") and not job.settings.get(
            "allow_file_urls"
        ):
            browser = self._browser = self._browser or kept_browser(job.settings)
        return await run_job(job, browser)

    async def close(self) -> None:
        browser, self._browser = self._browser, None
        if browser is not None:
            await browser.shutdown()


class DaskEngine:
    """Items on the workers of a Dask scheduler: one at `address`, or a LocalCluster of
    `workers` processes started here on loopback."""

    def __init__(self, address: str | None = None, workers: int = 2) -> None:
        self.address = address
        self.workers = workers
        self.name = address or f"dask-local:{workers}"
        self.slots = workers
        self._cluster: Any = None
        self._client: Any = None

    async def start(self) -> None:
        import dask
        from distributed import Client, LocalCluster

        from tui_agent.batch.dask_plugin import ItemsPlugin

        dask.config.set(
            {
                "distributed.scheduler.allowed-failures": STRIKES - 1,
                # A LocalCluster closes a worker's nanny for good when, 15 s after the worker
                # died, no worker of its name is up: a nanny still restarting it then (after
                # an item crashed it again) leaves the cluster a worker short, or with none.
                "distributed.deploy.lost-worker-timeout": LOST_WORKER_TIMEOUT,
            }
        )
        address = self.address
        try:
            if address is None:
                _quiet_dask()
                with _stderr_with_a_descriptor():
                    self._cluster = await LocalCluster(
                        n_workers=self.workers,
                        threads_per_worker=1,
                        processes=True,
                        host="127.0.0.1",
                        dashboard_address=None,
                        # Its health page still listens: on a free loopback port, not on 8787
                        # (another cluster may be there: a warning over the progress, a
                        # socket left open).
                        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                        preload=["tui_agent.batch.dask_plugin"],  # Ctrl+C is the driver's
                        asynchronous=True,
                    )
                address = self._cluster.scheduler_address
            self._client = await Client(address, asynchronous=True, timeout="10s")
        except (OSError, TimeoutError) as exc:
            await self.close()
            raise EngineError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
        if self.address is not None:
            await self._allow_failures()
        await self._client.register_plugin(ItemsPlugin())
        threads = sum((await self._client.nthreads()).values()) if self.address else self.workers
        self.slots = max(1, threads)

    async def _allow_failures(self) -> None:
        """Give a scheduler started elsewhere the allowed-failures a LocalCluster started here
        gets from this process's config (Dask's default is 3, read when the scheduler starts),
        so an item is lost after `STRIKES` workers on every engine. A scheduler that refuses
        (one that takes no pickled code) keeps its own; `run` words the line from it."""

        def allow(dask_scheduler: Any, failures: int = STRIKES - 1) -> None:
            dask_scheduler.allowed_failures = failures

        with contextlib.suppress(Exception):
            await self._client.run_on_scheduler(allow)

    @property
    def address_in_use(self) -> str:
        """The scheduler's address (the LocalCluster's once started)."""
        client = self._client
        return str(client.scheduler.address) if client is not None else (self.address or "")

    async def run(self, job: ItemJob) -> ItemOutcome:
        from distributed import KilledWorker

        from tui_agent.batch.worker import run_item

        future = self._client.submit(
            run_item, job.model_dump(), key=f"item-{job.child}-{job.attempt}", pure=False
        )
        try:
            return ItemOutcome.model_validate(await future)
        except KilledWorker as exc:
            strikes = getattr(exc, "allowed_failures", STRIKES - 1) + 1
            raise ItemLost(f"it took down {strikes} workers running it") from None
        except asyncio.CancelledError:
            await future.cancel()
            raise

    async def close(self) -> None:
        client, self._client = self._client, None
        cluster, self._cluster = self._cluster, None
        if client is not None:
            await client.close()
        if cluster is not None:
            await cluster.close()


@contextlib.contextmanager
def _stderr_with_a_descriptor() -> Iterator[None]:
    """Multiprocessing hands the first process it starts (its resource tracker) the file
    descriptor of `sys.stderr`. Under the TUI that is Textual's capture, whose `fileno()` is
    -1, and the cluster fails to start ("bad value(s) in fds_to_keep"). Meanwhile it gets
    /dev/null: the terminal is the TUI's, and the tracker only warns there."""
    try:
        usable = sys.stderr.fileno() >= 0
    except (AttributeError, OSError, ValueError):
        usable = False
    if usable:
        yield
        return
    with open(os.devnull, "w") as null, contextlib.redirect_stderr(null):
        yield


def _quiet_dask() -> None:
    """Keep a LocalCluster's workers and nannies from writing their INFO and WARNING lines
    (a restarted worker, a slow close) over the batch's progress: only errors show."""
    import logging

    import dask

    dask.config.set({"logging.distributed": "error"})
    logging.getLogger("distributed").setLevel(logging.ERROR)


def engine_for(spec: str) -> Engine:
    """The engine `--engine SPEC` names: local[:N], dask-local:N or tcp://HOST:PORT."""
    found = _SPEC.fullmatch(spec.strip())
    if found is None:
        raise EngineError(
            f"--engine {spec!r} is not an engine: use local[:N], dask-local:N or tcp://HOST:8786"
        )
    if found["address"]:
        return DaskEngine(found["address"])
    count = int(found["n"]) if found["n"] else (DEFAULT_LOCAL if found["kind"] == "local" else 2)
    if not 1 <= count <= 256:
        raise EngineError(f"--engine {spec!r}: N must be 1 to 256")
    return LocalEngine(count) if found["kind"] == "local" else DaskEngine(workers=count)
