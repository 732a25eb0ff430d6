"""What code and recipe refinement share: their base, the outcome, and the user's decision.

A refinement appends to an existing session: an original
Artifact when the session has none, per attempt RefinementProgress, the model's stream and the
run, then a candidate Artifact and a last RefinementProgress. `decide` records the user's
VersionDecided and, on accept, re-runs the version so the items table shows its output.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from tui_agent.agents.refine.errors import RefinementError
from tui_agent.agents.refine.run_settings import RunPlan, RunSettings, run_settings
from tui_agent.analysis.resolution import FieldCheck, percent, value_samples
from tui_agent.analysis.shapes import FieldFeedback, OutputAnalysis
from tui_agent.events import (
    Artifact,
    ArtifactFormat,
    Event,
    FieldChange,
    RefinementProgress,
)
from tui_agent.session import SessionState

if TYPE_CHECKING:
    from tui_agent.config import Settings
    from tui_agent.llm import LLM

MAX_ATTEMPTS = 5
TARGET_COVERAGE = 0.8


@dataclass
class RefinementOutcome:
    """How a refinement ended: its candidate (None when no attempt improved anything)."""

    name: str
    candidate: Artifact | None
    fixed: list[str] = field(default_factory=list)
    remaining: list[str] = field(default_factory=list)
    unverified: list[str] = field(default_factory=list)
    """Fields that changed with nothing to verify them against (never counted as fixed)."""
    attempts: int = 0
    items: list[Any] = field(default_factory=list)
    analysis: OutputAnalysis | None = None
    error: str | None = None


class Refinement(ABC):
    """A refinement ready to run; `outcome` is set when `run` is exhausted.

    The constructor checks everything that would stop it before anything is recorded
    (RefinementError, one line): the feedback and the limits here, the rest in `_prepare`.
    """

    name: ClassVar[str]
    """The artifact it refines ("code", "recipe")."""
    format: ClassVar[ArtifactFormat]

    def __init__(
        self,
        state: SessionState,
        feedback: list[FieldFeedback],
        *,
        settings: Settings,
        llm: LLM | None = None,
        max_attempts: int = MAX_ATTEMPTS,
        target_coverage: float = TARGET_COVERAGE,
        run: RunSettings | None = None,
    ) -> None:
        if not feedback:
            raise RefinementError("no feedback to act on: name at least one field and its issue")
        if max_attempts < 1:
            raise RefinementError("max attempts must be at least 1")
        if not 0 < target_coverage <= 1:
            raise RefinementError("the target coverage must be above 0 and at most 1 (e.g. 0.8)")
        self.feedback = list(feedback)
        self.run_settings = run or run_settings(state)
        """The page and network it runs with (`run_settings`: the session's, checked)."""
        self.llm = llm
        self.max_attempts = max_attempts
        self.target_coverage = target_coverage
        self.outcome: RefinementOutcome | None = None
        in_use = self._prepare(state, settings)
        self.original = original_artifact(state, self.name, in_use, self.format)
        """Version 1, recorded first when the session has no artifact of this name yet."""
        self.version = next_version(state, self.name) + (1 if self.original else 0)
        """The version number of the candidate."""

    @abstractmethod
    def _prepare(self, state: SessionState, settings: Settings) -> str:
        """Check and take from the session what the refinement needs; the content in use."""

    @abstractmethod
    def run(self) -> AsyncGenerator[Event, None]:
        """The refinement's events; sets `outcome` at the end."""

    @abstractmethod
    def plan(self, state: SessionState, settings: Settings) -> RunPlan:
        """What it will run, to approve first (imported sessions only)."""

    def progress(
        self,
        attempt: int,
        message: str,
        fixed: Sequence[str],
        remaining: Sequence[FieldFeedback],
        unverified: Sequence[str] = (),
    ) -> RefinementProgress:
        """A RefinementProgress of this refinement."""
        return RefinementProgress(
            attempt=attempt,
            max_attempts=self.max_attempts,
            message=message,
            fixed=list(fixed),
            remaining=[f.field for f in remaining],
            unverified=list(unverified),
        )

    def attempt_started(
        self, attempt: int, fixed: Sequence[str], remaining: Sequence[FieldFeedback]
    ) -> RefinementProgress:
        """ "Attempt 2/5: fixing price (missing)"."""
        message = f"Attempt {attempt}/{self.max_attempts}: fixing {named_feedback(remaining)}"
        return self.progress(attempt, message, fixed, remaining)

    def candidate(
        self,
        content: str,
        attempt: int,
        checks: Sequence[FieldCheck],
        before_items: Sequence[Any] = (),
        after_items: Sequence[Any] = (),
    ) -> Artifact:
        """The candidate Artifact: `content` as the best attempt left it, with each checked
        field's verdict and a few of its values before and after."""
        return Artifact(
            name=self.name,
            content=content,
            format=self.format,
            version=self.version,
            candidate=True,
            origin=f"refinement attempt {attempt}",
            summary=version_summary(checks),
            changes=field_changes(checks, list(before_items), list(after_items)),
        )


def is_recipe_session(state: SessionState) -> bool:
    """Whether the session's items come from a recipe rather than from code."""
    return bool(state.artifacts.get("recipe")) or "recipe" in state.test_context


def configured_model(settings: Settings) -> tuple[LLM | None, str | None]:
    """The configured model with its server, context window and sampling (None when there
    is none), or None and why it cannot be used: a fast path needs no model, and a
    refinement that does is refused with the reason."""
    from tui_agent.agents.requests.fields import sampling_of
    from tui_agent.llm import LLM
    from tui_agent.llm.errors import LLMError

    if not settings.model:
        return None, None
    try:
        llm = LLM(
            settings.model,
            api_base=settings.api_base,
            context_tokens=settings.context_tokens,
            sampling=sampling_of(settings),
            reply_format=settings.reply_format,
        )
        return llm, None
    except LLMError as exc:
        return None, str(exc)


def next_version(state: SessionState, name: str) -> int:
    """The version number the next artifact called `name` gets."""
    return max((a.version for a in state.artifacts.get(name, ())), default=0) + 1


def original_artifact(
    state: SessionState, name: str, content: str, format: ArtifactFormat
) -> Artifact | None:
    """Version 1 (the version in use) when the session has no artifact `name` yet."""
    if state.artifacts.get(name):
        return None
    return Artifact(name=name, content=content, format=format, version=1, origin="original")


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def named_feedback(feedback: Sequence[FieldFeedback]) -> str:
    """ "price (missing), title (wrong)"."""
    return ", ".join(f"{f.field} ({f.issue})" for f in feedback)


def progress_message(
    fixed: Sequence[str], remaining: Sequence[FieldFeedback], unverified: Sequence[str] = ()
) -> str:
    """ "Fixed 1 field, 1 remaining" (as an attempt's progress), and what changed unverified."""
    message = f"Fixed {plural(len(fixed), 'field')}, {len(remaining)} remaining"
    if unverified:
        message += f", {len(unverified)} changed, not verified"
    return message


def outcome_message(
    fixed: Sequence[str],
    remaining: Sequence[FieldFeedback],
    unverified: Sequence[str] = (),
    improved: Sequence[str] = (),
) -> str:
    """The last progress line: "Fixed 2 fields", "Fixed 1 field, 1 remaining: price (wrong)",
    "Fixed 0 fields; changed, not verified: name" (check its values in the review),
    "Fixed 0 fields; improved: total, 1 remaining: total (missing)"."""
    message = f"Fixed {plural(len(fixed), 'field')}"
    if unverified:
        message += f"; changed, not verified: {', '.join(unverified)}"
    if improved:
        message += f"; improved: {', '.join(improved)}"
    if remaining:
        message += f", {len(remaining)} remaining: {named_feedback(remaining)}"
    return message


def field_changes(
    checks: Sequence[FieldCheck], before_items: list[Any], after_items: list[Any]
) -> list[FieldChange]:
    """Per checked field: coverage before and after, the verdict, a few values before and
    after (the items that changed first)."""
    return [
        FieldChange(
            field=check.field,
            issue=check.issue,
            before=float(check.before),
            after=float(check.after),
            verdict=check.verdict,
            samples=list(check.samples or value_samples(before_items, after_items, check.field)),
        )
        for check in checks
    ]


def version_summary(checks: Sequence[FieldCheck]) -> str:
    """ "title 0% -> 100% (fixed); total 20% -> 60% (improved); price 100% -> 100%" for a
    candidate artifact (the verdict of each field but "not fixed"); a change nothing could
    verify shows a few items' values before and after:
    "category 100% -> 100% (changed, not verified: 'Kitchen' -> 'Northwind Goods', ...)"."""
    parts = []
    for c in checks:
        part = f"{c.field} {percent(c.before)} -> {percent(c.after)}"
        if c.resolved and not c.verified and c.samples:
            part += f" ({c.verdict}: {c.samples_text().replace(';', ',')})"
        elif c.verdict != "not fixed":
            part += f" ({c.verdict})"
        parts.append(part)
    return "; ".join(parts)
