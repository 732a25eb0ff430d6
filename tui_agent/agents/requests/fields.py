"""Fields several kinds of request share, each declared once with its type and its Option."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated, Any, get_args

from pydantic import AfterValidator, Field, ValidationInfo

from tui_agent.agents.requests.base import Count, Option, Problem, RequestError, Usd
from tui_agent.analysis.shapes import AgentType
from tui_agent.config import ReplyFormChoice, SandboxName, api_base_problem
from tui_agent.events import Sampling

SANDBOX_NAMES: tuple[str, ...] = get_args(SandboxName)
AGENT_TYPES: tuple[str, ...] = get_args(AgentType)

MODEL = Option(
    "litellm model name (default: TUI_AGENT_MODEL or config.toml)",
    flag="--model",
    label="Model (litellm name, e.g. gpt-4o-mini, ollama/qwen2.5-coder)",
    placeholder="(none set) e.g. gpt-4o-mini",
    setting=True,
    common=True,
)
Model = Annotated[str | None, MODEL]
"""The model (None: the configured one)."""
ModelOffForm = Annotated[str | None, dataclasses.replace(MODEL, label=None, placeholder="")]
"""The model of a kind whose form does not ask for one (it may still use the configured one)."""
API_BASE = Option(
    "the model server's URL, http:// or https:// (default: TUI_AGENT_API_BASE or "
    "config.toml, else the provider's own server)",
    flag="--api-base",
    metavar="URL",
    label="API base (the model server's URL; empty: the provider's own)",
    placeholder="(provider's own) e.g. http://localhost:11434",
    setting=True,
    common=True,
    url=True,
)


def _api_base(value: str | None, info: ValidationInfo) -> str | None:
    problem = api_base_problem(value or "")
    if problem:
        raise RequestError(info.field_name, f"{{{info.field_name}}} {problem}")
    return value


ApiBase = Annotated[str | None, AfterValidator(_api_base), API_BASE]
"""The model server (None: the configured one; "": the provider's own)."""
Sandbox = Annotated[
    SandboxName | None,
    Option(
        "backend (default: TUI_AGENT_SANDBOX or auto: docker, else bubblewrap)",
        flag="--sandbox",
        label="Sandbox",
        setting=True,
    ),
]
Workspace = Annotated[
    Path | None,
    Option(
        "host folder mounted at /workspace, shared by the sessions that name it "
        "(default: a fresh folder for each session)",
        flag="--workspace",
        setting=True,
    ),
]
Network = Annotated[bool, Option("let the code reach the network", flag="--network")]
Budget = Annotated[
    Usd | None,
    Option(
        "stop before a model call that would take the cost past this (needs a priced model)",
        flag="--budget",
        metavar="USD",
        label="Budget USD (optional)",
        row="limits",
    ),
]
ContextTokens = Annotated[
    Count | None,
    Option(
        "input tokens the model takes: a conversation's history is fitted into them and an "
        "Ollama model is given that window (default: TUI_AGENT_CONTEXT_TOKENS, else what "
        "litellm knows of the model)",
        flag="--context-tokens",
        metavar="N",
        setting=True,
    ),
]
MaxSteps = Annotated[
    Count,
    Option(
        "model turns at most ({default})",
        flag="--max-steps",
        metavar="N",
        label="Max steps",
        row="limits",
    ),
]
Temperature = Annotated[
    float | None,
    Field(ge=0),
    Problem("must be 0 or more"),
    Option(
        "the model's sampling temperature (default: TUI_AGENT_TEMPERATURE, else the server's)",
        flag="--temperature",
        metavar="T",
        setting=True,
    ),
]
MaxTokens = Annotated[
    Count | None,
    Option(
        "tokens per model reply at most (default: TUI_AGENT_MAX_TOKENS, else the server's)",
        flag="--max-tokens",
        metavar="N",
        setting=True,
    ),
]
TopP = Annotated[
    float | None,
    Field(gt=0, le=1),
    Problem("must be more than 0 and at most 1"),
    Option(
        "nucleus sampling: the probability mass replies are drawn from (default: "
        "TUI_AGENT_TOP_P, else the server's)",
        flag="--top-p",
        metavar="P",
        setting=True,
    ),
]

ReplyFormat = Annotated[
    ReplyFormChoice | None,
    Option(
        "how the model writes its steps: json (one JSON object), fenced (a Thought: line and "
        "a ```python block, what small local models write best) or auto: fenced for a model "
        "at --api-base or on Ollama, else json (default: TUI_AGENT_REPLY_FORMAT, else auto)",
        flag="--reply-format",
        setting=True,
    ),
]


def sampling_of(source: Any) -> Sampling:
    """The sampling settings a request (or the settings) holds; one it has no field for is
    left to the server."""
    return Sampling(**{name: getattr(source, name, None) for name in Sampling.model_fields})
