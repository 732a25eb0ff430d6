"""The run of a task or workflow session (prepared by `tui_agent.agents.launch.task`).

A `TaskSession` runs its nodes in turn, the context flowing through them; its `events()` are
what the SessionRecorder records, and its `context` is the updated context once they are
exhausted (secrets in clear, for the caller to save; `secrets` masks it for printing). Every
event it yields is masked by the secrets learned from the context (module
`tui_agent.redaction`): what is recorded, shown or exported never holds them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from typing import Any

from tui_agent.agents.budget import Budget
from tui_agent.agents.task.context import METADATA_KEY, context_change
from tui_agent.agents.task.executor import TaskEnvironment, TaskNode, TaskRun
from tui_agent.agents.task.spending import Spending
from tui_agent.events import Event, PhaseFinished, PhaseStarted, SessionEnded
from tui_agent.formatting import session_title
from tui_agent.redaction import SecretMask
from tui_agent.sandbox.base import Sandbox


class TaskSession:
    """The events of a task or workflow session; `context` once they are exhausted."""

    def __init__(
        self,
        nodes: list[TaskNode],
        context: dict[str, Any],
        env: TaskEnvironment,
        spending: Spending,
        node_budgets: Sequence[tuple[str, Budget] | None],
        *,
        workflow: bool,
    ) -> None:
        self.nodes = nodes
        self.context: dict[str, Any] = dict(context)
        self.env = env
        self.spending = spending
        self.node_budgets = list(node_budgets) or [None] * len(nodes)
        self.workflow = workflow
        self.completed = False

    @property
    def sandbox(self) -> Sandbox:
        return self.env.sandbox

    @property
    def secrets(self) -> SecretMask:
        """The secrets learned so far (from the context, and from what the runs wrote)."""
        return self.env.secrets

    async def events(self) -> AsyncIterator[Event]:
        """Every event of the run, its secrets masked (see the module docstring)."""
        async with contextlib.aclosing(self._events()) as events:
            async for event in events:
                yield self.env.secrets.masked_event(event)

    async def _events(self) -> AsyncGenerator[Event, None]:
        """Every node in turn, then SessionEnded; the sandbox and the cache are closed last."""
        end = SessionEnded(status="completed")
        self.env.start_sandbox()
        try:
            for node, budget in zip(self.nodes, self.node_budgets, strict=True):
                spending = self.spending.within(*budget) if budget else self.spending
                run = TaskRun(node, self.context, self.env, spending)
                if self.workflow:
                    yield PhaseStarted(phase=node.node_id, detail=session_title(node.task))
                async for event in run.events():
                    yield event
                outcome = run.outcome
                assert outcome is not None
                if self.workflow:
                    yield _node_finished(node.node_id, self.context, outcome.context, outcome.error)
                self.context = outcome.context
                if outcome.status == "failed":
                    if outcome.failure == "budget_exceeded":
                        end = SessionEnded(status="stopped", stopped_reason="budget")
                    else:
                        end = SessionEnded(status="failed", stopped_reason=outcome.failure)
                    break
            self.completed = end.status == "completed"
        finally:
            await asyncio.shield(self.env.close())
        yield end


def _node_finished(
    node_id: str, before: dict[str, Any], after: dict[str, Any], error: str | None
) -> PhaseFinished:
    metadata = after.get(METADATA_KEY) or {}
    seconds = (metadata.get("total_time_ms") or 0) / 1000
    if error is not None:
        return PhaseFinished(phase=node_id, ok=False, duration=seconds, summary=error)
    written = context_change(before, after).written
    keys = ", ".join(written) or "none"
    return PhaseFinished(phase=node_id, duration=seconds, summary=f"wrote {keys}")
