"""The user's side of a conversation: what a front end says to a session while it lives.

A `Conversation` is handed to the step loop of a chat-like agent (CodeAct, tool code) and kept
by the front end (the TUI's message line). `say` gives the agent a message: between turns it
opens the next turn; during a run it is queued and given to the model before its next step.
`interrupt` stops the current model reply or code run, leaving the session waiting. `end` says
no more messages will come: the session ends once its current turn does. A session started
without one runs one turn and ends, as a headless command does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

MODEL_COMMAND = "/model"


@dataclass(frozen=True)
class ModelSwitch:
    """`/model NAME`: the next model calls use `model`."""

    model: str


def read_message(text: str) -> str | ModelSwitch:
    """A message as typed: a `/model NAME` command, or text for the model."""
    head, _, rest = text.strip().partition(" ")
    if head == MODEL_COMMAND and rest.strip():
        return ModelSwitch(rest.strip())
    return text


class Conversation:
    """Messages for a session, an interrupt for its current run, and its end (see the
    module). Used from the event loop the session runs on."""

    def __init__(self) -> None:
        self._inbox: asyncio.Queue[str | None] = asyncio.Queue()
        self._ended = False
        self._run: asyncio.Task[None] | None = None
        self.queued: list[str] = []
        """Messages said while a run went on, not yet given to the model (shown as queued)."""
        self.listeners: list[Callable[[], None]] = []
        """Told when `queued` or `busy` changes (a front end redraws its message line)."""

    @property
    def ended(self) -> bool:
        return self._ended

    @property
    def busy(self) -> bool:
        """A run goes on: a message said now is queued."""
        return self._run is not None and not self._run.done()

    def say(self, text: str) -> None:
        """Give the session a message (queued while a run goes on). Ignored once ended."""
        if self._ended or not text.strip():
            return
        if self.busy:
            self.queued.append(text)
            self._changed()
        else:
            self._inbox.put_nowait(text)

    def interrupt(self) -> bool:
        """Stop the current run (the model's reply or the code running); True when one was
        going on. The session then waits for the next message."""
        if not self.busy:
            return False
        assert self._run is not None
        self._run.cancel()
        return True

    def end(self) -> None:
        """No more messages: the session ends when its current turn does."""
        if not self._ended:
            self._ended = True
            self._inbox.put_nowait(None)
            self._changed()

    async def next_message(self) -> str | None:
        """The next message said between turns (queued ones first); None once ended."""
        if self.queued:
            text = self.queued.pop(0)
            self._changed()
            return text
        if self._ended and self._inbox.empty():
            return None
        return await self._inbox.get()

    def take_queued(self) -> list[str]:
        """The messages queued during the current run, taken to give the model now."""
        taken, self.queued = self.queued, []
        if taken:
            self._changed()
        return taken

    def running(self, run: asyncio.Task[None] | None) -> None:
        """The step loop's run under way (None: none): what `interrupt` cancels."""
        self._run = run
        self._changed()

    def _changed(self) -> None:
        for listener in list(self.listeners):
            listener()
