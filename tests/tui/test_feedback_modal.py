"""The feedback modal: what it shows, what it is dismissed with for each agent type."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import Checkbox, Input, Label, Select, Static, TextArea

from tui_agent.analysis.shapes import (
    FEEDBACK_ISSUE_LABELS,
    FeedbackExample,
    FieldDefinition,
    FieldFeedback,
)
from tui_agent.tui.screens.feedback import AUTO_GENERATED, FeedbackModal, FeedbackResult
from tui_agent.tui.widgets.examples_editor import ExampleRow, parse_example_value

PRICE = FieldDefinition(
    name="offer.price",
    type="number",
    type_counts={"number": 450, "string": 12},
    mixed=True,
    coverage=45,
    populated=462,
    examples=[12.5, 3, "n/a"],
)


class FeedbackHarness(App[None]):
    """An app that opens the feedback modal on mount and keeps what it is dismissed with."""

    def __init__(
        self,
        agent_type: str,
        current_logic: str | None = None,
        field: FieldDefinition = PRICE,
        total: int = 1_027,
        items: Sequence[Any] = (),
    ) -> None:
        super().__init__()
        self.modal = FeedbackModal(field, total, agent_type, current_logic, items=items)
        self.results: list[FeedbackResult | None] = []

    def on_mount(self) -> None:
        self.push_screen(self.modal, self.results.append)


async def pick_issue(pilot: Pilot[Any], issue: str) -> None:
    """Open the issue list (focused first) and pick `issue` with the keyboard."""
    steps = list(FEEDBACK_ISSUE_LABELS).index(issue) + 1
    await pilot.press("enter", *["down"] * steps, "enter")


def write(pilot: Pilot[Any], text: str) -> None:
    """Enter `text` into the focused input or text area (as a paste would)."""
    focused = pilot.app.focused
    if isinstance(focused, Input):
        focused.insert_text_at_cursor(text)
    else:
        assert isinstance(focused, TextArea)
        focused.insert(text)


async def type_into(pilot: Pilot[Any], text: str) -> None:
    """Tab to the next input and enter `text`."""
    await pilot.press("tab")
    write(pilot, text)


async def add_example(pilot: Pilot[Any], given: str, expected: str) -> None:
    """Add an example row with ctrl+o and fill both sides."""
    await pilot.press("ctrl+o")
    write(pilot, given)
    await type_into(pilot, expected)


def text_of(app: FeedbackHarness, selector: str) -> str:
    widget = app.modal.query_one(selector)
    assert isinstance(widget, Label | Static)
    return str(widget.render())


async def test_shows_the_field_coverage_type_and_logic() -> None:
    app = FeedbackHarness("scraper", current_logic="card.select_one('.price').text")
    async with app.run_test(size=(100, 30)):
        assert text_of(app, "#feedback-title") == 'Fix field "offer.price"'
        status = " ".join(str(w.render()) for w in app.modal.query(".status-row Label"))
        assert "45%" in status
        assert "462/1,027" in status
        assert "number (mixed: 450 number, 12 string)" in status
        assert text_of(app, "#current-logic") == "card.select_one('.price').text"
        assert app.modal.query_one(".coverage").has_class("-low")
        assert app.focused is app.modal.query_one("#issue", Select)


async def test_unknown_logic_reads_auto_generated() -> None:
    app = FeedbackHarness("transformer")
    async with app.run_test(size=(100, 30)):
        assert text_of(app, "#current-logic") == AUTO_GENERATED
        assert app.modal.query_one("#current-logic").has_class("-auto")


async def test_scraper_feedback_is_submitted_with_selector_notes_and_examples() -> None:
    app = FeedbackHarness("scraper")
    async with app.run_test(size=(100, 30)) as pilot:
        await pick_issue(pilot, "wrong")
        await type_into(pilot, ".offer .price")
        await type_into(pilot, "The sale price, not the old one")
        await type_into(pilot, "12.50")
        await type_into(pilot, "12.5")
        await add_example(pilot, '"EUR 3"', "3")
        await pilot.press("ctrl+s")
    assert app.results == [
        FeedbackResult(
            FieldFeedback(
                field="offer.price",
                issue="wrong",
                correct_selector=".offer .price",
                notes="The sale price, not the old one",
                examples=[
                    FeedbackExample(input=12.5, expected_output=12.5),
                    FeedbackExample(input="EUR 3", expected_output=3),
                ],
            ),
            submit=True,
        )
    ]


async def test_transformer_feedback_keeps_collecting_with_ctrl_n() -> None:
    app = FeedbackHarness("transformer")
    async with app.run_test(size=(100, 30)) as pilot:
        await pick_issue(pilot, "format")
        await type_into(pilot, "round(x, 2)")
        await pilot.press("enter")
        write(pilot, "  # two decimals")
        await pilot.press("tab")
        await type_into(pilot, "3.14159")
        await type_into(pilot, "3.14")
        await pilot.press("ctrl+n")
    [result] = app.results
    assert result == FeedbackResult(
        FieldFeedback(
            field="offer.price",
            issue="format",
            correct_expression="round(x, 2)\n  # two decimals",
            examples=[FeedbackExample(input=3.14159, expected_output=3.14)],
        ),
        submit=False,
    )


async def test_analyzer_feedback_has_a_pattern_and_a_description() -> None:
    app = FeedbackHarness("analyzer")
    async with app.run_test(size=(100, 30)) as pilot:
        await pick_issue(pilot, "partial")
        await type_into(pilot, r"Total: \d+")
        await type_into(pilot, "Amounts after 'Total:'")
        await pilot.press("ctrl+s")
    [result] = app.results
    assert result is not None
    assert result.feedback == FieldFeedback(
        field="offer.price",
        issue="partial",
        correct_pattern=r"Total: \d+",
        value_description="Amounts after 'Total:'",
    )


async def test_a_pattern_that_is_no_regular_expression_is_flagged_as_you_type() -> None:
    app = FeedbackHarness("analyzer")
    async with app.run_test(size=(100, 30)) as pilot:
        await pick_issue(pilot, "format")
        await type_into(pilot, "Total: (")
        await pilot.pause()
        error = app.modal.query_one("#pattern-error", Label)
        assert error.display and "Not a regular expression" in str(error.content)
        assert app.modal.query_one("#correct-pattern", Input).has_class("-invalid")
        await pilot.press("ctrl+s")  # refused: the modal stays open on the pattern
        assert app.results == [] and app.focused is app.modal.query_one("#correct-pattern")
        await pilot.press("backspace")
        await pilot.pause()
        assert not error.display
        await pilot.press("ctrl+s")
    [result] = app.results
    assert result is not None and result.feedback.correct_pattern == "Total:"


async def test_api_client_feedback_has_parameters_and_mapping() -> None:
    app = FeedbackHarness("api-client")
    async with app.run_test(size=(100, 30)) as pilot:
        await pick_issue(pilot, "missing")
        await type_into(pilot, '{"fields": "price"}')
        await type_into(pilot, "data.items[].price.amount")
        await pilot.press("ctrl+s")
    [result] = app.results
    assert result is not None
    assert result.feedback == FieldFeedback(
        field="offer.price",
        issue="missing",
        request_parameters='{"fields": "price"}',
        response_mapping="data.items[].price.amount",
    )


@pytest.mark.parametrize("agent_type", ["generic", "codeact"])
async def test_other_agents_give_a_correct_value(agent_type: str) -> None:
    app = FeedbackHarness(agent_type)
    async with app.run_test(size=(100, 30)) as pilot:
        await pick_issue(pilot, "wrong")
        await type_into(pilot, "  9.99  ")
        await pilot.click("#submit")
    [result] = app.results
    assert result is not None
    assert result.feedback == FieldFeedback(
        field="offer.price", issue="wrong", correct_value="9.99"
    )
    assert result.submit


async def test_the_issue_is_required_and_blanks_become_none() -> None:
    app = FeedbackHarness("scraper")
    async with app.run_test(size=(100, 30)) as pilot:
        error = app.modal.query_one("#issue-error")
        assert not error.display
        await type_into(pilot, "   ")
        await pilot.press("ctrl+s")
        assert app.results == []
        assert error.display
        assert app.focused is app.modal.query_one("#issue", Select)
        await pick_issue(pilot, "missing")
        assert not error.display
        await pilot.click("#add-another")
    assert app.results == [
        FeedbackResult(FieldFeedback(field="offer.price", issue="missing"), submit=False)
    ]


async def test_escape_cancels() -> None:
    app = FeedbackHarness("scraper")
    async with app.run_test(size=(100, 30)) as pilot:
        await pick_issue(pilot, "missing")
        await type_into(pilot, ".price")
        await pilot.press("escape")
        assert app.results == [None]
        assert app.screen is not app.modal


async def test_escape_in_the_issue_list_only_closes_the_list() -> None:
    app = FeedbackHarness("scraper")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("enter", "escape")
        assert app.screen is app.modal
        await pilot.press("escape")
        assert app.results == [None]


async def test_examples_can_be_added_and_removed() -> None:
    app = FeedbackHarness("transformer")
    async with app.run_test(size=(100, 30)) as pilot:
        await pick_issue(pilot, "wrong")
        await add_example(pilot, "a", "A")
        await add_example(pilot, "b", "B")
        await add_example(pilot, "c", "C")
        rows = list(app.modal.query(ExampleRow))
        assert len(rows) == 4
        await pilot.click(rows[2].query_one(".example-remove"))
        await pilot.pause()
        assert len(app.modal.query(ExampleRow)) == 3
        assert app.focused is rows[3].query_one(".example-input", Input)
        await pilot.press("ctrl+s")
    [result] = app.results
    assert result is not None
    assert result.feedback.examples == [
        FeedbackExample(input="a", expected_output="A"),
        FeedbackExample(input="c", expected_output="C"),
    ]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("", None),
        ("   ", None),
        ("42", 42),
        ("[1, 2]", [1, 2]),
        ('{"a": null}', {"a": None}),
        ("true", True),
        ("hello world", "hello world"),
        ("  padded ", "padded"),
        ("{not json", "{not json"),
    ],
)
def test_example_values_are_json_when_they_parse(text: str, value: Any) -> None:
    assert parse_example_value(text) == value


def test_snapshot_scraper_modal(snap_compare: Any) -> None:
    app = FeedbackHarness("scraper", current_logic="item['price'] = card.select_one('.price').text")
    assert snap_compare(app, terminal_size=(100, 30))


def test_snapshot_transformer_modal(snap_compare: Any) -> None:
    field = FieldDefinition(name="title", type="string", coverage=68, populated=68)
    app = FeedbackHarness("transformer", field=field, total=100)
    assert snap_compare(app, terminal_size=(100, 30))


def test_snapshot_modal_at_80x24_after_a_missing_issue(snap_compare: Any) -> None:
    assert snap_compare(FeedbackHarness("api-client"), terminal_size=(80, 24), press=["ctrl+s"])


async def test_ctrl_r_submits_and_asks_to_refine() -> None:
    app = FeedbackHarness("scraper")
    async with app.run_test(size=(100, 30)) as pilot:
        await pick_issue(pilot, "missing")
        await type_into(pilot, ".price")
        await pilot.press("ctrl+r")
    assert app.results == [
        FeedbackResult(
            FieldFeedback(field="offer.price", issue="missing", correct_selector=".price"),
            submit=True,
            refine=True,
        )
    ]


async def test_the_refine_button_submits_and_asks_to_refine() -> None:
    app = FeedbackHarness("generic")
    async with app.run_test(size=(100, 30)) as pilot:
        await pick_issue(pilot, "wrong")
        await pilot.click("#refine")
    [result] = app.results
    assert result is not None and result.submit and result.refine


def test_snapshot_analyzer_modal_with_a_pattern_that_does_not_compile(snap_compare: Any) -> None:
    async def typed(pilot: Pilot[Any]) -> None:
        await pick_issue(pilot, "format")
        await type_into(pilot, r"low|mid|high(")
        await type_into(pilot, "price bands: low under 50, mid up to 100, high above")
        await pilot.pause()

    assert snap_compare(FeedbackHarness("analyzer"), terminal_size=(100, 30), run_before=typed)


# -- a correct value typed as an expression ---------------------------------------------------

ORDERS = [
    {"name": "Oak desk", "qty": 1, "price": 100.0, "total": 100.0},
    {"name": "Lamp", "qty": 3, "price": 19.99, "total": None},
]
TOTAL = FieldDefinition(name="total", type="number", coverage=50, populated=1)


def expression_form() -> FeedbackHarness:
    return FeedbackHarness("generic", field=TOTAL, total=2, items=ORDERS)


def value_kind(app: FeedbackHarness) -> tuple[bool, bool, str]:
    """Whether the Expression box shows, whether it is ticked, and its note."""
    row = app.modal.query_one("#value-kind-row")
    box = app.modal.query_one("#value-is-expression", Checkbox)
    return row.display, box.value, text_of(app, "#value-kind")


async def test_an_expression_over_the_items_fields_is_offered_as_one() -> None:
    app = expression_form()
    async with app.run_test(size=(100, 30)) as pilot:
        assert not value_kind(app)[0]  # nothing typed: no box
        await pick_issue(pilot, "missing")
        await type_into(pilot, "round(qty * price, 2)")
        await pilot.pause()
        assert value_kind(app) == (
            True,
            True,
            "computed per item from qty, price (item 1: 100.0)",
        )
        await pilot.press("ctrl+s")
    [result] = app.results
    assert result is not None
    assert result.feedback == FieldFeedback(
        field="total", issue="missing", correct_expression="round(qty * price, 2)"
    )


@pytest.mark.parametrize("typed", ["9.99", "EUR", "'qty * price'", "out of stock", "1 + 2"])
async def test_literals_and_words_stay_literal_with_no_box(typed: str) -> None:
    app = expression_form()
    async with app.run_test(size=(100, 30)) as pilot:
        await pick_issue(pilot, "wrong")
        await type_into(pilot, typed)
        await pilot.pause()
        assert not value_kind(app)[0]
        await pilot.press("ctrl+s")
    [result] = app.results
    assert result is not None
    assert (result.feedback.correct_value, result.feedback.correct_expression) == (
        typed.strip(),
        None,
    )


async def test_a_name_that_is_no_field_is_offered_unticked_and_said_so() -> None:
    app = expression_form()
    async with app.run_test(size=(100, 30)) as pilot:
        await pick_issue(pilot, "wrong")
        await type_into(pilot, "qty * prcie")
        await pilot.pause()
        assert value_kind(app) == (True, False, "checked as the text 'qty * prcie'")
        await pilot.press("tab", "space")  # the user ticks it anyway
        await pilot.pause()
        assert value_kind(app) == (True, True, "no field prcie: told to the model, not checked")
        await pilot.press("ctrl+s")
    [result] = app.results
    assert result is not None and result.feedback.correct_expression == "qty * prcie"


async def test_the_users_choice_sticks_while_the_value_is_edited() -> None:
    app = expression_form()
    async with app.run_test(size=(100, 30)) as pilot:
        await pick_issue(pilot, "wrong")
        await type_into(pilot, "qty")
        await pilot.pause()
        assert value_kind(app)[:2] == (True, True)
        await pilot.press("tab", "space", "shift+tab", "end")  # untick, back to the value
        write(pilot, " * price")
        await pilot.pause()
        assert value_kind(app) == (True, False, "checked as the text 'qty * price'")
        app.modal.query_one("#correct-value", Input).value = "12"  # a literal: no box

        await pilot.pause()
        assert not value_kind(app)[0]
        await pilot.press("ctrl+s")
    [result] = app.results
    assert result is not None and result.feedback.correct_value == "12"


@pytest.mark.parametrize("size", [(80, 24), (120, 36)], ids=["80x24", "120x36"])
def test_snapshot_generic_modal_offering_an_expression(
    snap_compare: Any, size: tuple[int, int]
) -> None:
    async def typed(pilot: Pilot[Any]) -> None:
        await pick_issue(pilot, "missing")
        await type_into(pilot, "qty * price")
        await pilot.pause()

    assert snap_compare(expression_form(), terminal_size=size, run_before=typed)
