"""The card of an artifact: a strategy (Markdown), a recipe (JSON) or a version of the code.

The header names the artifact, its version and origin and where it stands (in use, awaiting
the user's decision, accepted, rejected); the body shows the content folded to a few lines.
A click (or `o` on the stream pane) unfolds it.
"""

from __future__ import annotations

from typing import Literal

from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Markdown, Static

from tui_agent.events import Artifact, VersionDecided
from tui_agent.formatting import artifact_text
from tui_agent.session import SessionState
from tui_agent.tui.widgets.mounting import update_markdown
from tui_agent.tui.widgets.step_card import numbered_code

FOLDED_LINES = {"markdown": 12, "json": 8, "python": 8, "text": 8}
"""Lines of an artifact's content shown while its card is folded."""

ArtifactStatus = Literal["in use", "older", "awaiting your decision", "accepted", "rejected"]
STATUS_STYLES: dict[str, str] = {
    "in use": "$text-success",
    "older": "dim",
    "awaiting your decision": "$text-warning bold",
    "accepted": "$text-success",
    "rejected": "$text-error",
}


def decisions(state: SessionState) -> dict[tuple[str, int], VersionDecided]:
    """The latest decision on each (artifact name, version)."""
    return {
        (entry.name, entry.version): entry
        for entry in state.timeline
        if isinstance(entry, VersionDecided)
    }


def artifact_status(
    artifact: Artifact,
    decided: dict[tuple[str, int], VersionDecided],
    current_versions: dict[str, int],
) -> ArtifactStatus:
    """Where one version stands, given the session's decisions and current versions."""
    if artifact.candidate:
        decision = decided.get((artifact.name, artifact.version))
        if decision is None:
            return "awaiting your decision"
        return "accepted" if decision.accepted else "rejected"
    return "in use" if current_versions.get(artifact.name) == artifact.version else "older"


def header_content(artifact: Artifact, status: ArtifactStatus) -> Content:
    """`◆ name v2 · origin · status`, then the summary on a second line."""
    parts: list[str | tuple[str, str]] = [
        ("◆ ", "$text-accent"),
        (f"{artifact.name} v{artifact.version}", "bold"),
    ]
    if artifact.origin:
        parts.append(f" · {artifact.origin}")
    parts += [" · ", (status, STATUS_STYLES[status])]
    if status == "awaiting your decision":
        parts.append((" (d reviews it)", "dim"))
    if artifact.summary:
        parts.append((f"\n{artifact.summary}", "$text-muted"))
    return Content.assemble(*parts)


def folded(text: str, limit: int) -> tuple[str, int]:
    """The first `limit` lines of `text` and how many were left out."""
    lines = text.split("\n")
    if len(lines) <= limit:
        return text, 0
    return "\n".join(lines[:limit]), len(lines) - limit


class ArtifactCard(Vertical):
    """One artifact version, folded until clicked (or unfolded with `o` on the pane)."""

    def __init__(self, artifact: Artifact, status: ArtifactStatus) -> None:
        super().__init__(classes=f"card artifact-card -{artifact.format}")
        self.set_class(status == "awaiting your decision", "-candidate")
        self.closed: str | None = None
        """How the session ended (shown the same either way)."""
        self._artifact = artifact
        self._status: ArtifactStatus = status
        self._expanded = False
        self._key: tuple[object, ...] | None = None
        self._text, self._hidden = self._measure(artifact)
        self._header = Static(classes="artifact-header")
        self._body: Markdown | Static = (
            Markdown(classes="artifact-body")
            if artifact.format == "markdown"
            else Static(classes="artifact-body")
        )
        self._more = Static(classes="artifact-more")

    def compose(self) -> ComposeResult:
        yield self._header
        yield self._body
        yield self._more

    async def on_mount(self) -> None:
        await self._render_artifact()

    @property
    def expanded(self) -> bool:
        return self._expanded

    @property
    def foldable(self) -> bool:
        """Whether the content is longer than the folded view."""
        return self._hidden > 0

    @staticmethod
    def _measure(artifact: Artifact) -> tuple[str, int]:
        """The content as shown, and how many lines the folded view leaves out."""
        text = artifact_text(artifact)
        return text, folded(text, FOLDED_LINES[artifact.format])[1]

    async def show(self, artifact: Artifact, status: ArtifactStatus) -> None:
        """Bring the card up to date (renders only when something visible changed)."""
        if artifact != self._artifact:
            self._text, self._hidden = self._measure(artifact)
        self._artifact, self._status = artifact, status
        self.set_class(status == "awaiting your decision", "-candidate")
        if self.is_mounted:
            await self._render_artifact()

    async def set_expanded(self, expanded: bool) -> None:
        self._expanded = expanded
        if self.is_mounted:
            await self._render_artifact()

    async def on_click(self, event: events.Click) -> None:
        event.stop()
        await self.set_expanded(not self._expanded)

    async def _render_artifact(self) -> None:
        artifact, status = self._artifact, self._status
        key = (artifact, status, self._expanded)
        if key == self._key:
            return
        self._key = key
        self._header.update(header_content(artifact, status))
        text, hidden = self._text, self._hidden
        shown = text if self._expanded else folded(text, FOLDED_LINES[artifact.format])[0]
        if isinstance(self._body, Markdown):
            await update_markdown(self._body, shown)
        else:
            self._body.update(numbered_code(shown, artifact.format))
        more = self._more
        more.display = hidden > 0
        if self._expanded:
            more.update(Content.styled("click or o folds", "dim italic"))
        else:
            lines = f"{hidden} more line{'s' if hidden != 1 else ''}"
            more.update(Content.styled(f"… {lines} · click or o unfolds", "dim italic"))
