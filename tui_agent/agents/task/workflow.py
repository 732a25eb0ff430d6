"""Workflow files: nodes run one after another, the context flowing through them.

```json
{"model": "gpt-4o-mini", "budget": 0.05,
 "nodes": [{"id": "extract", "type": "ActionNode", "executor": "cached",
            "prompt": "Extract the total from the invoice", "model": "gpt-4o", "timeout": 30}]}
```

A node's model is its own `model`, else the workflow's, else the default (`--model` or
`TUI_AGENT_MODEL`); the same order holds for `validator_model`, then the node's model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from tui_agent.agents.task.metadata import ModelSource
from tui_agent.errors import UserError


class WorkflowError(UserError):
    """A workflow file that cannot be run (one line naming the file and the problem)."""


class WorkflowNode(BaseModel):
    """One node: a task for the cached executor."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    type: str = "ActionNode"
    executor: Literal["cached"] = "cached"
    prompt: str = Field(min_length=1)
    model: str | None = None
    validator_model: str | None = None
    timeout: float | None = Field(default=None, gt=0)
    max_attempts: int | None = Field(default=None, ge=1)
    budget: float | None = Field(default=None, gt=0)

    @field_validator("prompt")
    @classmethod
    def _not_blank(cls, prompt: str) -> str:
        if not prompt.strip():
            raise ValueError("the prompt is blank: say what the node should do")
        return prompt


class Workflow(BaseModel):
    """A workflow: defaults for its nodes, and the nodes in order."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = None
    validator_model: str | None = None
    budget: float | None = Field(default=None, gt=0)
    nodes: list[WorkflowNode] = Field(min_length=1)

    @field_validator("nodes")
    @classmethod
    def _unique_ids(cls, nodes: list[WorkflowNode]) -> list[WorkflowNode]:
        seen: set[str] = set()
        for node in nodes:
            if node.id in seen:
                raise ValueError(f"two nodes have the id {node.id!r}")
            seen.add(node.id)
        return nodes

    def resolve_model(
        self, node: WorkflowNode, default: str | None
    ) -> tuple[str | None, ModelSource]:
        """The node's model and where it came from: node > workflow > default."""
        if node.model:
            return node.model, "node"
        if self.model:
            return self.model, "workflow"
        return default, "default"

    def resolve_validator(self, node: WorkflowNode, default: str | None) -> str | None:
        """The node's validator model: node > workflow > `default` (None: the node's model)."""
        return node.validator_model or self.validator_model or default


def _describe(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "the file"
    message = first["msg"].removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        message = "unknown key (check its spelling)"
    if first["type"] == "literal_error" and first["loc"][-1] == "executor":
        message = f'executor {first.get("input")!r} is not supported; use "cached"'
    return f"{where}: {message}"


def parse_workflow(data: Any, source: str) -> Workflow:
    """A workflow from decoded JSON; WorkflowError names `source` and the first problem."""
    if not isinstance(data, dict):
        raise WorkflowError(f"workflow {source} must be a JSON object with a 'nodes' list")
    try:
        return Workflow.model_validate(data)
    except ValidationError as exc:
        raise WorkflowError(f"workflow {source}: {_describe(exc)}") from None


def load_workflow(path: Path) -> Workflow:
    """The workflow in the JSON file at `path`."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise WorkflowError(f"cannot read workflow {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise WorkflowError(f"workflow {path} is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise WorkflowError(
            f"workflow {path} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    return parse_workflow(data, str(path))
