"""What a step-loop session starts with, checked before anything is recorded."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tui_agent.agents.approval import Approver
from tui_agent.config import ConfigError, Settings
from tui_agent.llm import LLM, price_known
from tui_agent.sandbox.base import Sandbox
from tui_agent.sandbox.choose import open_sandbox


@dataclass(frozen=True)
class SessionParts:
    """The model, the (unstarted) sandbox, and the approver when approval applies."""

    llm: LLM
    sandbox: Sandbox
    approver: Approver | None


def needs_approval(approve: bool, sandbox: Sandbox) -> bool:
    """Approval is asked for, or forced because the sandbox is not isolated (`local`)."""
    return approve or not sandbox.isolated


def session_parts(
    settings: Settings,
    *,
    budget: float | None,
    sandbox_name: str | None,
    workspace: Path | None,
    network: bool = False,
    approve: bool,
    approver: Approver | None,
    runs: str,
) -> SessionParts:
    """The model (set, known to litellm, its key present, priced when there is a `budget`), the
    sandbox backend, and when approval applies an `approver` to ask (what it approves: `runs`,
    e.g. "run"). Each failure raises one line (ConfigError, LLMError, SandboxError)."""
    if not settings.model:
        raise ConfigError("no model: pass --model or set TUI_AGENT_MODEL")
    llm = LLM(settings.model, api_base=settings.api_base)
    if budget is not None and not price_known(settings.model):
        raise ConfigError(
            f"a budget needs the model's price, and litellm has none for {settings.model}; "
            "drop --budget (--max-steps still caps the run) or choose a priced model"
        )
    sandbox = open_sandbox(
        sandbox_name or settings.sandbox,
        workspace=workspace or settings.workspace,
        network=network,
    )
    asks = needs_approval(approve, sandbox)
    if asks and approver is None:
        why = "approval is on" if approve else f"the {sandbox.name} sandbox is not isolated"
        raise ConfigError(f"{why}, so every {runs} needs the user's approval, and nothing can ask")
    return SessionParts(llm, sandbox, approver if asks else None)
