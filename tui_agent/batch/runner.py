"""Running a batch: its items scheduled on an engine, each finished session stored here, the
batch recorded as a session of its own.

At most `max_in_flight` items run at once, at most `per_host` of them on one site. Items of
one task shape (task + context schema) wait for the first of them: once it has cached its
code, the rest are sent that code and only run it, so a shape's code is generated once. An
item whose session did not complete is run again while `retries` remain (its session is
stored only once it will not run again, so an id is never stored twice). Cancelling the
batch cancels the items in flight: those already stored stay, and `--resume` runs the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tui_agent.batch.engines import Engine, ItemLost
from tui_agent.batch.plan import BatchPlan, child_id
from tui_agent.batch.worker import CACHE_FIELDS, SHIPPED_SETTINGS, ItemJob, ItemOutcome
from tui_agent.events import (
    BatchEntry,
    BatchItem,
    BatchQueued,
    SessionEnded,
    SessionStarted,
)
from tui_agent.recorder import to_the_end
from tui_agent.store.errors import SessionExists

if TYPE_CHECKING:
    from tui_agent.config import Settings
    from tui_agent.recorder import SessionRecorder
    from tui_agent.session import SessionState
    from tui_agent.store.task_cache import TaskCache

KEPT = ("completed", "partial")
"""Child statuses of an item that is done: run again no more."""


@dataclass(frozen=True)
class BatchOptions:
    """How a batch runs: at most `max_in_flight` items at once (None: the engine's slots),
    `per_host` per site (None: no limit), `retries` more runs of an item that did not end
    well."""

    max_in_flight: int | None = None
    per_host: int | None = None
    retries: int = 0


def batch_started(plan: BatchPlan, engine: Engine, options: BatchOptions) -> SessionStarted:
    """The first event of a batch session: its plan (what `--resume` rebuilds it from)."""
    return SessionStarted(
        kind="batch",
        title=plan.title,
        model=plan.base.get("model"),
        params={
            "plan": plan.model_dump(mode="json"),
            "engine": engine.name,
            "max_in_flight": options.max_in_flight,
            "per_host": options.per_host,
            "retries": options.retries,
        },
    )


@dataclass
class _Gate:
    """A task shape: whether its first item is under way, and the code it cached."""

    piloting: bool = False
    cache: list[dict[str, Any]] | None = None


@dataclass
class BatchRun:
    """One run of a batch's items (a whole batch, or what a resume left)."""

    plan: BatchPlan
    recorder: SessionRecorder
    engine: Engine
    settings: Settings
    cache: TaskCache
    options: BatchOptions = field(default_factory=BatchOptions)
    _attempts: Counter[int] = field(default_factory=Counter)
    _hosts: Counter[str] = field(default_factory=Counter)
    _gates: dict[str, _Gate] = field(default_factory=dict)

    @property
    def batch_id(self) -> str:
        return self.recorder.session_id

    async def queue_all(self) -> list[int]:
        """Record every item as queued; all of them are to run."""
        entries = [
            BatchEntry(item=i, label=item.label, child=child_id(self.batch_id, i))
            for i, item in enumerate(self.plan.items)
        ]
        await self.recorder.emit(BatchQueued(entries=entries, total=len(entries)))
        return list(range(len(entries)))

    async def queue_rest(self) -> list[int]:
        """The items a resume runs: those neither stored nor failed."""
        state = self.recorder.state.batch
        assert state is not None, "a batch session folds into a BatchState"
        stored = {summary.session_id for summary in await self.recorder.store.list_sessions()}
        rest = [
            i
            for i in range(len(self.plan.items))
            if child_id(self.batch_id, i) not in stored
            and (i not in state.items or state.items[i].state != "failed")
        ]
        if rest:
            entries = [
                BatchEntry(item=i, label=self.plan.items[i].label, child=child_id(self.batch_id, i))
                for i in rest
            ]
            await self.recorder.emit(BatchQueued(entries=entries, total=len(self.plan.items)))
        return rest

    async def run(self, todo: Iterable[int]) -> SessionState:
        """Run the items `todo` to their end, then end the batch session."""
        pending = list(todo)
        limit = self.options.max_in_flight or self.engine.slots
        running: dict[asyncio.Task[ItemOutcome], int] = {}
        began = time.monotonic()
        try:
            while pending or running:
                while len(running) < limit:
                    index = self._next(pending)
                    if index is None:
                        break
                    pending.remove(index)
                    running[await self._start(index)] = index
                done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    index = running.pop(task)
                    # To its end even when cancelled meanwhile: a Ctrl+C as an item's session is
                    # being stored never leaves it stored but its item not recorded as finished.
                    if await to_the_end(self._finished(index, task)):
                        pending.insert(0, index)
        except asyncio.CancelledError:
            await asyncio.shield(self._cancel(running))
            raise
        return await self._end(time.monotonic() - began)

    def _next(self, pending: list[int]) -> int | None:
        """The first pending item its site and its shape let run now."""
        for index in pending:
            host = self.plan.host(index)
            limit = self.options.per_host
            if host is not None and limit is not None and self._hosts[host] >= limit:
                continue
            shape = self.plan.shape(index)
            if shape is not None:
                gate = self._gates.setdefault(shape, _Gate())
                if gate.cache is None and gate.piloting:
                    continue
            return index
        return None

    async def _start(self, index: int) -> asyncio.Task[ItemOutcome]:
        self._attempts[index] += 1
        host = self.plan.host(index)
        if host is not None:
            self._hosts[host] += 1
        shape = self.plan.shape(index)
        gate = self._gates.get(shape) if shape is not None else None
        if gate is not None and gate.cache is None:
            gate.piloting = True
        item = self.plan.items[index]
        job = ItemJob(
            batch=self.batch_id,
            item=index,
            child=child_id(self.batch_id, index),
            request=self.plan.request(index).to_json(),
            settings=self.settings.model_dump(mode="json", include=set(SHIPPED_SETTINGS)),
            cache=(gate.cache or []) if gate is not None else [],
            check=item.check,
            attempt=self._attempts[index],
        )
        await self.recorder.emit(
            BatchItem(item=index, state="started", child=job.child, attempt=job.attempt)
        )
        return asyncio.create_task(self.engine.run(job))

    async def _finished(self, index: int, task: asyncio.Task[ItemOutcome]) -> bool:
        """Record how item `index` ended; True when it is to run again."""
        host = self.plan.host(index)
        if host is not None:
            self._hosts[host] -= 1
        shape = self.plan.shape(index)
        gate = self._gates.get(shape) if shape is not None else None
        if gate is not None:
            gate.piloting = False
        attempt = self._attempts[index]
        again = attempt <= self.options.retries
        child = child_id(self.batch_id, index)
        error = task.exception()
        if error is not None:
            line = str(error) if isinstance(error, ItemLost) else _error_line(error)
            retry = again and not isinstance(error, ItemLost)
            await self.recorder.emit(
                BatchItem(
                    item=index,
                    state="retrying" if retry else "failed",
                    status="lost",
                    line=line,
                    attempt=attempt,
                )
            )
            return retry
        outcome = task.result()
        if outcome.status not in KEPT and again:
            await self.recorder.emit(
                BatchItem(
                    item=index,
                    state="retrying",
                    child=child,
                    status=outcome.status,
                    line=outcome.line,
                    seconds=outcome.seconds,
                    attempt=attempt,
                    worker=outcome.worker,
                )
            )
            return True
        if outcome.lines:
            # Stored by an earlier run of this batch: the id says it is this item.
            with contextlib.suppress(SessionExists):
                await self.recorder.store.add_recorded(outcome.lines)
        if outcome.cache:
            await self._keep_code(outcome.cache, gate)
        for key in outcome.cache_used:
            await self.cache.used(key)
        await self.recorder.emit(
            BatchItem(
                item=index,
                state="finished" if outcome.status in KEPT else "failed",
                child=child if outcome.lines else "",
                status=outcome.status,
                line=outcome.line,
                seconds=outcome.seconds,
                attempt=attempt,
                worker=outcome.worker,
                passed=outcome.passed,
            )
        )
        return False

    async def _keep_code(self, entries: list[dict[str, Any]], gate: _Gate | None) -> None:
        """Keep the code an item cached: in this store's cache, and for its shape's items."""
        for entry in entries:
            fields = {k: entry[k] for k in CACHE_FIELDS}
            await self.cache.put(**fields)
        if gate is not None:
            gate.cache = entries

    async def _cancel(self, running: dict[asyncio.Task[ItemOutcome], int]) -> None:
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        for index in running.values():
            await self.recorder.emit(
                BatchItem(
                    item=index,
                    state="cancelled",
                    child=child_id(self.batch_id, index),
                    attempt=self._attempts[index],
                )
            )
        state = self.recorder.state.batch
        done = state.done if state else 0
        total = state.total if state else 0
        await self.recorder.emit(
            SessionEnded(
                status="cancelled",
                stopped_reason="cancelled",
                summary=f"{done} of {total} items done; --resume {self.batch_id} runs the rest",
            )
        )

    async def _end(self, seconds: float) -> SessionState:
        state = self.recorder.state.batch
        assert state is not None
        failed = len(state.failures)
        rate = f", {state.done / seconds:.2f} items/s" if seconds > 0 and state.done else ""
        summary = (
            f"{state.done} of {state.total} items done, {failed} failed, in {seconds:.1f} s{rate}"
        )
        await self.recorder.emit(
            SessionEnded(status="partial" if failed else "completed", summary=summary)
        )
        return self.recorder.state


def _error_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__
