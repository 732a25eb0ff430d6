"""The Dask worker plugin that closes a worker's items cleanly: its warm Chromium stopped and
its item loop ended when the worker closes (else the nanny waits, then kills the process)."""

from __future__ import annotations

from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

from tui_agent.batch.worker import close_worker_loop


class ItemsPlugin(WorkerPlugin):
    """Registered by the driver on every worker, those that join later too."""

    name = "tui-agent-items"
    idempotent = True
    """Registered once per cluster: a second driver (another batch, a resume) registering it
    again would otherwise have every worker tear down the one before, stopping the warm
    Chromium and the item loop under the items running there (their threads then wait
    forever)."""

    def teardown(self, worker: Any) -> None:
        close_worker_loop()
