"""Copy: the full value (`y` in its modal), a card's whole text, and the toast that says what
was copied (a terminal without OSC 52 copies nothing: the toast still shows the text's start)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from artifact_factory import refinement_of_price, scrape_started, scrape_with_artifacts
from session_factory import (
    INTEREST_CODE,
    ITEMS,
    at_fixed_times,
    codeact_payloads,
    record,
    started,
    wait_until,
)
from textual.app import App
from textual.message import Message
from textual.notifications import Notify
from textual.widgets import TextArea

from tui_agent.events import Artifact, ExecutionFinished, LogLine, SessionEnded
from tui_agent.formatting import artifact_text
from tui_agent.session import StepState, fold
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.export.card_text import CARD_TEXTS, entry_name, entry_text, step_text
from tui_agent.tui.export.clipboard import PREVIEW, copy_text, preview
from tui_agent.tui.paths import styles_dir
from tui_agent.tui.screens.session import SessionScreen
from tui_agent.tui.screens.value import ValueModal
from tui_agent.tui.stream_groups import CallGroup, StreamGroups
from tui_agent.tui.widgets.entry_cards import CARD_KINDS
from tui_agent.tui.widgets.items_grid import ItemsGrid


def toasts(messages: list[Message]) -> list[tuple[str, str]]:
    """Each toast posted, as (title, message), once each."""
    posted = {id(m): m for m in messages if isinstance(m, Notify)}
    return [(m.notification.title, m.notification.message) for m in posted.values()]


class ValueHarness(App[None]):
    CSS_PATH = [styles_dir() / "items.tcss"]

    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value

    def on_mount(self) -> None:
        self.push_screen(ValueModal("seller", 7, self.value))


async def test_y_in_the_value_modal_copies_the_whole_value() -> None:
    value = {"name": "Ana", "ratings": [4.5, 5], "note": "line one\nline two"}
    app = ValueHarness(value)
    messages: list[Message] = []
    async with app.run_test(size=(80, 24), message_hook=messages.append) as pilot:
        shown = app.screen.query_one(TextArea).text
        await pilot.press("y")
        assert app.clipboard == shown
        assert app.clipboard.startswith('{\n  "name": "Ana"')
        [(title, message)] = toasts(messages)
        assert title == f"Copied seller of item 7 · {len(shown)} characters"
        assert message == '{ "name": "Ana", "ratings": [ 4.5, 5 ], "note": "line one\\n…'
        await pilot.click(TextArea)  # the value's text has focus: `y` still copies
        app.copy_to_clipboard("")
        await pilot.press("y")
        assert app.clipboard == shown


async def test_y_copies_text_as_it_is() -> None:
    app = ValueHarness("Crème brûlée\n\ttabbed")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("y")
        assert app.clipboard == "Crème brûlée\n\ttabbed"


def test_the_toast_preview_is_the_start_on_one_line() -> None:
    assert preview("one line") == "one line"
    assert preview('{\n  "a": 1,\n\t"b": 2\n}') == '{ "a": 1, "b": 2 }'
    long = "x" * (PREVIEW + 5)
    assert preview(long) == "x" * (PREVIEW - 1) + "…"
    assert len(preview(long)) == PREVIEW
    assert preview("") == ""


async def test_copy_text_counts_characters_and_says_empty() -> None:
    app = App[None]()
    messages: list[Message] = []
    async with app.run_test(message_hook=messages.append):
        copy_text(app, "", "nothing")
        copy_text(app, "é", "one")
        assert app.clipboard == "é"
    assert toasts(messages) == [
        ("Copied nothing · 0 characters", "(empty)"),
        ("Copied one · 1 character", "é"),
    ]


def test_a_step_card_copies_thought_code_output_error_result() -> None:
    state = fold(
        at_fixed_times(
            "c0de000000a1", started(), codeact_payloads(), SessionEnded(status="completed")
        )
    )
    first, second, third = (state.steps[i] for i in (1, 2, 3))
    assert step_text(first) == (
        "Step 1\n\n"
        "Thought:\nI will compute the **compound interest** first.\n\n"
        "Code (python):\namount = principal * (1 + rate) ** years\n\n"
        "Output:\nwarning: principal is not defined yet\n\n"
        "Error: NameError: name 'principal' is not defined"
    )
    assert step_text(second) == (
        "Step 2\n\n"
        "Thought:\nDefine the inputs, then print and return the amount.\n\n"
        f"Code (python):\n{INTEREST_CODE}\n\n"
        "Output:\namount: 1628.89\nnote: rounded to cents\n\n"
        "Result:\n1628.89"
    )
    assert [entry_name(step) for step in (first, second)] == ["step 1", "step 2"]
    assert step_text(third).endswith("Answer:\nAfter 10 years at 5 % the amount is **$1,628.89**.")


def test_a_long_output_is_copied_whole() -> None:
    lines = [LogLine(stream="stdout", text=f"line {i}") for i in range(500)]
    step = StepState(
        index=4, code="print()", execution=ExecutionFinished(step=4, success=True, logs=lines)
    )
    text = step_text(step)
    assert text.count("\nline ") == 500 and text.endswith("line 499")


def test_every_card_kind_has_a_text() -> None:
    events = at_fixed_times(
        "5c4a9e000002",
        scrape_started(),
        [*scrape_with_artifacts(), *refinement_of_price()],
        SessionEnded(status="completed"),
    )
    state = fold(events)
    entries = StreamGroups().entries(state)
    texts = [entry_text(entry) for entry in entries]
    assert all(text.strip() for text in texts)
    [recipe] = [
        e for e in entries if isinstance(e, Artifact) and e.version == 1 and e.name == "recipe"
    ]
    assert entry_text(recipe) == artifact_text(recipe)
    assert entry_name(recipe) == "recipe v1"
    [group] = [e for e in entries if isinstance(e, CallGroup)]
    assert entry_name(group) == "plan calls"
    probe = entry_text(group)
    assert 'probe_click({"selector": "li.card"})' in probe
    assert "The click showed #details (1 element); the URL did not change." in probe
    assert set(CARD_TEXTS) == set(CARD_KINDS)  # every entry card has its text


async def test_y_in_a_stored_session_copies_the_cell(db_path: Path) -> None:
    state = await record(db_path, started(), codeact_payloads())
    app = TuiAgentApp(db_path, open_session=state.session_id)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen))
        app.screen.query_one(ItemsGrid).focus()
        await pilot.press("down", "y")
        assert app.clipboard == ITEMS[1]["title"]
        await pilot.press("Y")
        assert app.clipboard.startswith('{\n  "title": "Pine shelf"')
