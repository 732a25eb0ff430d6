"""Starting task and workflow sessions: every node a task request, checked before recording.

A task session is a workflow of one node. Refused before anything is recorded: no model, a
model litellm does not know or whose key is missing, a budget on an unpriced model, a sandbox
that is missing or does not isolate (model-written code runs here with nobody to approve it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tui_agent.agents.budget import Budget
from tui_agent.agents.launch.checks import ModelOptions, model_for, sandbox_for
from tui_agent.agents.launch.prepared import Launch, Provided
from tui_agent.agents.requests import NodeRequest, RequestError, TaskRequest, WorkflowRequest
from tui_agent.agents.task.breaker import BREAKER
from tui_agent.agents.task.executor import TaskEnvironment, TaskNode, TaskOptions
from tui_agent.agents.task.session import TaskSession
from tui_agent.agents.task.spending import Spending
from tui_agent.events import SessionStarted
from tui_agent.formatting import session_title
from tui_agent.llm import LLM
from tui_agent.llm.provider import tools_supported
from tui_agent.redaction import SecretMask, masked_start
from tui_agent.sandbox.base import Sandbox

if TYPE_CHECKING:
    from tui_agent.config import Settings


class _Models:
    """One LLM per model name, each checked once (known to litellm, its key set)."""

    def __init__(self, options: ModelOptions, priced: bool) -> None:
        self.options = options
        self.priced = priced
        self._made: dict[str, LLM] = {}

    def get(self, model: str | None, what: str) -> LLM:
        if model and model in self._made:
            return self._made[model]
        llm = model_for(model, self.options, what=what, priced=self.priced)
        self._made[llm.model] = llm
        return llm


def _node(models: _Models, planned: NodeRequest, *, workflow: bool) -> TaskNode:
    request = planned.request
    node = f"node {planned.node_id}" if workflow else "the task"
    llm = models.get(request.model, f"for {node}")
    validator = models.get(request.validator_model or llm.model, f"for the validator of {node}")
    return TaskNode(
        node_id=planned.node_id,
        task=request.task,
        llm=llm,
        validator=validator,
        model_source=planned.model_source,
        node_type=planned.node_type,
        options=TaskOptions(request.timeout, request.max_attempts, request.use_cache),
        text_protocol=not tools_supported(llm.model, llm.api_base),
    )


def _isolated(sandbox: Sandbox) -> Sandbox:
    """`sandbox`, unless it is not isolated: model-written code runs unattended here."""
    if not sandbox.isolated:
        raise RequestError(
            "sandbox",
            f"the {sandbox.name} sandbox is not isolated, and a task runs model-written code "
            "with nobody to approve it: use {sandbox} docker or bubblewrap",
        )
    return sandbox


def _started(
    request: TaskRequest | WorkflowRequest,
    title: str,
    model: str,
    params: dict[str, Any],
    sandbox: Sandbox,
    secrets: SecretMask,
) -> SessionStarted:
    """The SessionStarted of a task session: the context given and the request are kept
    with their secrets masked."""
    started = SessionStarted(
        kind="task",
        title=session_title(title),
        model=model,
        params={**params, "cache": request.use_cache, "sandbox": sandbox.name},
        agent_type="transformer",
        test_context={"context": request.context},
        request=request.to_json(),
    )
    return masked_start(started, secrets)


def start_task(request: TaskRequest, settings: Settings, provided: Provided) -> Launch:
    """One task as a session (see the module docstring)."""
    models = _Models(ModelOptions.of(request), priced=request.budget is not None)
    node = _node(models, NodeRequest("task", "task", "default", request), workflow=False)
    sandbox = _isolated(sandbox_for(request.sandbox, request.workspace))
    params = {
        "task": request.task,
        "validator_model": node.validator.model,
        "timeout": request.timeout,
        "max_attempts": request.max_attempts,
        "budget": request.budget,
    }
    secrets = SecretMask.of(request.context)
    started = _started(request, request.task, node.llm.model, params, sandbox, secrets)
    budgets = [("task", Budget(node.llm.model, request.budget))] if request.budget else []
    session = TaskSession(
        [node], request.context, _environment(request, sandbox, provided, secrets),
        Spending(budgets), [], workflow=False,
    )  # fmt: skip
    return Launch(request, started, session.events(), provided.session_id, task=session)


def start_workflow(request: WorkflowRequest, settings: Settings, provided: Provided) -> Launch:
    """A workflow as one session, node by node (see the module docstring)."""
    planned = request.nodes()
    overall = request.overall_budget
    priced = overall is not None or any(p.request.budget is not None for p in planned)
    models = _Models(ModelOptions.of(request), priced=priced)
    nodes = [_node(models, node, workflow=True) for node in planned]
    sandbox = _isolated(sandbox_for(request.sandbox, request.workspace))
    params = {
        "workflow": request.workflow.model_dump(exclude_none=True),
        "nodes": [node.node_id for node in nodes],
        "budget": overall,
    }
    secrets = SecretMask.of(request.context)
    started = _started(request, request.title, nodes[0].llm.model, params, sandbox, secrets)
    spending = Spending([("workflow", Budget(nodes[0].llm.model, overall))] if overall else [])
    node_budgets = [
        (node.node_id, Budget(node.llm.model, plan.request.budget)) if plan.request.budget else None
        for node, plan in zip(nodes, planned, strict=True)
    ]
    environment = _environment(request, sandbox, provided, secrets)
    session = TaskSession(
        nodes, request.context, environment, spending, node_budgets, workflow=True
    )
    return Launch(request, started, session.events(), provided.session_id, task=session)


def _environment(
    request: TaskRequest | WorkflowRequest,
    sandbox: Sandbox,
    provided: Provided,
    secrets: SecretMask,
) -> TaskEnvironment:
    cache = provided.cache if request.use_cache else None
    breaker = provided.breaker or BREAKER
    return TaskEnvironment(sandbox, provided.session_id, breaker, cache, secrets)
