"""`_ai_metadata`: what a task's result says about how it was made.

The keys are those of the task executor's specification (model, prompt_task, generated_code,
code_length, tokens_input_estimated, tokens_output_estimated, cost_usd_estimated,
generation_time_ms, execution_time_ms, total_time_ms, attempts, cache_hit, tool_calling_enabled,
tool_calls, total_tool_calls, two_stage_enabled, ai_self_determined, stages_used,
analysis_metadata; all_attempts, final_error and status on failure), plus a few it lacks:
where the model came from, the validator, the number of model calls, and whether the token
figures are the provider's (`usage_source`: "provider", "estimated" where the provider sent
no usage, "mixed", or "none" without a model call). The token and cost keys keep their
specified names but hold the provider's own figures wherever it reports them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from tui_agent.agents.requests.workflow import ModelSource
from tui_agent.agents.task.prompts import FailedAttempt
from tui_agent.events import LLMCall

FailureStatus = Literal[
    "failed_after_retries", "budget_exceeded", "model_unreachable", "sandbox_unreachable",
    "model_error", "circuit_open",
]  # fmt: skip


@dataclass
class AnalysisRecord:
    """The analysis stage of a task: its code, what it found and what it took."""

    code: str
    result: Any
    generation_seconds: float
    execution_seconds: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "analysis_code": self.code,
            "analysis_result": self.result,
            "generation_time_ms": _ms(self.generation_seconds),
            "execution_time_ms": _ms(self.execution_seconds),
        }


@dataclass
class TaskTrace:
    """Everything a task's metadata is made from, gathered while it runs."""

    task: str
    model: str | None
    model_source: ModelSource
    validator_model: str | None
    tool_calling: bool
    calls: list[LLMCall] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    generation_seconds: float = 0.0
    execution_seconds: float = 0.0
    attempts: int = 0
    failures: list[FailedAttempt] = field(default_factory=list)
    analysis: AnalysisRecord | None = None
    code: str = ""
    cache_match: Literal["exact", "semantic"] | None = None
    validation: dict[str, Any] | None = None

    def usage_source(self) -> str:
        if not self.calls:
            return "none"
        estimated = {call.estimated for call in self.calls}
        if estimated == {False}:
            return "provider"
        return "estimated" if estimated == {True} else "mixed"

    def cost(self) -> float | None:
        """USD of every call; None when a call had no price (never a made-up 0)."""
        if any(call.cost is None for call in self.calls):
            return None
        return round(sum(call.cost or 0.0 for call in self.calls), 8)

    def as_metadata(
        self,
        total_seconds: float,
        *,
        status: Literal["success"] | FailureStatus = "success",
        final_error: str | None = None,
    ) -> dict[str, Any]:
        """The `_ai_metadata` dict."""
        metadata: dict[str, Any] = {
            "model": self.model,
            "model_source": self.model_source,
            "validator_model": self.validator_model,
            "prompt_task": self.task,
            "generated_code": self.code,
            "code_length": len(self.code),
            "tokens_input_estimated": sum(call.prompt_tokens for call in self.calls),
            "tokens_output_estimated": sum(call.completion_tokens for call in self.calls),
            "cost_usd_estimated": self.cost(),
            "usage_source": self.usage_source(),
            "model_calls": len(self.calls),
            "generation_time_ms": _ms(self.generation_seconds),
            "execution_time_ms": _ms(self.execution_seconds),
            "total_time_ms": _ms(total_seconds),
            "attempts": self.attempts,
            "cache_hit": self.cache_match is not None,
            "cache_match": self.cache_match,
            "tool_calling_enabled": self.tool_calling,
            "tool_calls": list(self.tool_calls),
            "total_tool_calls": len(self.tool_calls),
            "two_stage_enabled": True,
            "ai_self_determined": self.cache_match is None,
            "stages_used": 2 if self.analysis is not None else 1,
            "analysis_metadata": self.analysis.as_dict() if self.analysis else None,
            "output_validation": self.validation,
            "status": status,
        }
        if status != "success":
            metadata["all_attempts"] = [
                {"attempt": f.attempt, "error": f.error, "code": f.code} for f in self.failures
            ]
            metadata["final_error"] = final_error
        return metadata


def _ms(seconds: float) -> int:
    return round(seconds * 1000)
