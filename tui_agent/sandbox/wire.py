"""What goes into a sandbox run and what comes back."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tui_agent.analysis.shapes import OutputAnalysis
from tui_agent.events import ErrorInfo, ExecutionFinished, LogLine


class ExecuteRequest(BaseModel):
    """One piece of code to run in a sandbox, with its inputs."""

    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="constants")

    code: str
    args: list[Any] = Field(default_factory=list)
    context: dict[str, Any] | None = None
    entrypoint: str = Field(default="main", pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    url: str | None = None
    html: str | None = None
    timeout: float = Field(default=30.0, gt=0)


class ExecuteResult(BaseModel):
    """The outcome of one run: value, logs, error, and what happened to the sandbox."""

    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="constants")

    success: bool
    result: Any = None
    items: list[Any] = Field(default_factory=list)
    analysis: OutputAnalysis | None = None
    logs: list[LogLine] = Field(default_factory=list)
    logs_truncated: bool = False
    duration: float = 0.0
    error: ErrorInfo | None = None
    context: dict[str, Any] | None = None
    non_serializable: list[str] = Field(default_factory=list)
    timed_out: bool = False
    killed_reason: str | None = None
    state_lost: bool = False

    def to_event(self, step: int) -> ExecutionFinished:
        """The ExecutionFinished event recording this result as step `step`."""
        return ExecutionFinished(
            step=step,
            success=self.success,
            result=self.result,
            logs=self.logs,
            logs_truncated=self.logs_truncated,
            duration=self.duration,
            error=self.error,
            timed_out=self.timed_out,
            killed_reason=self.killed_reason,
            non_serializable=self.non_serializable,
            context=self.context,
        )

    @classmethod
    def from_event(cls, event: ExecutionFinished) -> ExecuteResult:
        """The result a recorded ExecutionFinished says (what the model was told of it)."""
        return cls(
            success=event.success,
            result=event.result,
            logs=event.logs,
            logs_truncated=event.logs_truncated,
            duration=event.duration,
            error=event.error,
            timed_out=event.timed_out,
            killed_reason=event.killed_reason,
            non_serializable=event.non_serializable,
            context=event.context,
        )


def items_of(result: Any) -> list[Any]:
    """`result` itself when it is a list, else `[result]`; empty when there is no result."""
    if result is None:
        return []
    return result if isinstance(result, list) else [result]


class ToolRequest(BaseModel):
    """A tool call the running code made through the kernel's channel (see kernel.py)."""

    model_config = ConfigDict(extra="ignore")

    id: int
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ToolAnswer(BaseModel):
    """The host's answer to a ToolRequest: the tool's output (a tool error is output too,
    as text starting with "Error:"), or a failure the call raises in the code."""

    model_config = ConfigDict(extra="forbid")

    output: str | None = None
    failure: str | None = None


CallHandler = Callable[[ToolRequest], Awaitable[ToolAnswer]]
"""Answers the tool calls of a run (passed to `execute` as `on_call`)."""
