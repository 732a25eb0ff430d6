"""Start a session from the home screen: which agent, and what it needs."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Input, Label, Select, Static

SANDBOXES = ("auto", "docker", "bubblewrap", "local")


@dataclass(frozen=True)
class ExecForm:
    """What the user asked for: run `code` (read from `path`) with these options."""

    path: Path
    code: str
    args: list[str]
    url: str | None
    timeout: float
    sandbox: str


class NewSessionModal(ModalScreen[ExecForm | None]):
    """Run a Python file in a sandbox as a recorded session. ctrl+s starts, Escape cancels."""

    BINDINGS = [
        Binding("ctrl+s", "start", "Start", id="new.start", tooltip="Start the session"),
        Binding("escape", "cancel", "Cancel", id="new.cancel", tooltip="Start nothing"),
    ]

    def __init__(self, default_sandbox: str = "auto") -> None:
        super().__init__(classes="new-session-modal")
        self._default_sandbox = default_sandbox

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog") as dialog:
            dialog.border_title = "New session: run a Python file (exec)"
            yield Label("Python file")
            yield Input(placeholder="path/to/program.py", id="path")
            yield Label("Arguments for main() (JSON literals are decoded)")
            yield Input(placeholder='5 "text" [1, 2]', id="args")
            yield Label("URL to render in Chromium (optional: passes url and html in)")
            yield Input(placeholder="https://…", id="url")
            with Horizontal(classes="row"):
                with VerticalScroll(classes="cell"):
                    yield Label("Timeout (seconds)")
                    yield Input("30", id="timeout", type="number")
                with VerticalScroll(classes="cell"):
                    yield Label("Sandbox")
                    yield Select(
                        [(name, name) for name in SANDBOXES],
                        value=self._default_sandbox,
                        allow_blank=False,
                        id="sandbox",
                    )
            yield Static(id="problem")
            with Horizontal(classes="buttons"):
                yield Button("Cancel", id="cancel")
                yield Button("Start (ctrl+s)", id="start", variant="primary")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#path", Input).focus()

    def _value(self, selector: str) -> str:
        return self.query_one(selector, Input).value.strip()

    def _problem(self, text: str, focus: str) -> None:
        self.query_one("#problem", Static).update(text)
        self.query_one(focus).focus()

    def read_form(self) -> ExecForm | None:
        """The form as an ExecForm, or None after showing what is wrong."""
        path = Path(self._value("#path")).expanduser()
        if not self._value("#path"):
            self._problem("Which file? Type its path.", "#path")
            return None
        try:
            code = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self._problem(f"Cannot read {path}: {getattr(exc, 'strerror', None) or exc}", "#path")
            return None
        try:
            args = shlex.split(self._value("#args"))
        except ValueError as exc:
            self._problem(f"Arguments: {exc}", "#args")
            return None
        url = self._value("#url") or None
        if url is not None and not url.startswith(("http://", "https://", "file://")):
            self._problem("The URL must start with http://, https:// or file://", "#url")
            return None
        try:
            timeout = float(self._value("#timeout"))
        except ValueError:
            timeout = 0.0
        if timeout <= 0:
            self._problem("The timeout is a positive number of seconds.", "#timeout")
            return None
        sandbox = str(self.query_one("#sandbox", Select).value)
        return ExecForm(path, code, args, url, timeout, sandbox)

    @on(Input.Submitted)
    @on(Button.Pressed, "#start")
    def action_start(self) -> None:
        form = self.read_form()
        if form is not None:
            self.dismiss(form)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
