"""Fields several kinds of request share, each declared once with its type and its Option."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated, get_args

from tui_agent.agents.requests.base import Count, Option, Usd
from tui_agent.analysis.shapes import AgentType
from tui_agent.config import SandboxName

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
ApiBase = Annotated[
    str | None,
    Option(
        "the model server's URL (default: TUI_AGENT_API_BASE or the provider's)",
        flag="--api-base",
        metavar="URL",
        setting=True,
    ),
]
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
        "input tokens the model takes; the history is fitted into them (default: "
        "TUI_AGENT_CONTEXT_TOKENS, else what litellm knows of the model)",
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
