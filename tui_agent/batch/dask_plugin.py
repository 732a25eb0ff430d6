"""The Dask worker plugin that closes a worker's items cleanly: its warm Chromium stopped and
its item loop ended when the worker closes (else the nanny waits, then kills the process);
and `dask_setup`, preloaded in the workers of a cluster started here."""

from __future__ import annotations

import logging
import os
import signal
import threading
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


def dask_setup(worker: Any) -> None:
    """Preloaded in the worker processes of a `dask-local` cluster, which write to the
    driver's terminal: they log errors only (as its nannies do), and leave the terminal's
    process group (a session of their own), so a Ctrl+C reaches neither them nor the
    Chromium and Playwright driver they start. The driver answers it, cancelling their items
    and closing them (else each printed its KeyboardInterrupt, a cancelled task, a dead
    browser connection over the batch's lines). A worker still exits with its nanny."""
    logging.getLogger("distributed").setLevel(logging.ERROR)
    try:
        os.setsid()
    except OSError:  # already a group leader: ignore the terminal's Ctrl+C instead
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)
