"""The plan of a scrape, one key away from its stream: the strategy and the recipe in use,
each whole, in tabs. Escape (or `p` again) goes back to the stream."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, Markdown, Static, TabbedContent, TabPane

from tui_agent.events import Artifact
from tui_agent.formatting import artifact_text
from tui_agent.tui.widgets.step_card import numbered_code

PINNED = ("strategy", "recipe")
"""Artifacts pinned on a session screen, in the order of their tabs."""


def pinned_artifacts(artifacts: dict[str, Artifact | None]) -> list[Artifact]:
    """The pinned artifacts the session has, in tab order."""
    return [a for name in PINNED if (a := artifacts.get(name)) is not None]


def artifact_body(artifact: Artifact) -> Markdown | Static:
    """An artifact whole: a strategy as Markdown, a recipe or code numbered."""
    if artifact.format == "markdown":
        return Markdown(artifact.content, classes="pinned-body")
    return Static(numbered_code(artifact_text(artifact), artifact.format), classes="pinned-body")


class PinnedScreen(ModalScreen[None]):
    """The session's strategy and recipe in use (whatever of them it has)."""

    BINDINGS = [
        Binding("escape,p", "close", "Back", id="pinned.close", tooltip="Back to the stream"),
    ]

    def __init__(self, artifacts: list[Artifact]) -> None:
        super().__init__(classes="pinned-screen")
        self.artifacts = artifacts

    def compose(self) -> ComposeResult:
        with TabbedContent(id="pinned"):
            for artifact in self.artifacts:
                title = f"{artifact.name} v{artifact.version}"
                pane = TabPane(title, id=f"pinned-{artifact.name}")
                with pane, VerticalScroll(classes="pinned-scroll"):
                    if artifact.summary:
                        yield Static(Content(artifact.summary), classes="pinned-summary")
                    yield artifact_body(artifact)
        yield Footer()

    def action_close(self) -> None:
        self.dismiss(None)
