"""The feedback modal: structured feedback on one field (issue, expected values, notes).

It shows the field's coverage, type and current logic, asks what is wrong (the issue is the
one required answer), offers the inputs that fit the agent type, guidance notes and expected
examples, and is dismissed with a `FeedbackResult` (or None on Escape): keep it and pick
another field, submit everything collected, or submit and start refining at once.

A correct value typed as an expression over the item's fields (`qty * price`) is offered as
one: the "Expression" box under it is ticked, says what it computes for the first item, and
the value is recorded as the correct expression (checked per item); unticked, it is the
literal text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, cast

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, HorizontalGroup, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Footer, Input, Label, Select, Static, TextArea

from tui_agent.analysis.expression import (
    ExpressionError,
    FieldExpression,
    dotted_name,
    first_value,
    parse_expression,
)
from tui_agent.analysis.flatten import flatten_item
from tui_agent.analysis.shapes import (
    FEEDBACK_ISSUE_LABELS,
    FeedbackIssue,
    FieldDefinition,
    FieldFeedback,
)
from tui_agent.tui.paths import styles_dir
from tui_agent.tui.widgets.examples_editor import ExamplesEditor
from tui_agent.tui.widgets.items_table import coverage_band

AUTO_GENERATED = "(auto-generated)"
EXAMPLES_HINT = 'Values are read as JSON when they parse (42, [1, 2], {"a": 1}), else as text.'


@dataclass(frozen=True)
class FeedbackResult:
    """What the modal was dismissed with.

    `submit` False: keep this feedback and pick another field; True: submit all collected now.
    `refine`: once submitted, start refining the session with it.
    """

    feedback: FieldFeedback
    submit: bool
    refine: bool = False


@dataclass(frozen=True)
class AgentInput:
    """One agent-specific answer: the `FieldFeedback` attribute it fills and how it is asked."""

    attribute: str
    label: str
    placeholder: str
    multiline: bool = False
    hint: str = ""


AGENT_INPUTS: dict[str, tuple[AgentInput, ...]] = {
    "scraper": (
        AgentInput(
            "correct_selector",
            "Correct CSS selector",
            ".product .price",
            hint="Use the browser's DevTools to find the right selector.",
        ),
    ),
    "transformer": (
        AgentInput(
            "correct_expression",
            "Correct transformation logic",
            "lambda record: record['price'] * 100",
            multiline=True,
        ),
    ),
    "analyzer": (
        AgentInput(
            "correct_pattern",
            "Pattern (regular expression)",
            r"\d{4}-\d{2}-\d{2}",
            hint="Every value must fully match it; leave it empty to describe instead.",
        ),
        AgentInput(
            "value_description",
            "What the values should look like",
            "Dates as year-month-day, one per order",
            multiline=True,
        ),
    ),
    "api-client": (
        AgentInput(
            "request_parameters", "Request parameters", '{"page": 1, "per_page": 100}', True
        ),
        AgentInput("response_mapping", "Response mapping", "data.items[].price", True),
    ),
    "generic": (
        AgentInput(
            "correct_value",
            "Correct value",
            "A value, or an expression of the fields such as qty * price",
        ),
    ),
}
"""The inputs each agent type asks for; any other agent type gets the generic one."""


def agent_inputs(agent_type: str) -> tuple[AgentInput, ...]:
    """The agent-specific inputs for `agent_type` (the generic ones when unknown)."""
    return AGENT_INPUTS.get(agent_type, AGENT_INPUTS["generic"])


def pattern_error(text: str) -> str | None:
    """Why `text` is not a usable regular expression, or None when it is (or is empty)."""
    if not text.strip():
        return None
    try:
        re.compile(text.strip())
    except re.error as exc:
        return f"Not a regular expression: {exc}"
    return None


def _cleaned(text: str) -> str | None:
    """Text without surrounding blanks, or None when nothing is left."""
    return text.strip() or None


FIELDS_FROM = 200
"""Items whose fields an expression may read (the first ones: records share their fields)."""
SHOWN_CHARS = 40
"""Characters of a computed value shown under the correct value."""


def item_records(items: Sequence[Any]) -> list[dict[str, Any]]:
    """The first FIELDS_FROM items, flattened (the records an expression reads)."""
    return [flatten_item(item) for item in items[:FIELDS_FROM] if isinstance(item, dict)]


def expression_in(text: str, fields: set[str]) -> FieldExpression | None:
    """`text` as an expression that reads a field or computes (`qty * price`, `round(prcie)`),
    or None: a literal (`9.99`, `"EUR"`), a word that names no field (`EUR`), plain words,
    anything not allowed."""
    try:
        expression = parse_expression(text)
    except ExpressionError:
        return None
    if expression.is_literal or (dotted_name(expression.tree) and expression.unknown(fields)):
        return None
    return expression


def value_kind_note(
    text: str, expression: FieldExpression, records: list[dict[str, Any]], as_expression: bool
) -> str:
    """What the correct value will be checked as, under the "Expression" box."""
    if not as_expression:
        return f"checked as the text {text.strip()!r}"
    unknown = expression.unknown({name for record in records for name in record})
    if unknown:
        return f"no field {', '.join(unknown)}: told to the model, not checked"
    computed = f"computed per item from {', '.join(expression.names)}"
    found = first_value(expression, records)
    if found is None:
        return computed
    index, value = found
    shown = repr(value)
    shown = shown if len(shown) <= SHOWN_CHARS else shown[: SHOWN_CHARS - 1] + "…"
    return f"{computed} (item {index + 1}: {shown})"


class FeedbackModal(ModalScreen[FeedbackResult | None]):
    """Structured feedback on one field of the items table."""

    CSS_PATH = styles_dir() / "feedback.tcss"
    AUTO_FOCUS = "#issue"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+s",
            "finish(True)",
            "Submit",
            priority=True,
            id="feedback.submit",
            tooltip="Record this feedback (and any collected before) now",
        ),
        Binding(
            "ctrl+r",
            "finish(True, True)",
            "Refine",
            priority=True,
            id="feedback.submit-refine",
            tooltip="Record the feedback and let the agent fix the fields now",
        ),
        Binding(
            "ctrl+n",
            "finish(False)",
            "Add & pick another",
            priority=True,
            id="feedback.add-another",
            tooltip="Keep this feedback and go back to pick another field",
        ),
        Binding(
            "ctrl+o",
            "add_example",
            "Add example",
            priority=True,
            id="feedback.add-example",
            tooltip="Add an expected input => output example",
        ),
        Binding(
            "escape",
            "cancel",
            "Cancel",
            id="feedback.cancel",
            tooltip="Close without keeping this feedback",
        ),
    ]

    def __init__(
        self,
        field: FieldDefinition,
        total: int,
        agent_type: str,
        current_logic: str | None,
        items: Sequence[Any] = (),
    ) -> None:
        super().__init__()
        self.field = field
        self.total = total
        self.agent_type = agent_type
        self.current_logic = current_logic
        self.records = item_records(items)
        """The items (flattened) a correct value typed as an expression is computed on."""
        self.item_fields = {name for record in self.records for name in record}
        self.kind_chosen = False
        """Whether the user ticked or unticked "Expression" (then typing no longer does)."""

    def compose(self) -> ComposeResult:
        field = self.field
        with Vertical(id="feedback-dialog"):
            yield Label(Content(f'Fix field "{field.name}"'), id="feedback-title")
            with VerticalScroll(id="feedback-body"):
                yield from self._compose_status()
                yield Label("What's the issue?", classes="question")
                yield Select(
                    [(label, issue) for issue, label in FEEDBACK_ISSUE_LABELS.items()],
                    prompt="Pick one",
                    id="issue",
                    compact=True,
                )
                yield Label("Pick what is wrong with this field.", id="issue-error")
                for entry in agent_inputs(self.agent_type):
                    yield Label(entry.label, classes="question")
                    widget_id = entry.attribute.replace("_", "-")
                    if entry.multiline:
                        yield TextArea(id=widget_id, placeholder=entry.placeholder, compact=True)
                    else:
                        yield Input(id=widget_id, placeholder=entry.placeholder, compact=True)
                    if entry.hint:
                        yield Label(entry.hint, classes="hint")
                    if entry.attribute == "correct_value":
                        yield from self._compose_value_kind()
                    if entry.attribute == "correct_pattern":
                        yield Label("", id="pattern-error", classes="field-error")
                yield Label("Guidance notes", classes="question")
                yield TextArea(
                    id="notes",
                    placeholder="Describe what this field should contain...",
                    compact=True,
                )
                yield Label("Expected examples (input => expected output)", classes="question")
                yield Label(Content(EXAMPLES_HINT), classes="hint")
                yield ExamplesEditor(id="examples")
            with Horizontal(id="feedback-buttons"):
                yield Button("Add & pick another", id="add-another", compact=True)
                yield Button("Submit", variant="primary", id="submit", compact=True)
                yield Button("Submit & refine", variant="success", id="refine", compact=True)
                yield Button("Cancel", id="cancel", compact=True)
        yield Footer()

    def _compose_status(self) -> ComposeResult:
        field = self.field
        with Horizontal(classes="status-row"):
            yield Label("Coverage", classes="key")
            yield Label(
                f" {field.coverage}% ", classes=f"coverage -{coverage_band(field.coverage)}"
            )
            yield Label(f" {field.populated:,}/{self.total:,} items populated", classes="value")
        with Horizontal(classes="status-row"):
            yield Label("Type", classes="key")
            yield Label(Content(self._type_text()), classes="value")
        yield Label("Current logic", classes="key")
        logic = self.current_logic
        yield Static(
            Content(logic or AUTO_GENERATED),
            id="current-logic",
            classes="" if logic else "-auto",
        )

    def _compose_value_kind(self) -> ComposeResult:
        """The "Expression" box and its note, shown once the value reads like an expression."""
        with HorizontalGroup(id="value-kind-row") as row:
            row.display = False
            yield Checkbox(
                "Expression",
                id="value-is-expression",
                compact=True,
                tooltip="Ticked: computed from each item's fields and checked per item",
            )
            yield Label("", id="value-kind", classes="hint")

    def _type_text(self) -> str:
        field = self.field
        if not field.mixed:
            return field.type
        counts = ", ".join(f"{count} {kind}" for kind, count in field.type_counts.items())
        return f"{field.type} (mixed: {counts})"

    def to_model(self) -> FieldFeedback | None:
        """The feedback as filled in, or None while no issue is picked."""
        issue = self.query_one("#issue", Select).value
        if issue is Select.NULL:
            return None
        answers: dict[str, str | None] = {}
        for entry in agent_inputs(self.agent_type):
            widget = self.query_one(f"#{entry.attribute.replace('_', '-')}")
            assert isinstance(widget, Input | TextArea)
            answers[entry.attribute] = _cleaned(
                widget.text if isinstance(widget, TextArea) else widget.value
            )
        if self.value_is_expression():
            answers["correct_expression"] = answers.pop("correct_value")
        return FieldFeedback(
            field=self.field.name,
            issue=cast(FeedbackIssue, issue),
            notes=_cleaned(self.query_one("#notes", TextArea).text),
            examples=self.query_one(ExamplesEditor).to_model(),
            **answers,
        )

    def value_is_expression(self) -> bool:
        """Whether the correct value is taken as an expression ("Expression" shown, ticked)."""
        rows = self.query("#value-kind-row")
        if not rows or not rows.first().display:
            return False
        return self.query_one("#value-is-expression", Checkbox).value

    def action_finish(self, submit: bool, refine: bool = False) -> None:
        """Dismiss with the feedback, or point at the issue if none is picked yet."""
        feedback = self.to_model()
        if feedback is None:
            self.query_one("#issue-error").display = True
            self.query_one("#issue", Select).focus()
            return
        if pattern_error(feedback.correct_pattern or ""):
            self.query_one("#correct-pattern", Input).focus()
            return
        self.dismiss(FeedbackResult(feedback, submit, refine))

    async def action_add_example(self) -> None:
        await self.query_one(ExamplesEditor).add_example()

    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Select.Changed, "#issue")
    def _issue_picked(self, event: Select.Changed) -> None:
        if event.value is not Select.NULL:
            self.query_one("#issue-error").display = False

    @on(Input.Changed, "#correct-pattern")
    def _pattern_typed(self, event: Input.Changed) -> None:
        error = pattern_error(event.value)
        label = self.query_one("#pattern-error", Label)
        label.update(Content(error or ""))
        label.display = error is not None
        event.input.set_class(error is not None, "-invalid")

    @on(Input.Changed, "#correct-value")
    def _value_typed(self, event: Input.Changed) -> None:
        """Offer an expression over the item's fields as one (unless the user chose)."""
        expression = expression_in(event.value, self.item_fields)
        self.query_one("#value-kind-row").display = expression is not None
        if expression is None:
            return
        box = self.query_one("#value-is-expression", Checkbox)
        if not self.kind_chosen:
            with box.prevent(Checkbox.Changed):
                box.value = not expression.unknown(self.item_fields)
        self._show_value_kind(expression, box.value)

    @on(Checkbox.Changed, "#value-is-expression")
    def _kind_chosen(self, event: Checkbox.Changed) -> None:
        self.kind_chosen = True
        expression = expression_in(self.query_one("#correct-value", Input).value, self.item_fields)
        if expression is not None:
            self._show_value_kind(expression, event.value)

    def _show_value_kind(self, expression: FieldExpression, as_expression: bool) -> None:
        text = self.query_one("#correct-value", Input).value
        note = value_kind_note(text, expression, self.records, as_expression)
        self.query_one("#value-kind", Label).update(Content(note))

    @on(Button.Pressed, "#submit")
    def _submit_pressed(self) -> None:
        self.action_finish(True)

    @on(Button.Pressed, "#refine")
    def _refine_pressed(self) -> None:
        self.action_finish(True, True)

    @on(Button.Pressed, "#add-another")
    def _add_another_pressed(self) -> None:
        self.action_finish(False)

    @on(Button.Pressed, "#cancel")
    def _cancel_pressed(self) -> None:
        self.action_cancel()
