"""The checks every starter makes before anything is recorded, each failure a RequestError
naming its field: the model (set, known to litellm, its key present, priced for a budget),
the sandbox backend, approval, the start page."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tui_agent.agents.approval import Approver
from tui_agent.agents.requests import RequestError
from tui_agent.agents.requests.fields import sampling_of
from tui_agent.config import ReplyFormChoice
from tui_agent.events import Sampling
from tui_agent.llm import LLM, LLMError, price_known
from tui_agent.sandbox.base import Sandbox, SandboxError
from tui_agent.sandbox.choose import open_sandbox
from tui_agent.web.browser import BrowserError

if TYPE_CHECKING:
    from pathlib import Path

    from tui_agent.config import Settings


@dataclass(frozen=True)
class ModelOptions:
    """How a session reaches and drives its models: the server, the context window, the
    sampling (each None: the provider's), the form of CodeAct's replies (None: auto)."""

    api_base: str | None = None
    context_tokens: int | None = None
    sampling: Sampling | None = None
    reply_format: ReplyFormChoice | None = None

    @classmethod
    def of(cls, request: Any) -> ModelOptions:
        """The options a request (or the settings) gives; those it has no field for: unset
        (an API base given empty: the provider's own server)."""
        return cls(
            getattr(request, "api_base", None) or None,
            getattr(request, "context_tokens", None),
            sampling_of(request),
            getattr(request, "reply_format", None),
        )


def model_for(
    model: str | None,
    options: ModelOptions,
    *,
    what: str = "",
    priced: bool = False,
    budget_advice: str = "drop {budget} or choose a priced model",
) -> LLM:
    """The LLM of `model` with `options`, checked offline (`what`: "for the task", "for node
    x"...); a budget (`priced`) needs litellm to know its price."""
    if not model:
        raise RequestError("model", f"no model{' ' + what if what else ''}", unset=True)
    try:
        llm = LLM(
            model,
            api_base=options.api_base,
            context_tokens=options.context_tokens,
            sampling=options.sampling,
            reply_format=options.reply_format or "auto",
        )
    except LLMError as exc:
        raise RequestError("model", str(exc)) from None
    if priced and not price_known(model):
        raise RequestError(
            "budget",
            f"a budget needs the model's price, and litellm has none for {model}; {budget_advice}",
        )
    return llm


BUDGET_ADVICE = "drop {budget} ({max_steps} still caps the run) or choose a priced model"
"""What a session with steps says to do when its budget cannot be kept with its model."""


def model_maker(options: ModelOptions, *, priced: bool) -> Callable[[str], LLM]:
    """How `/model NAME` gets its model in a running session: the same checks and options
    as at its start (a session with a budget needs a priced model); a failed one raises a
    UserError."""

    def make(model: str) -> LLM:
        return model_for(model, options, priced=priced, budget_advice="the session has a budget")

    return make


def sandbox_for(name: str | None, workspace: Path | None, *, network: bool = False) -> Sandbox:
    """An unstarted sandbox of backend `name` on `workspace` (None: a fresh one)."""
    try:
        return open_sandbox(name or "auto", workspace=workspace, network=network)
    except SandboxError as exc:
        raise RequestError("sandbox", str(exc)) from None


def approval(
    approve: bool, sandbox: Sandbox, approver: Approver | None, unit: str
) -> Approver | None:
    """Who approves each `unit` ("run", "program") before it runs: `approver` when approval
    is asked for or the sandbox does not isolate (local), else nobody. Approval with nobody
    to ask is refused."""
    if not (approve or not sandbox.isolated):
        return None
    if approver is not None:
        return approver
    if approve:
        raise RequestError(
            "approve",
            f"{{approve}} is on, so every {unit} needs the user's approval, and nothing can ask",
        )
    raise RequestError(
        "sandbox",
        f"the {sandbox.name} sandbox is not isolated, so every {unit} needs the user's "
        "approval, and nothing can ask",
    )


def start_page(url: str, settings: Settings, field: str = "url") -> str:
    """`url` if a session may start on it (a scheme the settings allow, a server that
    answers, a file that exists)."""
    from tui_agent.agents.browsing import check_start_url

    try:
        return check_start_url(url, settings)
    except BrowserError as exc:
        raise RequestError(field, str(exc)) from None
