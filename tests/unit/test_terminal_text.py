"""The terminal sanitiser: what it draws, what it keeps, and the nets under rich and Textual."""

import io
import json

import pytest
from rich.text import Text

from tui_agent.events import ExecutionFinished, LogLine, SessionStarted, dump_event
from tui_agent.printer import TerminalConsole
from tui_agent.terminal_text import (
    json_may_be_unsafe,
    terminal_json,
    visible,
    visible_event,
    without_unsafe,
)

UNSAFE = [
    chr(code)
    for code in [*range(0x20), *range(0x7F, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
    if chr(code) not in "\n\t"
]
"""Every character `visible` draws instead of passing on."""


def test_visible_draws_every_control_and_keeps_newline_and_tab() -> None:
    assert visible("a\x1b]0;t\x07b") == "a␛]0;t␇b"
    assert visible("\x00\x08\x0b\x0c\x1f\x7f") == "␀␈␋␌␟␡"
    assert visible("csi \x9b6n, osc \x9d") == "csi \\x9b6n, osc \\x9d"
    assert (
        visible("rtl \u202eevil\u202c \u2066iso\u2069")
        == "rtl \\u202eevil\\u202c \\u2066iso\\u2069"
    )
    assert visible("tab\tnew\nline") == "tab\tnew\nline"
    assert visible("👨\u200d👩 zero\u200bwidth") == "👨\u200d👩 zero\u200bwidth"  # left alone


def test_a_cr_ending_a_line_is_dropped_and_any_other_is_drawn() -> None:
    assert visible("crlf\r\nline\r") == "crlf\nline"
    assert visible("bar 10%\rbar 100%") == "bar 10%␍bar 100%"


def test_clean_text_is_the_same_object() -> None:
    text = "plain text, ünïcode and emoji 🎉"
    assert visible(text) is text
    assert without_unsafe(text) is text


def test_without_unsafe_drops_only_what_is_zero_cells_wide() -> None:
    from rich.cells import cell_len

    hostile = "a\x1b]52;c;x\x07\x9b\u202e\x7fb"
    assert without_unsafe(hostile) == "a]52;c;xb"
    assert cell_len(without_unsafe(hostile)) == cell_len(hostile)


def test_terminal_json_reads_back_the_same_values() -> None:
    value = {"t\x9bkey": "esc \x1b del \x7f c1 \x85 bidi \u202e ünï"}
    text = terminal_json(json.dumps(value, ensure_ascii=False))
    assert json.loads(text) == value
    assert not any(c in text for c in "\x1b\x7f\x85\x9b\u202e")
    assert "ünï" in text  # other text stays as it was written


def test_visible_event_copies_only_what_changes_and_keeps_the_session_id() -> None:
    logs = [LogLine(stream="stdout", text="clean"), LogLine(stream="stderr", text="\x1b[6n")]
    event = ExecutionFinished(
        session_id="id\x1b", step=1, success=True, logs=logs, result={"k\x1b": ["v\x1b", 1]}
    )
    shown = visible_event(event)
    assert shown.session_id == "id\x1b"  # a key: kept
    assert [line.text for line in shown.logs] == ["clean", "␛[6n"]
    assert shown.logs[0] is logs[0]
    assert shown.result == {"k␛": ["v␛", 1]}
    assert event.logs[1].text == "\x1b[6n"  # the recorded event is untouched
    clean = SessionStarted(kind="exec", title="plain")
    assert visible_event(clean) is clean


def test_the_console_net_keeps_rich_styles_and_drops_controls_in_text() -> None:
    out = io.StringIO()
    console = TerminalConsole(file=out, force_terminal=True, color_system="standard")
    console.print(Text("a\x1b]0;pwned\x07b\x9b6n", style="bold red"))
    printed = out.getvalue()
    assert "\x1b[1;31m" in printed  # rich's own style
    assert "\x1b]0;" not in printed and "\x07" not in printed and "\x9b" not in printed
    assert "a]0;pwnedb6n" in printed


@pytest.mark.parametrize("char", UNSAFE, ids=lambda c: f"U+{ord(c):04X}")
def test_json_holding_an_unsafe_character_anywhere_is_never_called_plain(char: str) -> None:
    event = ExecutionFinished(step=1, success=True, result={"k": [f"a{char}b"]})
    keyed = ExecutionFinished(step=1, success=True, result={f"k{char}": 1})
    for text in (
        dump_event(event),
        dump_event(keyed),
        json.dumps(f"x{char}", ensure_ascii=False),
        json.dumps(f"é{char}", ensure_ascii=True),
        json.dumps({"é": f"x{char}"}, ensure_ascii=False),
    ):
        assert json_may_be_unsafe(text), text
    assert visible_event(event) != event  # so the copy a plain verdict skips would differ


def test_plain_json_is_called_plain_in_any_script() -> None:
    for value in ["plain", "line\nnext\ttab", "café → 東京 🙂", {"ключ": ["значение"]}]:
        event = ExecutionFinished(step=1, success=True, result=value)
        assert not json_may_be_unsafe(dump_event(event))
        assert visible_event(event) is event
    assert json_may_be_unsafe(json.dumps("a\\r"))  # an escaped backslash: a safe false alarm
