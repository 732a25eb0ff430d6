"""A modal showing one whole value of the items table (text as is, anything else as JSON);
`y` copies it whole."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Label, TextArea

from tui_agent.tui.export.clipboard import copy_text
from tui_agent.tui.paths import styles_dir


def describe(value: Any) -> str:
    """A short note on what kind of value this is, and how big."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return f"text · {len(value):,} characters"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, list | tuple):
        return f"list · {len(value):,} entries"
    if isinstance(value, dict):
        return f"object · {len(value):,} keys"
    return type(value).__name__


def full_text(value: Any) -> str:
    """Text as it is; anything else as indented JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


class ValueModal(ModalScreen[None]):
    """The whole value of one cell: field, item number and the value, scrollable."""

    CSS_PATH = styles_dir() / "items.tcss"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "escape",
            "dismiss",
            "Close",
            id="value.close",
            tooltip="Close the full value and return to the table",
        ),
        Binding(
            "y",
            "copy",
            "Copy",
            id="value.copy",
            tooltip="Copy the whole value to the clipboard",
        ),
    ]

    def __init__(self, field: str, item_number: int, value: Any) -> None:
        super().__init__()
        self.field = field
        self.item_number = item_number
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical(id="value-dialog") as dialog:
            dialog.border_title = Content(f"{self.field} · item {self.item_number:,}")
            dialog.border_subtitle = Content("y copy · escape close")
            yield Label(Content(describe(self.value)), id="value-kind")
            yield TextArea(full_text(self.value), read_only=True, soft_wrap=True, id="value-text")

    def action_copy(self) -> None:
        copy_text(self.app, full_text(self.value), f"{self.field} of item {self.item_number:,}")
