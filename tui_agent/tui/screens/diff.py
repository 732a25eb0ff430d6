"""The decision on a candidate version: its diff against the version in use, the per-field
summary (coverage before -> after), and accept / reject / later.

Rejecting asks for an optional one-line reason first (Enter rejects, Escape goes back to the
diff). Dismissed with a `Decision`, or None (decide later: Escape).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.reactive import var
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Input, Static

from tui_agent.events import Artifact, RefinementProgress
from tui_agent.formatting import artifact_text
from tui_agent.session import SessionState
from tui_agent.tui.paths import styles_dir
from tui_agent.tui.widgets.diff_view import DiffView


def outcome_note(state: SessionState, candidate: Artifact) -> str:
    """The message of the refinement's last progress after `candidate` was recorded."""
    timeline = state.timeline
    after = next((i for i, e in enumerate(timeline) if e == candidate), len(timeline))
    notes = [e.message for e in timeline[after:] if isinstance(e, RefinementProgress)]
    return notes[0] if notes else ""


def summary_content(candidate: Artifact, note: str) -> Content:
    """One line per field of the candidate's summary (fixed and unverified ones marked), then
    the note."""
    parts: list[str | tuple[str, str]] = []
    for segment in filter(None, (s.strip() for s in candidate.summary.split(";"))):
        if segment.endswith("(fixed)"):
            mark, style = ("  ✓ ", "$text-success"), "$text-success"
        elif "(changed, not verified" in segment:
            mark, style = ("  ? ", "$text-warning"), "$text-warning"
        else:
            mark, style = ("  · ", "$text-muted"), ""
        parts += [mark, (segment + "\n", style)]
    if note:
        parts.append((note, "italic"))
    return Content.assemble(*parts).rstrip("\n")


@dataclass(frozen=True)
class Decision:
    """The answer of a review: accepted or rejected, and why it was rejected (may be empty)."""

    accepted: bool
    reason: str = ""


REASON_PROMPT = "Why reject it? (optional) · Enter rejects · Esc back to the diff"


class DiffScreen(ModalScreen[Decision | None]):
    """The candidate `candidate` against `current` (the version in use, if any)."""

    CSS_PATH = styles_dir() / "diff.tcss"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "a",
            "accept",
            "Accept",
            id="diff.accept",
            tooltip="Make the candidate the version in use and re-run it",
        ),
        Binding(
            "x",
            "reject",
            "Reject",
            id="diff.reject",
            tooltip="Keep the version in use (you may say why); the candidate stays in the session",
        ),
        Binding(
            "s",
            "toggle_view",
            "Unified/split",
            id="diff.view",
            tooltip="Switch between the side-by-side and the unified diff",
        ),
        Binding("escape", "later", "Later", id="diff.later", tooltip="Decide later (d)"),
        Binding("escape", "back", "Back", id="diff.back", tooltip="Back to the diff, undecided"),
    ]

    AUTO_FOCUS = "#diff"

    asking = var(False, init=False, bindings=True)
    """Whether the reason for a rejection is being asked (the reason row replaces the buttons)."""

    def __init__(self, current: Artifact | None, candidate: Artifact, note: str = "") -> None:
        super().__init__()
        self.current = current
        self.candidate = candidate
        self.note = note

    def compose(self) -> ComposeResult:
        current, candidate = self.current, self.candidate
        name = candidate.name
        old_label = f"{name} v{current.version} (in use)" if current else f"{name}: none in use"
        new_label = f"{name} v{candidate.version} (candidate)"
        with Vertical(id="diff-dialog") as dialog:
            dialog.border_title = f"Review {name} v{candidate.version} · {candidate.origin}"
            yield Static(summary_content(candidate, self.note), id="diff-summary")
            yield DiffView(
                artifact_text(current) if current else "",
                artifact_text(candidate),
                old_label,
                new_label,
                id="diff",
            )
            with Horizontal(id="diff-buttons"):
                yield Button("Accept", variant="success", id="accept", compact=True)
                yield Button("Reject", variant="error", id="reject", compact=True)
                yield Button("Later", id="later", compact=True)
            with Horizontal(id="diff-reason"):
                yield Input(placeholder=REASON_PROMPT, id="reason", compact=True)
                yield Button("Reject", variant="error", id="confirm-reject", compact=True)
                yield Button("Back", id="back", compact=True)
        yield Footer()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While the reason is asked only Back is bound (the other keys type the reason)."""
        if action == "back":
            return self.asking
        if action in ("accept", "reject", "toggle_view", "later"):
            return not self.asking
        return True

    def watch_asking(self, asking: bool) -> None:
        self.set_class(asking, "-asking")
        if asking:
            self.query_one("#reason", Input).focus()
        else:
            self.query_one("#reason", Input).clear()
            self.query_one(DiffView).focus()

    @on(Button.Pressed, "#accept")
    def action_accept(self) -> None:
        self.dismiss(Decision(accepted=True))

    @on(Button.Pressed, "#reject")
    def action_reject(self) -> None:
        """Ask the reason; the rejection is confirmed with Enter."""
        self.asking = True

    @on(Button.Pressed, "#back")
    def action_back(self) -> None:
        self.asking = False

    @on(Button.Pressed, "#later")
    def action_later(self) -> None:
        self.dismiss(None)

    def action_toggle_view(self) -> None:
        self.query_one(DiffView).toggle()

    @on(Input.Submitted, "#reason")
    @on(Button.Pressed, "#confirm-reject")
    def _confirm_reject(self) -> None:
        reason = " ".join(self.query_one("#reason", Input).value.split())
        self.dismiss(Decision(accepted=False, reason=reason))
