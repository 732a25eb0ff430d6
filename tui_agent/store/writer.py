"""Group commit: appends that arrive while a commit runs are written together by the next one.

The writer has its own connection and thread. A task takes what is queued (up to `MAX_BATCH`
appends), has the thread write it in one transaction (batch.py), then resolves each append's
future: an append still completes only once its event is committed.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections import deque
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tui_agent.store.appends import Append
from tui_agent.store.batch import BatchWriter
from tui_agent.store.connection import connect_writer
from tui_agent.store.errors import StoreError
from tui_agent.store.owners import this_process

MAX_BATCH = 500
"""Appends per transaction at most: bounds how long other writers of the file wait."""


class AppendWriter:
    """Writes the appends queued with `submit`; open with `await AppendWriter.open(path)`."""

    def __init__(self, executor: ThreadPoolExecutor, batches: BatchWriter, path: Path) -> None:
        self._executor = executor
        self._batches = batches
        self._path = path
        self._queue: deque[tuple[Append, asyncio.Future[None]]] = deque()
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    @classmethod
    async def open(cls, path: Path) -> AppendWriter:
        """A writer with its own connection to the (already opened and migrated) database."""
        executor = ThreadPoolExecutor(1, thread_name_prefix="tui-agent store writer")
        loop = asyncio.get_running_loop()
        try:
            conn = await loop.run_in_executor(executor, connect_writer, path)
        except sqlite3.Error as exc:
            executor.shutdown()
            raise StoreError(f"cannot open database {path}: {exc}") from None
        return cls(executor, BatchWriter(conn, path, this_process()), path)

    async def close(self) -> None:
        """Write what is queued, then close the connection (once)."""
        await self.drain()
        if self._closed:
            return
        self._closed = True
        await asyncio.get_running_loop().run_in_executor(self._executor, self._batches.conn.close)
        self._executor.shutdown()

    def submit(self, appends: Iterable[Append]) -> list[asyncio.Future[None]]:
        """Queue `appends` in order; each future is done once its event is committed (or holds
        the StoreError that refused it). Cancelling a future does not take its append back."""
        loop = asyncio.get_running_loop()
        futures: list[asyncio.Future[None]] = []
        for append in appends:
            futures.append(loop.create_future())
            self._queue.append((append, futures[-1]))
        if futures and (self._task is None or self._task.done()):
            self._task = loop.create_task(self._run(), name=f"store writer {self._path}")
        return futures

    async def drain(self) -> None:
        """Wait until everything queued so far is written."""
        while self._task is not None and not self._task.done():
            await asyncio.wait([self._task])

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self._queue:
                batch = [self._queue.popleft() for _ in range(min(MAX_BATCH, len(self._queue)))]
                appends = [append for append, _ in batch]
                try:
                    outcomes: Sequence[Exception | None] = await loop.run_in_executor(
                        self._executor, self._batches.write, appends
                    )
                except Exception as exc:  # not the database's doing (a bug)
                    outcomes = [exc] * len(batch)
                except BaseException:
                    for _, future in batch:
                        future.cancel()
                    raise
                for (_, future), outcome in zip(batch, outcomes, strict=True):
                    if future.cancelled():  # its caller was cancelled; the event is recorded
                        continue
                    if outcome is None:
                        future.set_result(None)
                    else:
                        future.set_exception(outcome)
        except BaseException:  # cancelled with the event loop: nobody may wait forever
            while self._queue:
                self._queue.popleft()[1].cancel()
            raise
