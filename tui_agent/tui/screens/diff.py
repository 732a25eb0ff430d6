"""The decision on a candidate version: per field the check's verdict (fixed, improved, changed
but not verified, worse, not fixed: `judge`, the one rule) with coverage and a few values
before -> after, the diff against the version in use (unified under SPLIT_WIDTH columns, side
by side from there; `s` switches), and accept / reject / later.

Rejecting asks for an optional one-line reason first (Enter rejects, Escape goes back to the
diff). Dismissed with a `Decision`, or None (decide later: Escape).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, ClassVar, cast

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.reactive import var
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Input, Static

from tui_agent.analysis import is_empty
from tui_agent.analysis.resolution import judge
from tui_agent.analysis.shapes import ChangeVerdict
from tui_agent.events import Artifact, FieldChange, RefinementProgress
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


SPLIT_WIDTH = 140
"""Terminal columns from which the diff opens side by side (narrower: unified)."""
VALUE_CHARS = 40
"""Characters of a value shown before -> after; longer ones are cut."""
VERDICTS: dict[str, tuple[str, str]] = {
    "fixed": ("✓", "$text-success"),
    "improved": ("↑", "$text-primary"),
    "changed, not verified": ("?", "$text-warning"),
    "worse": ("✗", "$text-error"),
    "not fixed": ("·", "$text-muted"),
}
_SEGMENT = re.compile(
    r"^(?P<field>.+?) (?P<before>\d+)% -> (?P<after>\d+)%(?: \((?P<verdict>.+)\))?$"
)


def shown_value(value: Any) -> str:
    """A value as one short line: `(empty)`, text in quotes, anything else as JSON."""
    if is_empty(value):
        return "(empty)"
    text = json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"


def changes_from_summary(summary: str) -> list[FieldChange]:
    """The per-field verdicts of a candidate recorded before they were kept as `changes`
    (read from its summary: "price 0% -> 100% (fixed); title 100% -> 100%"; a field without
    a verdict was not resolved, so `judge` names it by its coverage); the values a summary
    quotes after the verdict ("changed, not verified: 'a' -> 'b', …") are kept as one sample
    of text."""
    changes = []
    for segment in filter(None, (s.strip() for s in summary.split(";"))):
        match = _SEGMENT.match(segment)
        if match is None:
            continue
        before, after = int(match["before"]) / 100, int(match["after"]) / 100
        verdict, _, quoted = (match["verdict"] or "").partition(": ")
        if verdict not in VERDICTS:
            verdict = judge(False, True, before, after)
        samples = [(QUOTED, quoted)] if quoted else []
        changes.append(
            FieldChange(
                field=match["field"],
                before=before,
                after=after,
                verdict=cast(ChangeVerdict, verdict),
                samples=samples,
            )
        )
    return changes


QUOTED = "\0quoted"
"""Marks a sample that is the summary's own text of the values (older candidates)."""


def rejudged(change: FieldChange) -> FieldChange:
    """`change` with a recorded "not fixed" whose coverage moved named by `judge` (versions
    recorded before "improved" called a higher coverage "not fixed")."""
    if change.verdict != "not fixed":
        return change
    verdict: ChangeVerdict = judge(False, True, change.before, change.after)
    return change if verdict == change.verdict else change.model_copy(update={"verdict": verdict})


def review_content(candidate: Artifact, note: str) -> Content:
    """Per field of the feedback: the verdict, coverage before -> after and a few values
    before -> after; then the refinement's last word (`note`)."""
    changes = candidate.changes or changes_from_summary(candidate.summary)
    lines: list[Content] = []
    width = max((len(c.field) for c in changes), default=0)
    for change in map(rejudged, changes):
        mark, style = VERDICTS[change.verdict]
        coverage = f"{round(change.before * 100)}% → {round(change.after * 100)}%"
        lines.append(
            Content.assemble(
                (f"{mark} ", style),
                (f"{change.field:<{width}}", "bold"),
                f"  {coverage:<12} ",
                (change.verdict, style),
            )
        )
        for before, after in change.samples:
            if before == QUOTED:
                lines.append(Content.styled(" " * (width + 4) + str(after), "$text-muted"))
                continue
            lines.append(
                Content.assemble(
                    " " * (width + 4),
                    (shown_value(before), "$text-error" if before != after else "$text-muted"),
                    (" → ", "$text-muted"),
                    (shown_value(after), "$text-success" if before != after else "$text-muted"),
                )
            )
    if not changes and candidate.summary:
        lines.append(Content(candidate.summary))
    if note:
        lines.append(Content.styled(note, "italic"))
    return Content("\n").join(lines)


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
            "ctrl+y",
            "accept",
            "Accept",
            id="diff.accept",
            tooltip="Make the candidate the version in use and re-run it (a ctrl key: it runs)",
            priority=True,
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
            with VerticalScroll(id="diff-summary-scroll"):
                yield Static(review_content(candidate, self.note), id="diff-summary")
            yield DiffView(
                artifact_text(current) if current else "",
                artifact_text(candidate),
                old_label,
                new_label,
                split=self.app.size.width >= SPLIT_WIDTH,
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
