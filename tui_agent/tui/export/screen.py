"""The export dialog: choose what to export (only what the session has), edit the file name
(relative names are in `directory`, by default the current one), Enter writes. An existing
file is overwritten only once confirmed; a failure is said in the dialog, success in a toast.
Dismissed with the path written, or None."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from tui_agent.errors import UserError
from tui_agent.tui.export.choices import ExportChoice
from tui_agent.tui.paths import styles_dir
from tui_agent.tui.screens.confirm import ConfirmModal


class ExportScreen(ModalScreen[Path | None]):
    """Write one of `choices` to a file the user names."""

    CSS_PATH = styles_dir() / "export.tcss"

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="export.cancel", tooltip="Close, write nothing"),
    ]

    def __init__(
        self,
        choices: Sequence[ExportChoice],
        *,
        title: str = "Export",
        directory: Path | None = None,
    ) -> None:
        super().__init__(classes="export-screen")
        self.choices = list(choices)
        self.title_text = title
        self.directory = directory if directory is not None else Path.cwd()
        self.choice: ExportChoice | None = self.choices[0] if self.choices else None
        self._writing = False

    def compose(self) -> ComposeResult:
        with Vertical(id="export-dialog") as dialog:
            dialog.border_title = Content(self.title_text)
            dialog.border_subtitle = Content("enter export · escape cancel")
            if self.choice is None:
                yield Static("Nothing to export yet.", id="export-nothing")
            else:
                options = [Option(Content(c.label), id=c.key) for c in self.choices]
                yield OptionList(*options, id="export-kinds")
                yield Label("File", classes="export-label")
                yield Input(self.choice.file_name, id="export-path")
                yield Static(Content(f"in {self.directory}"), id="export-where")
                yield Static(id="export-error")
            with Horizontal(id="export-buttons"):
                if self.choice is not None:
                    yield Button("Export", id="export-write", variant="primary")
                yield Button("Cancel", id="export-cancel")

    def on_mount(self) -> None:
        if self.choice is not None:
            self.query_one(OptionList).highlighted = 0
            self.query_one(OptionList).focus()

    @property
    def path_input(self) -> Input:
        return self.query_one("#export-path", Input)

    @property
    def error(self) -> str:
        """The error the dialog shows ("" when none)."""
        error = self.query_one("#export-error", Static)
        return str(error.content) if error.has_class("shown") else ""

    def _show_error(self, message: str) -> None:
        error = self.query_one("#export-error", Static)
        error.update(Content(message))
        error.set_class(bool(message), "shown")

    @on(OptionList.OptionHighlighted, "#export-kinds")
    def _kind_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        """Another kind: its file name replaces the offered one (a name typed stays)."""
        chosen = self.choices[event.option_index]
        if self.choice is not None and self.path_input.value == self.choice.file_name:
            self.path_input.value = chosen.file_name
        self.choice = chosen
        self._show_error("")

    @on(Input.Changed, "#export-path")
    def _path_changed(self) -> None:
        self._show_error("")

    def target(self) -> Path | None:
        """The path the file name says (relative: in `directory`); None, with the error
        shown, when it names none."""
        text = self.path_input.value.strip()
        if not text:
            self._show_error("Give a file name.")
            return None
        path = Path(text).expanduser()
        path = path if path.is_absolute() else self.directory / path
        if path.is_dir():
            self._show_error(f"{path} is a folder: give a file name.")
            return None
        return path

    @on(OptionList.OptionSelected, "#export-kinds")
    @on(Input.Submitted, "#export-path")
    @on(Button.Pressed, "#export-write")
    async def action_export(self) -> None:
        """Write the chosen kind to the path given, asking first if the file exists."""
        choice, path = self.choice, self.target()
        if choice is None or path is None or self._writing:
            return
        if not path.exists():
            await self._write(choice, path)
            return

        def answered(overwrite: bool | None) -> None:
            if overwrite:
                self.call_later(self._write, choice, path)

        question = f"{path.name} exists in {path.parent}.\nOverwrite it?"
        self.app.push_screen(ConfirmModal("Overwrite the file?", question, "Overwrite"), answered)

    async def _write(self, choice: ExportChoice, path: Path) -> None:
        self._writing = True
        try:
            written = await choice.write(path)
        except (UserError, OSError) as exc:
            self._show_error(str(exc))
            return
        finally:
            self._writing = False
        self.app.notify(f"{written} → {path}", title="Exported", markup=False)
        self.dismiss(path)

    @on(Button.Pressed, "#export-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
