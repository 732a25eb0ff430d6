"""The request of a code session: a task for the CodeAct agent, with its limits."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from tui_agent.agents.requests.base import Option, RequestBase, Seconds, non_blank
from tui_agent.agents.requests.fields import (
    ApiBase,
    Budget,
    ContextTokens,
    MaxSteps,
    MaxTokens,
    Model,
    Network,
    ReplyFormat,
    Sandbox,
    Temperature,
    TopP,
    Workspace,
)
from tui_agent.analysis.shapes import AgentType


class CodeRequest(RequestBase):
    """`tui-agent code "TASK"`: the agent writes Python, runs it, reads, answers."""

    kind: Literal["code"] = "code"
    approval_unit: ClassVar[str | None] = "run"
    conversational: ClassVar[bool] = True
    summary: ClassVar[str] = "give the CodeAct agent a task"

    model: Model = None
    api_base: ApiBase = None
    task: Annotated[
        str,
        Option(
            "what the agent should do, in words",
            metavar="TASK",
            label="Task for the agent",
            placeholder="Calculate compound interest on 15k at 6%…",
        ),
        non_blank("the task is empty. What should the agent do?"),
    ]
    max_steps: MaxSteps = 10
    budget: Budget = None
    approve: Annotated[
        bool,
        Option(
            "ask before each run: run, skip or edit (always on with --sandbox local)",
            flag="--approve",
            label="Ask before each run (always on for local)",
        ),
    ] = False
    sandbox: Sandbox = None
    network: Network = False
    workspace: Workspace = None
    timeout: Annotated[
        Seconds, Option("seconds per run ({default:g})", flag="--timeout", metavar="S")
    ] = 60.0
    context_tokens: ContextTokens = None
    temperature: Temperature = None
    max_tokens: MaxTokens = None
    top_p: TopP = None
    reply_format: ReplyFormat = None
    agent_type: Annotated[
        AgentType,
        Option(
            "what the code does; feedback forms and refinement prompts follow it "
            "(default: {default})",
            flag="--agent-type",
        ),
    ] = "generic"
