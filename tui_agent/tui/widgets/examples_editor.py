"""An editable list of expected "input => expected output" examples for field feedback."""

from __future__ import annotations

import json
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Label

from tui_agent.analysis.shapes import FeedbackExample


def parse_example_value(text: str) -> Any:
    """What the user typed: JSON when it parses (`42`, `[1, 2]`, `{"a": 1}`), else the text.

    Blank text is None.
    """
    text = text.strip()
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


class ExampleRow(Horizontal):
    """One example: an input, the output expected for it, and a remove button."""

    def compose(self) -> ComposeResult:
        yield Input(placeholder="input", classes="example-input", compact=True)
        yield Label("=>", classes="example-arrow")
        yield Input(placeholder="expected output", classes="example-expected", compact=True)
        yield Button("✕", classes="example-remove", tooltip="Remove this example", compact=True)

    def to_model(self) -> FeedbackExample | None:
        """The example, or None when both sides are blank."""
        given = parse_example_value(self.query_one(".example-input", Input).value)
        expected = parse_example_value(self.query_one(".example-expected", Input).value)
        if given is None and expected is None:
            return None
        return FeedbackExample(input=given, expected_output=expected)


class ExamplesEditor(Vertical):
    """Example rows with "+ Add example"; blank rows are left out of `to_model()`."""

    def compose(self) -> ComposeResult:
        yield ExampleRow()
        yield Button(
            "+ Add example", id="add-example", tooltip="Add an input => output pair", compact=True
        )

    async def add_example(self) -> ExampleRow:
        """Append an empty row and focus its input."""
        row = ExampleRow()
        await self.mount(row, before=self.query_one("#add-example"))
        row.query_one(".example-input", Input).focus()
        return row

    @on(Button.Pressed, "#add-example")
    async def _add_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        await self.add_example()

    @on(Button.Pressed, ".example-remove")
    async def _remove_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        row = event.button.parent
        assert isinstance(row, ExampleRow)
        rows = list(self.query(ExampleRow))
        following = rows[rows.index(row) + 1 :]
        await row.remove()
        # keep the keyboard where the removed row was
        target = following[0].query_one(Input) if following else self.query_one("#add-example")
        target.focus()

    def to_model(self) -> list[FeedbackExample]:
        """The filled-in examples, in order."""
        examples = (row.to_model() for row in self.query(ExampleRow))
        return [example for example in examples if example is not None]
