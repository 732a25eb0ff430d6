"""One batch item, run where it lands: its session recorded in a store of its own, sent back.

`run_job` is the same on every engine: it prepares the item's request through the one launch
path, records the session under the item's derived id in a temporary store (with the code
cache the driver sent, so a task's code is generated once per shape), judges an eval item,
and returns the session as exported lines plus the code it cached. The driver's store is the
one store; a worker needs no shared disk.

`run_item` is the entry point a Dask worker calls (synchronous, picklable arguments): items run
on one event loop per worker process, so a recipe batch keeps one Chromium per worker warm.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from tui_agent.batch.evaluation import judge
from tui_agent.batch.plan import EvalCheck
from tui_agent.events import BatchOrigin, dump_event
from tui_agent.session import SessionState
from tui_agent.store.task_cache import COLUMNS as CACHE_COLUMNS

SHIPPED_SETTINGS = (
    "model",
    "sandbox",
    "workspace_quota_mb",
    "allow_file_urls",
    "browser_sandbox",
    "browser_user",
    "api_base",
    "context_tokens",
    "temperature",
    "max_tokens",
    "top_p",
    "reply_format",
)
"""The driver's settings an item runs with; the rest (the database, Chromium's path, the MCP
config) are the worker machine's own."""
CLOSE_WAIT = 15.0
CACHE_FIELDS = tuple(c for c in CACHE_COLUMNS if c not in ("created_at", "last_used_at", "hits"))
"""The fields of a code cache entry sent to and from a worker."""


class ItemJob(BaseModel):
    """What a worker is sent for one item."""

    batch: str
    item: int
    child: str
    request: dict[str, Any]
    settings: dict[str, Any]
    cache: list[dict[str, Any]] = []
    check: EvalCheck | None = None
    attempt: int = 1


class ItemOutcome(BaseModel):
    """What comes back: the session's lines (none when its request was refused before it
    started), how it ended, in one line, an eval item's verdict, the code it cached and the
    code it was sent that it used."""

    child: str
    lines: list[str]
    status: str
    line: str = ""
    seconds: float = 0.0
    worker: str = ""
    passed: bool | None = None
    cache: list[dict[str, Any]] = []
    cache_used: list[str] = []
    """The keys of the code it was sent and used, once per use."""

    @property
    def size(self) -> int:
        """Bytes of the session sent back."""
        return sum(len(line) + 1 for line in self.lines)


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


async def run_job(job: ItemJob, browser: Any = None) -> ItemOutcome:
    """Run `job` here (see the module docstring); `browser`: a KeptBrowser the web kinds share."""
    from tui_agent.agents.launch import prepare
    from tui_agent.agents.requests import request_from_json
    from tui_agent.config import Settings
    from tui_agent.errors import UserError
    from tui_agent.recorder import SessionRecorder
    from tui_agent.store import Store
    from tui_agent.store.task_cache import TaskCache

    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="tui-agent-item-") as folder:
        db = Path(folder) / "item.db"
        settings = Settings(**job.settings, db=db)
        cache = TaskCache(db)
        try:
            async with await Store.open(db) as store:
                seeded = {entry["key"] for entry in job.cache}
                for entry in job.cache:
                    await cache.put(**{k: entry[k] for k in CACHE_FIELDS})
                try:
                    request = request_from_json(job.request)
                    # Its checks may wait on the network (is the start page up?): in a thread,
                    # so the other items on this loop go on meanwhile.
                    launch = await asyncio.to_thread(
                        prepare,
                        request,
                        settings,
                        session_id=job.child,
                        cache=cache,
                        browser=browser,
                    )
                except UserError as exc:
                    seconds = time.monotonic() - began
                    return ItemOutcome(
                        child=job.child, lines=[], status="refused", line=str(exc), seconds=seconds
                    )
                origin = BatchOrigin(session_id=job.batch, item=job.item)
                started = launch.started.model_copy(update={"batch": origin})
                launch = dataclasses.replace(launch, started=started)
                state = await SessionRecorder(store, job.child).run(started, launch.events)
                lines = [dump_event(event) for event in await store.events(job.child)]
            passed, why = (None, "")
            if job.check is not None:
                passed, why = await judge(job.check, state, settings)
            entries = await cache.entries()
            made = [vars(e) for e in entries if e.key not in seeded]
            used = [e.key for e in entries if e.key in seeded for _ in range(e.hits)]
        finally:
            await cache.close()
    return ItemOutcome(
        child=job.child,
        lines=lines,
        status=state.status,
        line=why or _ended_line(state),
        seconds=time.monotonic() - began,
        worker=worker_name(),
        passed=passed,
        cache=made,
        cache_used=used,
    )


def _ended_line(state: SessionState) -> str:
    """Why a session did not complete, in one line ("" when it did)."""
    if state.status == "completed":
        return ""
    if state.errors:
        return state.errors[-1].message
    return state.stopped_reason or state.status


class _WorkerLoop:
    """The event loop a worker process runs its items on (in a thread of its own, so Dask's
    task threads can hand it work), and the Chromium it keeps warm for recipe items."""

    _lock = threading.Lock()
    _current: _WorkerLoop | None = None

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.browser: Any = None
        threading.Thread(target=self.loop.run_forever, name="tui-agent-items", daemon=True).start()

    @classmethod
    def get(cls) -> _WorkerLoop:
        with cls._lock:
            if cls._current is None:
                cls._current = cls()
            return cls._current

    def run(self, job: ItemJob) -> ItemOutcome:
        return asyncio.run_coroutine_threadsafe(self._run(job), self.loop).result()

    @classmethod
    def close_current(cls) -> None:
        with cls._lock:
            current, cls._current = cls._current, None
        if current is not None:
            current.close()

    def close(self) -> None:
        """Stop the warm Chromium (at most `CLOSE_WAIT` seconds), then the loop."""
        browser, self.browser = self.browser, None
        if browser is not None:
            done = asyncio.run_coroutine_threadsafe(browser.shutdown(), self.loop)
            with contextlib.suppress(Exception):
                done.result(timeout=CLOSE_WAIT)
        self.loop.call_soon_threadsafe(self.loop.stop)

    async def _run(self, job: ItemJob) -> ItemOutcome:
        browser = None
        if job.request.get("kind") in ("recipe", "scrape") and not job.settings.get(
            "allow_file_urls"
        ):
            browser = self.browser = self.browser or kept_browser(job.settings)
        return await run_job(job, browser)


def kept_browser(shipped: dict[str, Any]) -> Any:
    """A Chromium to keep warm for the items run with `shipped` settings (started by the first;
    its path is this machine's)."""
    from tui_agent.config import Settings
    from tui_agent.web.browser import KeptBrowser, find_chromium

    settings = Settings(**shipped)
    return KeptBrowser(
        settings.chromium or find_chromium(),
        sandbox=settings.browser_sandbox,
        user=settings.browser_user,
    )


def close_worker_loop() -> None:
    """End this process's item loop and its Chromium (a worker closing)."""
    _WorkerLoop.close_current()


def run_item(job: dict[str, Any]) -> dict[str, Any]:
    """Run one item on this worker (the function a Dask worker is sent): a job's JSON in, its
    outcome's JSON out (plain data, so any worker with the package can run it)."""
    return _WorkerLoop.get().run(ItemJob.model_validate(job)).model_dump()
