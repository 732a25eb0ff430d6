"""Driving a batch: its engine and code cache opened, its items queued and run through a
recorder, both closed whatever happens.

Both front ends run batches through here (the CLI's `tui-agent batch`, the TUI's new-session
form), and neither may grow its own copy. The caller owns the store and the recorder: its
listeners (a terminal printer, the batch screen) hear every event.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from tui_agent.batch.runner import BatchOptions, BatchRun, batch_started
from tui_agent.recorder import to_the_end
from tui_agent.store.task_cache import TaskCache

if TYPE_CHECKING:
    from tui_agent.batch.engines import Engine
    from tui_agent.batch.plan import BatchPlan
    from tui_agent.config import Settings
    from tui_agent.recorder import SessionRecorder
    from tui_agent.session import SessionState


async def drive_batch(
    recorder: SessionRecorder,
    plan: BatchPlan,
    engine: Engine,
    settings: Settings,
    options: BatchOptions,
    *,
    resume: bool = False,
    began: Callable[[int], None] | None = None,
) -> SessionState | None:
    """Run `plan` as the batch session `recorder` records: a new batch, or (`resume`) what
    the batch it reopened has left. `began` hears how many items are to run once they are
    queued. None when a resume finds nothing left to run."""
    cache = TaskCache(settings.db)
    try:
        await engine.start()
        batch = BatchRun(plan, recorder, engine, settings, cache, options)
        if resume:
            todo = await batch.queue_rest()
            if not todo:
                return None
        else:
            await recorder.emit(batch_started(plan, engine, options))
            todo = await batch.queue_all()
        if began is not None:
            began(len(todo))
        return await batch.run(todo)
    finally:
        # To the end even when cancelled (an app that quits): no Chromium outlives the batch.
        await to_the_end(_close(engine, cache))


async def _close(engine: Engine, cache: TaskCache) -> None:
    try:
        await engine.close()
    finally:
        await cache.close()
