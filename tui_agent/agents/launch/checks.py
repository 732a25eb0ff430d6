"""The checks every starter makes before anything is recorded, each failure a RequestError
naming its field: the model (set, known to litellm, its key present, priced for a budget),
the sandbox backend, approval, the start page."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from tui_agent.agents.approval import Approver
from tui_agent.agents.requests import RequestError
from tui_agent.llm import LLM, LLMError, price_known
from tui_agent.sandbox.base import Sandbox, SandboxError
from tui_agent.sandbox.choose import open_sandbox
from tui_agent.web.browser import BrowserError

if TYPE_CHECKING:
    from pathlib import Path

    from tui_agent.config import Settings


def model_for(
    model: str | None,
    api_base: str | None,
    *,
    what: str = "",
    priced: bool = False,
    budget_advice: str = "drop {budget} or choose a priced model",
) -> LLM:
    """The LLM of `model`, checked offline (`what`: "for the task", "for node x"...); a
    budget (`priced`) needs litellm to know its price."""
    if not model:
        raise RequestError("model", f"no model{' ' + what if what else ''}", unset=True)
    try:
        llm = LLM(model, api_base=api_base)
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


def model_maker(api_base: str | None, *, priced: bool) -> Callable[[str], LLM]:
    """How `/model NAME` gets its model in a running session: the same checks as at its
    start (a session with a budget needs a priced model); a failed one raises a UserError."""

    def make(model: str) -> LLM:
        return model_for(model, api_base, priced=priced, budget_advice="the session has a budget")

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
