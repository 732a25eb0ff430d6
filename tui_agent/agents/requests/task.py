"""The requests of task and workflow sessions, and a workflow's nodes as task requests.

A workflow node is a task request of its own: its prompt is the task, its model is the node's,
else the workflow's, else the request's (`--model` or the configured one); the same order
holds for the validator, then the node's model; its timeout and attempts are the node's, else
the request's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from tui_agent.agents.requests.base import Count, Option, RequestBase, Seconds, non_blank
from tui_agent.agents.requests.fields import (
    ApiBase,
    Budget,
    ContextTokens,
    MaxTokens,
    Model,
    Sandbox,
    Temperature,
    TopP,
    Workspace,
)
from tui_agent.agents.requests.workflow import ModelSource, Workflow

Context = Annotated[
    dict[str, Any],
    Option(
        "a JSON object: the data the code works on ('-': standard input)",
        flag="--context",
        metavar="ctx.json",
        label="Context: a JSON file holding an object (optional)",
        placeholder="path/to/context.json",
        reader="json_object_file",
        keeps_path="context_file",
    ),
]
ContextFile = str | None
"""The file the context was read from ("-": standard input), for display."""
ValidatorModel = Annotated[
    str | None,
    Option("the model that judges the output (default: --model)", flag="--validator-model",
           metavar="M"),
]  # fmt: skip
TaskTimeout = Annotated[
    Seconds,
    Option(
        "seconds per run ({default:g})",
        flag="--timeout",
        metavar="S",
        label="Timeout (seconds)",
        row="limits",
    ),
]
MaxAttempts = Annotated[
    Count,
    Option(
        "attempts per task ({default})",
        flag="--max-attempts",
        metavar="N",
        label="Max attempts",
        row="limits",
    ),
]
UseCache = Annotated[
    bool,
    Option(
        "always generate: neither use nor fill the code cache",
        flag="--no-cache",
        label="Use the code cache (no model call for a task done before)",
    ),
]
DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_ATTEMPTS = 3


class TaskRequest(RequestBase):
    """`tui-agent task "PROMPT"`: a task and a context become checked, cached Python that
    updates the context."""

    kind: Literal["task"] = "task"
    summary: ClassVar[str] = "a task and a context become checked, cached code"

    model: Model = None
    api_base: ApiBase = None
    task: Annotated[
        str,
        Option(
            "what the code should do, in words",
            metavar="PROMPT",
            label="Task",
            placeholder="Calculate the discount: 10% if total > 1000",
        ),
        non_blank("the task is empty. What should the code do?"),
    ]
    context: Context = {}
    context_file: ContextFile = None
    validator_model: ValidatorModel = None
    timeout: TaskTimeout = DEFAULT_TIMEOUT
    max_attempts: MaxAttempts = DEFAULT_MAX_ATTEMPTS
    budget: Budget = None
    use_cache: UseCache = True
    sandbox: Sandbox = None
    workspace: Workspace = None
    context_tokens: ContextTokens = None
    temperature: Temperature = None
    max_tokens: MaxTokens = None
    top_p: TopP = None


@dataclass(frozen=True)
class NodeRequest:
    """One node of a workflow (or the one task of a task session) as a task request, with
    the node's id and type and where its model came from."""

    node_id: str
    node_type: str
    model_source: ModelSource
    request: TaskRequest


class WorkflowRequest(RequestBase):
    """`tui-agent workflow run FILE.json`: task nodes run one after another in one session,
    the context flowing through them."""

    kind: Literal["workflow"] = "workflow"
    summary: ClassVar[str] = "task nodes run one after another, the context flowing through"

    model: Model = None
    api_base: ApiBase = None
    workflow: Annotated[
        Workflow,
        Option(
            "the workflow: task nodes and their settings",
            metavar="FILE.json",
            reader="workflow_file",
            keeps_path="workflow_file",
        ),
    ]
    workflow_file: str | None = None
    context: Context = {}
    context_file: ContextFile = None
    validator_model: ValidatorModel = None
    timeout: TaskTimeout = DEFAULT_TIMEOUT
    max_attempts: MaxAttempts = DEFAULT_MAX_ATTEMPTS
    budget: Budget = None
    use_cache: UseCache = True
    sandbox: Sandbox = None
    workspace: Workspace = None
    context_tokens: ContextTokens = None
    temperature: Temperature = None
    max_tokens: MaxTokens = None
    top_p: TopP = None

    @property
    def title(self) -> str:
        count = len(self.workflow.nodes)
        nodes = f"{count} node{'s' if count != 1 else ''}"
        name = Path(self.workflow_file).name if self.workflow_file else None
        return f"workflow {name} ({nodes})" if name else f"workflow ({nodes})"

    @property
    def overall_budget(self) -> float | None:
        """The budget of the whole run: the workflow's, else the request's."""
        return self.workflow.budget or self.budget

    def nodes(self) -> list[NodeRequest]:
        """Each node as a task request (see the module docstring); the context is the
        request's, as it flows into the first node."""
        planned = []
        for node in self.workflow.nodes:
            model, source = self.workflow.resolve_model(node, self.model)
            request = TaskRequest(
                model=model,
                task=node.prompt,
                context=self.context,
                validator_model=self.workflow.resolve_validator(node, self.validator_model),
                timeout=node.timeout or self.timeout,
                max_attempts=node.max_attempts or self.max_attempts,
                budget=node.budget,
                use_cache=self.use_cache,
                sandbox=self.sandbox,
                workspace=self.workspace,
                api_base=self.api_base,
                context_tokens=self.context_tokens,
                temperature=self.temperature,
                max_tokens=self.max_tokens,
                top_p=self.top_p,
            )
            planned.append(NodeRequest(node.id, node.type, source, request))
        return planned
