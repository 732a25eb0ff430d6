"""Task and workflow sessions: everything checked before recording, then the run.

`task_session` and `workflow_session` refuse bad input with one line (an empty task, a
context that is not an object, no model, a model litellm does not know or whose key is
missing, a budget on an unpriced model, a missing sandbox) and return the SessionStarted and
a `TaskSession` whose `events()` the SessionRunner records. Its `context` is the updated
context once the run ended (secrets in clear, for the caller to save; `secrets` masks it for
printing). Every event it yields is masked by the secrets learned from the context (module
`tui_agent.redaction`): what is recorded, shown or exported never holds them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_agent.agents.budget import Budget
from tui_agent.agents.task.breaker import BREAKER, CircuitBreaker
from tui_agent.agents.task.cache import CodeCache
from tui_agent.agents.task.context import METADATA_KEY, context_change
from tui_agent.agents.task.executor import TaskEnvironment, TaskNode, TaskOptions, TaskRun
from tui_agent.agents.task.spending import Spending
from tui_agent.agents.task.workflow import Workflow, WorkflowNode
from tui_agent.config import ConfigError, Settings
from tui_agent.events import Event, PhaseFinished, PhaseStarted, SessionEnded, SessionStarted
from tui_agent.llm import LLM, price_known
from tui_agent.llm.provider import tools_supported
from tui_agent.redaction import SecretMask
from tui_agent.sandbox.base import Sandbox
from tui_agent.sandbox.choose import open_sandbox

TITLE_LIMIT = 80


@dataclass(frozen=True)
class TaskLimits:
    """Limits given on the command line (a workflow node's own settings win)."""

    timeout: float = 30.0
    max_attempts: int = 3
    budget: float | None = None
    use_cache: bool = True


def _title(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= TITLE_LIMIT else line[: TITLE_LIMIT - 1] + "…"


def _check_limits(limits: TaskLimits) -> None:
    if limits.timeout <= 0:
        raise ConfigError("the timeout must be a positive number of seconds")
    if limits.max_attempts < 1:
        raise ConfigError("max attempts must be at least 1")
    if limits.budget is not None and limits.budget <= 0:
        raise ConfigError("the budget must be a positive amount of USD")


class _Models:
    """One LLM per model name, each checked once (known to litellm, its key set)."""

    def __init__(self, settings: Settings, priced: bool) -> None:
        self.settings = settings
        self.priced = priced
        self._made: dict[str, LLM] = {}

    def get(self, model: str | None, what: str) -> LLM:
        if not model:
            raise ConfigError(f"no model for {what}: pass --model or set TUI_AGENT_MODEL")
        if model not in self._made:
            llm = LLM(model, api_base=self.settings.api_base)
            if self.priced and not price_known(model):
                raise ConfigError(
                    f"a budget needs the model's price, and litellm has none for {model}; "
                    "drop the budget or choose a priced model"
                )
            self._made[model] = llm
        return self._made[model]


def _node(
    models: _Models,
    node_id: str,
    task: str,
    model: tuple[str | None, Any],
    validator_model: str | None,
    options: TaskOptions,
    node_type: str,
) -> TaskNode:
    what = f"node {node_id}" if node_type != "task" else "the task"
    llm = models.get(model[0], what)
    validator = models.get(validator_model or llm.model, f"the validator of {what}")
    return TaskNode(
        node_id=node_id,
        task=task,
        llm=llm,
        validator=validator,
        model_source=model[1],
        node_type=node_type,
        options=options,
        text_protocol=not tools_supported(llm.model, llm.api_base),
    )


def _isolated(sandbox: Sandbox) -> Sandbox:
    """`sandbox`, unless it is not isolated: model-written code runs unattended here."""
    if not sandbox.isolated:
        raise ConfigError(
            f"the {sandbox.name} sandbox is not isolated, and a task runs model-written code "
            "with nobody to approve it: use --sandbox docker or bubblewrap"
        )
    return sandbox


def _started(
    title: str,
    model: str,
    params: dict[str, Any],
    context: dict[str, Any],
    sandbox: Sandbox,
    limits: TaskLimits,
    secrets: SecretMask,
) -> SessionStarted:
    """The SessionStarted of a task session: the context given is kept (secrets masked)."""
    started = SessionStarted(
        kind="task",
        title=_title(title),
        model=model,
        params={**params, "cache": limits.use_cache, "sandbox": sandbox.name},
        agent_type="transformer",
        test_context={"context": context},
    )
    return secrets.masked_event(started)


def _context(context: Any) -> dict[str, Any]:
    if not isinstance(context, dict):
        raise ConfigError(f"the context must be a JSON object, not {type(context).__name__}")
    return context


def task_session(
    task: str,
    context: Any,
    *,
    settings: Settings,
    session_id: str,
    validator_model: str | None = None,
    limits: TaskLimits = TaskLimits(),
    cache: CodeCache | None = None,
    sandbox_name: str | None = None,
    workspace: Path | None = None,
    breaker: CircuitBreaker = BREAKER,
) -> tuple[SessionStarted, TaskSession]:
    """One task as a session (see the module docstring)."""
    if not task.strip():
        raise ConfigError("the task is empty: say what the code should do")
    context = _context(context)
    _check_limits(limits)
    models = _Models(settings, priced=limits.budget is not None)
    options = TaskOptions(limits.timeout, limits.max_attempts, limits.use_cache)
    node = _node(
        models, "task", task, (settings.model, "default"), validator_model, options, "task"
    )
    sandbox = _isolated(
        open_sandbox(sandbox_name or settings.sandbox, workspace=workspace or settings.workspace)
    )
    params = {
        "task": task,
        "validator_model": node.validator.model,
        "timeout": limits.timeout,
        "max_attempts": limits.max_attempts,
        "budget": limits.budget,
    }
    secrets = SecretMask.of(context)
    started = _started(task, node.llm.model, params, context, sandbox, limits, secrets)
    budgets = [("task", Budget(node.llm.model, limits.budget))] if limits.budget else []
    env = TaskEnvironment(
        sandbox, session_id, breaker, cache if limits.use_cache else None, secrets
    )
    return started, TaskSession([node], context, env, Spending(budgets), [], workflow=False)


def workflow_session(
    workflow: Workflow,
    context: Any,
    *,
    title: str,
    settings: Settings,
    session_id: str,
    validator_model: str | None = None,
    limits: TaskLimits = TaskLimits(),
    cache: CodeCache | None = None,
    sandbox_name: str | None = None,
    workspace: Path | None = None,
    breaker: CircuitBreaker = BREAKER,
) -> tuple[SessionStarted, TaskSession]:
    """A workflow as one session, node by node (see the module docstring)."""
    context = _context(context)
    _check_limits(limits)
    priced = limits.budget is not None or workflow.budget is not None
    priced = priced or any(node.budget is not None for node in workflow.nodes)
    models = _Models(settings, priced=priced)
    nodes = [
        _workflow_node(models, workflow, node, settings, validator_model, limits)
        for node in workflow.nodes
    ]
    budgets = {node.id: node.budget for node in workflow.nodes if node.budget is not None}
    sandbox = _isolated(
        open_sandbox(sandbox_name or settings.sandbox, workspace=workspace or settings.workspace)
    )
    params = {
        "workflow": workflow.model_dump(exclude_none=True),
        "nodes": [node.node_id for node in nodes],
        "budget": workflow.budget or limits.budget,
    }
    secrets = SecretMask.of(context)
    started = _started(title, nodes[0].llm.model, params, context, sandbox, limits, secrets)
    limit = workflow.budget or limits.budget
    overall = [("workflow", Budget(nodes[0].llm.model, limit))] if limit else []
    node_budgets = [
        (node.node_id, Budget(node.llm.model, budgets[node.node_id]))
        if node.node_id in budgets
        else None
        for node in nodes
    ]
    env = TaskEnvironment(
        sandbox, session_id, breaker, cache if limits.use_cache else None, secrets
    )
    return started, TaskSession(nodes, context, env, Spending(overall), node_budgets, workflow=True)


def _workflow_node(
    models: _Models,
    workflow: Workflow,
    node: WorkflowNode,
    settings: Settings,
    validator_model: str | None,
    limits: TaskLimits,
) -> TaskNode:
    options = TaskOptions(
        timeout=node.timeout or limits.timeout,
        max_attempts=node.max_attempts or limits.max_attempts,
        use_cache=limits.use_cache,
    )
    return _node(
        models,
        node.id,
        node.prompt,
        workflow.resolve_model(node, settings.model),
        workflow.resolve_validator(node, validator_model),
        options,
        node.type,
    )


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
                    yield PhaseStarted(phase=node.node_id, detail=_title(node.task))
                async for event in run.events():
                    yield event
                outcome = run.outcome
                assert outcome is not None
                if self.workflow:
                    yield _node_finished(node.node_id, self.context, outcome.context, outcome.error)
                self.context = outcome.context
                if outcome.status == "failed":
                    status = "stopped" if outcome.failure == "budget_exceeded" else "failed"
                    reason = "budget" if status == "stopped" else outcome.failure
                    end = SessionEnded(status=status, stopped_reason=reason)
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
