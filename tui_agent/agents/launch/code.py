"""Starting a code session: the CodeAct agent on a CodeRequest."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tui_agent.agents.codeact import run_codeact
from tui_agent.agents.launch.checks import (
    BUDGET_ADVICE,
    ModelOptions,
    approval,
    model_for,
    model_maker,
    sandbox_for,
)
from tui_agent.agents.launch.prepared import Launch, Provided
from tui_agent.agents.requests import CodeRequest
from tui_agent.agents.step_loop import StepLimits
from tui_agent.events import SessionStarted
from tui_agent.formatting import session_title

if TYPE_CHECKING:
    from tui_agent.config import Settings

TEST_CONTEXT: dict[str, Any] = {"args": []}
"""What each step's code runs with (no args, context, url or html): its test context."""


def start_code(request: CodeRequest, settings: Settings, provided: Provided) -> Launch:
    """The agent of a code session. The sandbox starts when the events are first iterated
    and is closed when they end, however they end."""
    options = ModelOptions.of(request)
    llm = model_for(
        request.model,
        options,
        priced=request.budget is not None,
        budget_advice=BUDGET_ADVICE,
    )
    sandbox = sandbox_for(request.sandbox, request.workspace, network=request.network)
    approver = approval(request.approve, sandbox, provided.approver, "run")
    form = llm.reply_form
    started = SessionStarted(
        kind="code",
        title=session_title(request.task),
        model=llm.model,
        params={
            "task": request.task,
            "max_steps": request.max_steps,
            "budget": request.budget,
            "sandbox": sandbox.name,
            "network": request.network,
            "approve": approver is not None,
            "timeout": request.timeout,
            "reply_format": form.name,
        },
        agent_type=request.agent_type,
        test_context=dict(TEST_CONTEXT),
        request=request.to_json(),
    )
    limits = StepLimits(
        max_steps=request.max_steps,
        budget=request.budget,
        timeout=request.timeout,
        context_tokens=request.context_tokens or llm.context_window,
    )
    events = run_codeact(
        request.task,
        llm=llm,
        sandbox=sandbox,
        limits=limits,
        approver=approver,
        network=request.network,
        conversation=provided.conversation,
        make_model=model_maker(options, priced=request.budget is not None),
        continuation=provided.continuation,
        form=form,
    )
    return Launch(
        request,
        started,
        events,
        provided.session_id,
        approval=approver is not None,
        conversation=provided.conversation,
    )
