"""Copy: the full value (`y` in its modal), a stream card's whole text (`y` on the stream), and
the toast that says what was copied (a terminal without OSC 52 copies nothing: the toast
still shows the text's start)."""

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

from tui_agent.events import (
    Artifact,
    Error,
    ExecutionFinished,
    Log,
    LogLine,
    SessionEnded,
    UserMessage,
)
from tui_agent.formatting import LINE_CHARS, artifact_text
from tui_agent.session import StepState, fold
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.export.clipboard import PREVIEW, copy_text, preview
from tui_agent.tui.paths import styles_dir
from tui_agent.tui.screens.session import SessionScreen
from tui_agent.tui.screens.value import ValueModal
from tui_agent.tui.stream.entry_text import CARD_LINES, entry_lines, entry_title
from tui_agent.tui.stream_groups import CallGroup, StreamGroups
from tui_agent.tui.widgets.entry_cards import CARD_KINDS
from tui_agent.tui.widgets.items_grid import ItemsGrid
from tui_agent.tui.widgets.stream_pane import StreamPane


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
    assert entry_lines(first) == [
        "Step 1",
        "I will compute the **compound interest** first.",
        "│ amount = principal * (1 + rate) ** years",
        "err│ warning: principal is not defined yet",
        "✗ NameError: name 'principal' is not defined",
    ]
    assert entry_lines(second) == [
        "Step 2",
        "Define the inputs, then print and return the amount.",
        *(f"│ {line}" for line in INTEREST_CODE.split("\n")),
        "out│ amount: 1628.89",
        "err│ note: rounded to cents",
        "→ 1628.89",
    ]
    assert [entry_title(step) for step in (first, second)] == ["Step 1", "Step 2"]
    assert entry_lines(third)[-2:] == [
        "Final answer",
        "After 10 years at 5 % the amount is **$1,628.89**.",
    ]


def test_a_long_output_is_copied_whole() -> None:
    lines = [LogLine(stream="stdout", text=f"line {i}") for i in range(500)]
    step = StepState(
        index=4, code="print()", execution=ExecutionFinished(step=4, success=True, logs=lines)
    )
    text = "\n".join(entry_lines(step))
    assert text.count("\nout│ line ") == 500 and text.endswith("out│ line 499")


def test_a_long_log_error_or_message_is_whole_where_its_card_cuts_it() -> None:
    long = "x" * (LINE_CHARS + 10)
    log = Log(message=f"{long}\nsecond line")
    error = Error(message=long, kind="fetch", detail="first\nsecond")
    message = UserMessage(turn=2, text=f"{long}\nbye", queued=True)
    assert entry_lines(log) == [f"   info {long}", "second line"]
    assert entry_lines(error) == [f"✗ fetch: {long}", "  first", "  second"]
    assert entry_lines(message) == ["you · sent while the agent worked", long, "bye"]
    assert [entry_title(entry) for entry in (log, error, message)] == [
        "log card",
        "error card",
        "user card",
    ]


def test_every_card_kind_has_a_text() -> None:
    events = at_fixed_times(
        "5c4a9e000002",
        scrape_started(),
        [*scrape_with_artifacts(), *refinement_of_price()],
        SessionEnded(status="completed"),
    )
    state = fold(events)
    entries = StreamGroups().entries(state)
    texts = ["\n".join(entry_lines(entry)) for entry in entries]
    assert all(text.strip() for text in texts)
    [recipe] = [
        e for e in entries if isinstance(e, Artifact) and e.version == 1 and e.name == "recipe"
    ]
    recipe_lines = entry_lines(recipe)
    assert recipe_lines[0] == "◆ recipe v1 · recipe generator"
    assert "\n".join(recipe_lines).endswith(artifact_text(recipe))
    assert entry_title(recipe) == "recipe v1"
    [group] = [e for e in entries if isinstance(e, CallGroup)]
    assert entry_title(group) == "plan"
    probe = "\n".join(entry_lines(group))
    assert '  ⚙ probe_click(selector="li.card")' in probe
    assert "The click showed #details (1 element); the URL did not change." in probe
    assert set(CARD_LINES) == set(CARD_KINDS)  # every entry card has its text


async def test_y_on_the_stream_copies_the_card_under_the_cursor_whole(db_path: Path) -> None:
    state = await record(db_path, started(), codeact_payloads())
    app = TuiAgentApp(db_path, open_session=state.session_id)
    messages: list[Message] = []
    async with app.run_test(size=(100, 30), message_hook=messages.append) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionScreen))
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        pane = screen.query_one(StreamPane)
        entries = pane.entries(screen.state)
        await wait_until(pilot, lambda: pane.card_count == len(entries))
        pane.focus()
        await pilot.press("y")  # no cursor: the newest card
        newest = "\n".join(entry_lines(entries[-1]))
        assert app.clipboard == newest
        [first] = [i for i, e in enumerate(entries) if isinstance(e, StepState) and e.index == 1]
        await pilot.press(*["up"] * (len(entries) - first))
        assert pane.cursor == first
        await pilot.press("y")
        step = entries[first]
        assert app.clipboard == "\n".join(entry_lines(step))
        assert app.clipboard.startswith("Step 1\nI will compute the **compound interest**")
        assert "err│ warning: principal is not defined yet" in app.clipboard
    assert toasts(messages)[-1][0] == f"Copied Step 1 · {len(app.clipboard)} characters"


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
