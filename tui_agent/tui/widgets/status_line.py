"""One line of session figures: status, model, steps, tokens, cost, elapsed, pending feedback;
while a continued session's state is restored, how far; tokens and cost per model once a
conversation used more than one."""

from __future__ import annotations

from collections.abc import Callable

from textual.content import Content
from textual.timer import Timer
from textual.widgets import Static

from tui_agent.agents.requests import REQUEST_CLASSES
from tui_agent.agents.requests.base import field_options
from tui_agent.events import OPEN_STATUSES
from tui_agent.formatting import format_cost, format_duration, format_tokens
from tui_agent.session import ModelUsage, SessionState

STATUS_STYLES = {
    "running": "$text-accent",
    "waiting": "$text-primary",
    "completed": "$text-success",
    "failed": "$text-error",
    "cancelled": "$text-warning",
    "stopped": "$text-warning",
    "interrupted": "$text-secondary",
    "partial": "$text-warning",
}


STATUS_LABELS = {"waiting": "waiting for you"}
"""How a status is said where it is not its own word."""


def status_label(status: str) -> str:
    """`waiting for you` for a conversation between turns; other statuses as they are."""
    return STATUS_LABELS.get(status, status)


def status_content(status: str, reason: str | None = None) -> Content:
    """The session status as a styled word with a dot, and why it stopped if that says more
    (a conversation waiting for the user does not repeat how its last turn ended)."""
    shown = reason if reason and reason != status and status != "waiting" else None
    text = f"● {status_label(status)}" + (f": {shown}" if shown else "")
    return Content.styled(text, STATUS_STYLES.get(status, ""))


def restoring_text(state: SessionState) -> str | None:
    """`restoring state: 4 of 7 runs` while a continued session's state is rebuilt."""
    run = state.restoring
    if run is None:
        return None
    return f"restoring state: {run.done} of {run.total} run{'s' if run.total != 1 else ''}"


def usage_text(model: str, usage: ModelUsage) -> str:
    """`gpt-4o 1.2k tok $0.0040` (an unknown price stays unknown)."""
    tokens = format_tokens(usage.prompt_tokens + usage.completion_tokens)
    return f"{model} {tokens} tok {format_cost(usage.cost, usage.unknown_cost_calls == 0)}"


def model_used(state: SessionState) -> str:
    """The model the session used: the one it calls while it may still call one, `no model`
    once it ended without a call (an exec run) or when its kind never calls one."""
    if state.llm_calls:
        return state.model or "a model"
    request = REQUEST_CLASSES.get(state.kind)  # a kind whose form asks for no model runs none
    may_call = request is None or any(
        name == "model" and option.label for name, option in field_options(request)
    )
    if may_call and state.status in OPEN_STATUSES and state.model:
        return state.model
    return "no model"


class StatusLine(Static):
    """The session's figures; while a live session runs, elapsed ticks every second."""

    def __init__(self, clock: Callable[[], float], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._clock = clock
        self._state: SessionState | None = None
        self._pending = 0
        self._live = False
        self._ticker: Timer | None = None
        self._shown: Content | None = None

    def show(self, state: SessionState, *, pending_feedback: int = 0, live: bool = False) -> None:
        """Render `state`; `live` means elapsed runs on the clock until the session ends."""
        self._state, self._pending, self._live = state, pending_feedback, live
        ticking = live and state.status in OPEN_STATUSES
        if ticking and self._ticker is None:
            self._ticker = self.set_interval(1.0, self._render_line)
        elif not ticking and self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
        self._render_line()

    @property
    def elapsed(self) -> float:
        state = self._state
        if state is None or not state.started_at:
            return 0.0
        if self._live and state.status in OPEN_STATUSES:
            return max(0.0, self._clock() - state.started_at)
        return state.duration

    def _render_line(self) -> None:
        state = self._state
        if state is None:
            return
        if not state.event_count:
            self._show(Content.styled("no events yet", "dim"))
            return
        steps = len(state.steps)
        parts: list[str | Content | tuple[str, str]] = [
            status_content(state.status, state.stopped_reason),
            "  ",
            (model_used(state), "bold"),
            f"  {steps} step{'s' if steps != 1 else ''}",
            f"  {format_tokens(state.total_tokens)} tok",
            f"  {self._cost(state)}",
            f"  {format_duration(self.elapsed)}",
        ]
        if self._pending:
            parts.append(("  " + f"{self._pending} feedback pending", "$text-warning"))
        if len(state.models) > 1:
            used = " · ".join(usage_text(name, usage) for name, usage in state.models.items())
            parts.append((f"  [{used}]", "dim"))
        restoring = restoring_text(state)
        if restoring:  # first after the status: a narrow terminal still shows it
            parts[1:1] = [("  " + restoring, "$text-accent bold")]
        self._show(Content.assemble(*parts))

    def _show(self, content: Content) -> None:
        """Repaint only on change, and never relayout: the line is one row whatever it says."""
        if content != self._shown:
            self._shown = content
            self.update(content, layout=False)

    @staticmethod
    def _cost(state: SessionState) -> str:
        return format_cost(state.cost, state.unknown_cost_calls == 0)
