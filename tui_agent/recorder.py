"""Recording a session as it runs: stamp each event, fold it, store it, tell the listeners.

`SessionRecorder.run` records an agent's stream from its SessionStarted to exactly one
SessionEnded, whatever happens in between (cancellation, an agent that raises).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, TypeVar

from tui_agent.events import (
    OPEN_STATUSES,
    Error,
    Event,
    SessionEnded,
    SessionStarted,
    new_session_id,
)
from tui_agent.session import SessionState

if TYPE_CHECKING:
    from tui_agent.store import Store


EventListener = Callable[[Event, SessionState], None]
T = TypeVar("T")


class SessionRecorder:
    """Stamps, folds, stores and broadcasts the events of one session.

    Every event goes through `emit` (or `emit_many`): it gets the session id, the next
    gap-free `seq` and a timestamp, is folded into `state`, appended to the store (durable
    when `emit` returns), and then handed to each listener (the TUI, a headless printer).
    """

    def __init__(
        self,
        store: Store,
        session_id: str | None = None,
        listeners: Iterable[EventListener] = (),
    ) -> None:
        self.store = store
        self.session_id = session_id or new_session_id()
        self.state = SessionState(session_id=self.session_id)
        self.listeners = list(listeners)
        self._seq = 0

    @classmethod
    async def resume(
        cls, store: Store, session_id: str, listeners: Iterable[EventListener] = ()
    ) -> SessionRecorder:
        """A recorder that appends to an existing session (e.g. feedback on a finished one).

        If the session is still running (recorded by another process), this process becomes
        one of its owners with its first append: the session is not ended as interrupted
        while either process lives.
        """
        recorder = cls(store, session_id, listeners)
        await recorder.reopen()
        return recorder

    async def reopen(self) -> None:
        """Take up the session as stored: the next event is appended after its last."""
        self.state = await self.store.state(self.session_id)
        self._seq = self.state.last_seq

    def _stamp(self, event: Event) -> Event:
        self._seq += 1
        stamped = event.model_copy(
            update={"session_id": self.session_id, "seq": self._seq, "ts": time.time()}
        )
        self.state.apply(stamped)
        return stamped

    async def emit(self, event: Event) -> Event:
        """Record one event and return it as stored (a cancel meanwhile is raised once it is
        stored: an event stamped is an event stored)."""
        stamped = self._stamp(event)
        await to_the_end(self.store.append(stamped, self.state.summary()))
        self._tell(stamped)
        return stamped

    async def emit_many(self, events: Iterable[Event]) -> list[Event]:
        """Record events held at once, in one go (they share a commit); return them as stored.

        Listeners hear of each once all are committed.
        """
        stamped = [(self._stamp(event), self.state.summary()) for event in events]
        await to_the_end(self.store.append_many(stamped))
        for event, _ in stamped:
            self._tell(event)
        return [event for event, _ in stamped]

    def _tell(self, event: Event) -> None:
        for listener in self.listeners:
            listener(event, self.state)

    async def run(self, started: SessionStarted, agent: AsyncIterator[Event]) -> SessionState:
        """Record `started`, then every event of `agent`, then exactly one SessionEnded.

        Cancellation ends the session as "cancelled" (unless it came as the agent's own
        SessionEnded was being stored: that one stays the end); an exception escaping the agent is
        recorded as an Error and ends it as "failed" (and is not re-raised: it is recorded).
        """
        await self.emit(started)
        return await self.go_on(agent)

    async def go_on(self, agent: AsyncIterator[Event]) -> SessionState:
        """Record every event of `agent`, then exactly one SessionEnded (as `run` does, without
        a start: a session continued, its recorder made by `resume`)."""
        try:
            async for event in agent:
                await self.emit(event)
                if isinstance(event, SessionEnded):
                    return self.state
        except asyncio.CancelledError:
            if self.state.status in OPEN_STATUSES:
                await asyncio.shield(
                    self.emit(SessionEnded(status="cancelled", stopped_reason="cancelled"))
                )
            raise
        except Exception as exc:  # an agent bug or a fault: recorded, never lost
            error = Error(message=str(exc) or type(exc).__name__, kind=type(exc).__name__)
            await self.emit_many([error, SessionEnded(status="failed", stopped_reason=error.kind)])
            return self.state
        finally:
            # An agent stopped between events still holds its browser or sandbox: close it now.
            close = getattr(agent, "aclose", None)
            if close is not None:
                await to_the_end(close())
        await self.emit(SessionEnded(status="completed"))
        return self.state


async def to_the_end(work: Awaitable[T]) -> T:
    """Await `work` until it is done, even when cancelled meanwhile (then re-raise that).

    `asyncio.shield` alone would let the caller go on while the work still runs: an app that
    exits then closes the loop under a browser or sandbox that is still shutting down.
    """
    task = asyncio.ensure_future(work)
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError
    return task.result()
