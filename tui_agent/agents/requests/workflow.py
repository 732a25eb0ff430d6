"""A workflow file's data: nodes run one after another, the context flowing through them.

```json
{"model": "gpt-4o-mini", "budget": 0.05,
 "nodes": [{"id": "extract", "type": "ActionNode", "executor": "cached",
            "prompt": "Extract the total from the invoice", "model": "gpt-4o", "timeout": 30}]}
```

A node's model is its own `model`, else the workflow's, else the default (`--model` or
`TUI_AGENT_MODEL`); the same order holds for `validator_model`, then the node's model.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tui_agent.agents.requests.base import Count, Seconds, Usd

ModelSource = Literal["node", "workflow", "default"]
"""Where a node's model came from."""


class WorkflowNode(BaseModel):
    """One node: a task for the cached executor."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    type: str = "ActionNode"
    executor: Literal["cached"] = "cached"
    prompt: str = Field(min_length=1)
    model: str | None = None
    validator_model: str | None = None
    timeout: Seconds | None = None
    max_attempts: Count | None = None
    budget: Usd | None = None

    @field_validator("prompt")
    @classmethod
    def _not_blank(cls, prompt: str) -> str:
        if not prompt.strip():
            raise ValueError("the prompt is blank: say what the node should do")
        return prompt


class Workflow(BaseModel):
    """A workflow: defaults for its nodes, and the nodes in order."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str | None = None
    validator_model: str | None = None
    budget: Usd | None = None
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
