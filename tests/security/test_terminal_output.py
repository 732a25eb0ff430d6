"""Finding 2: no text from a sandbox, a page, a model or a file reaches the terminal as a
control sequence.

Each edge that writes such text is driven for real: `exec --headless` of a program in a
sandbox and `sessions list` / `show` of an imported session file as subprocesses (their
output captured whole), and the TUI's home list, stored session, replay and live screens
through Textual's own rendering, capturing what the app writes to its driver. The payloads
are the ones that did harm: a window title (OSC 0), the clipboard (OSC 52), a cursor
position query answered into the shell's input (CSI 6n), a DCS request, the same query as
one 8-bit C1 byte, a bare CR and a bidi override. `--json` keeps every value exactly.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from rich.control import Control
from rich.segment import Segment
from support.requirements import sandbox_backend
from textual.drivers.headless_driver import HeadlessDriver
from textual.pilot import Pilot

from tui_agent.agents.approval import Decision
from tui_agent.events import (
    CodeProposed,
    Error,
    Event,
    ExecutionFinished,
    ExecutionStarted,
    FinalAnswer,
    ItemsExtracted,
    Log,
    LogLine,
    PhaseFinished,
    PhaseStarted,
    SessionEnded,
    SessionStarted,
    Thought,
    ToolCall,
    ToolResult,
    dump_event,
)
from tui_agent.store import Store, read_jsonl
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.screens.approval import ApprovalModal
from tui_agent.tui.screens.confirm import ConfirmModal
from tui_agent.tui.screens.home import HomeScreen
from tui_agent.tui.screens.replay import ReplayScreen
from tui_agent.tui.screens.session import SessionScreen
from tui_agent.tui.widgets.sessions_table import SessionsTable

OSC_TITLE = "\x1b]0;pwned-title\x07"
OSC_CLIPBOARD = "\x1b]52;c;cHduZWQ=\x07"
CURSOR_QUERY = "\x1b[6n"
DCS_QUERY = "\x1bP$q m\x1b\\"
C1_QUERY = "\x9b6n"
HOSTILE = f"{OSC_TITLE}{OSC_CLIPBOARD}{CURSOR_QUERY}{DCS_QUERY}{C1_QUERY}over\rwrite\u202eevil"
"""Every payload in one string; each text field of the hostile session carries it."""
SEEN = "␛]0;pwned-title␇"
"""How the title payload reads once shown: its controls drawn as pictures."""
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""What may not reach a terminal as text (newline and tab may)."""
SIZE = (140, 45)


def controls_in(text: str) -> list[str]:
    """The control characters in `text` (none is the only good answer)."""
    return CONTROL.findall(text)


def tui_agent(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """`tui-agent --db tmp/s.db ARGS` with no config and no terminal; output kept as bytes."""
    env = {**os.environ, "TUI_AGENT_CONFIG_FILE": str(tmp_path / "none.toml"), "COLUMNS": "300"}
    command = [sys.executable, "-m", "tui_agent", "--db", str(tmp_path / "s.db"), *args]
    return subprocess.run(
        command, capture_output=True, timeout=240, env=env, stdin=subprocess.DEVNULL, cwd=tmp_path
    )


def output_of(result: subprocess.CompletedProcess[bytes]) -> str:
    return (result.stdout + result.stderr).decode("utf-8")


# --- a hostile session file ----------------------------------------------------------------


def hostile_events(session_id: str, kind: str = "code") -> list[Event]:
    """A recorded session whose title, task, thought, code, output, errors, tool calls,
    items, answer and ending all carry HOSTILE."""
    payloads: list[Event] = [
        SessionStarted(
            kind=kind,  # type: ignore[arg-type]
            title=f"title {HOSTILE}",
            params={"task": f"task {HOSTILE}"},
            test_context={"url": f"http://127.0.0.1/{HOSTILE}"},
        ),
        PhaseStarted(phase=f"plan {HOSTILE}", detail=HOSTILE),
        Thought(step=1, text=f"thinking {HOSTILE}"),
        CodeProposed(step=1, code=f"print('{HOSTILE}')"),
        ExecutionStarted(step=1, backend="docker"),
        ExecutionFinished(
            step=1,
            success=False,
            logs=[
                LogLine(stream="stdout", text=f"out {HOSTILE}"),
                LogLine(stream="stderr", text=f"err {HOSTILE}"),
            ],
            error={"type": f"Err{HOSTILE}", "message": HOSTILE, "traceback": HOSTILE},  # type: ignore[arg-type]
            result={f"key {HOSTILE}": HOSTILE},
        ),
        ToolCall(call_id=f"call {HOSTILE}", name=f"tool{HOSTILE}", arguments={"q": HOSTILE}),
        ToolResult(call_id=f"call {HOSTILE}", name=f"tool{HOSTILE}", output=HOSTILE, ok=False),
        ItemsExtracted(step=1, items=[{"name": HOSTILE, HOSTILE: "value"}]),
        Log(level="warning", message=f"log {HOSTILE}"),
        Error(message=f"error {HOSTILE}"),
        PhaseFinished(phase=f"plan {HOSTILE}", ok=False, summary=HOSTILE),
        FinalAnswer(step=1, text=f"answer {HOSTILE}"),
        SessionEnded(status="failed", stopped_reason=HOSTILE, summary=HOSTILE),
    ]
    return [
        event.model_copy(update={"session_id": session_id, "seq": seq, "ts": 1.7e9 + seq})
        for seq, event in enumerate(payloads, start=1)
    ]


def write_session(path: Path, events: list[Event]) -> Path:
    path.write_text("".join(dump_event(event) + "\n" for event in events), encoding="utf-8")
    return path


@pytest.fixture
def hostile_files(tmp_path: Path) -> list[Path]:
    """Two sessions (codeact, scrape) with plain ids, one whose very id is hostile."""
    return [
        write_session(tmp_path / "codeact.jsonl", hostile_events("c0de00000001")),
        write_session(tmp_path / "scrape.jsonl", hostile_events("5c4a00000002", "scrape")),
        write_session(tmp_path / "id.jsonl", hostile_events(f"1d{HOSTILE}")),
    ]


@pytest.fixture
def imported(tmp_path: Path, hostile_files: list[Path]) -> subprocess.CompletedProcess[bytes]:
    """`sessions import` of the hostile files (a hostile id may be refused, in one line)."""
    return tui_agent(tmp_path, "sessions", "import", *map(str, hostile_files))


# --- the CLI -------------------------------------------------------------------------------

PROGRAM = f"""\
import sys
# a comment the file itself carries: {OSC_TITLE}
HOSTILE = {HOSTILE!r}

def main():
    print("title", HOSTILE)
    print("clipboard {OSC_CLIPBOARD!r} query {CURSOR_QUERY!r}".encode().decode("unicode_escape"))
    sys.stdout.write("dcs " + {DCS_QUERY!r} + " c1 " + {C1_QUERY!r} + "\\n")
    print("bar 10%\\rbar 100%")
    sys.stderr.write("stderr " + HOSTILE + "\\n")
    raise RuntimeError("failed " + HOSTILE)
"""


def test_exec_headless_prints_the_program_s_controls_as_pictures(tmp_path: Path) -> None:
    """A program in a real sandbox prints every payload on stdout and stderr, carries one in
    its source and fails with one in its error: nothing of it reaches the terminal."""
    program = tmp_path / "hostile.py"
    program.write_text(PROGRAM, encoding="utf-8")
    backend = sandbox_backend()
    result = tui_agent(
        tmp_path,
        "exec",
        str(program),
        "--sandbox",
        backend,
        "--workspace",
        str(tmp_path / "ws"),
        "--headless",
    )
    shown = output_of(result)
    assert result.returncode == 1, shown  # the program failed, as it meant to
    assert "RuntimeError" in shown
    assert controls_in(shown) == []
    assert SEEN in shown  # shown, not acted on
    assert "bar 10%␍bar 100%" in shown
    assert "\\x9b6n" in shown and "\\u202eevil" in shown


def test_sessions_list_and_show_print_an_imported_session_s_controls_as_pictures(
    tmp_path: Path, imported: subprocess.CompletedProcess[bytes]
) -> None:
    """The title, task, outputs, errors, tool calls and ids of imported sessions, listed
    and shown (the event stream of a codeact session and the report of a scrape)."""
    assert controls_in(output_of(imported)) == []
    listing = tui_agent(tmp_path, "sessions", "list")
    assert listing.returncode == 0, listing.stderr
    outputs = [imported, listing]
    for session in ("c0de", "5c4a", "1d"):
        shown = tui_agent(tmp_path, "sessions", "show", session)
        if session == "1d" and shown.returncode != 0:  # the hostile id was refused
            assert b"1d" not in imported.stdout, output_of(imported)
        else:
            assert shown.returncode == 0, output_of(shown)
            assert SEEN in output_of(shown)
        outputs.append(shown)
    for result in outputs:
        assert controls_in(output_of(result)) == [], output_of(result)
    assert SEEN in output_of(listing)


def test_json_output_keeps_every_value_and_no_raw_control(
    tmp_path: Path, imported: subprocess.CompletedProcess[bytes]
) -> None:
    """`--json` is faithful (the values read back exactly) and still terminal-safe: JSON
    escapes C0 itself; DEL, C1 and bidi controls are written as \\u escapes too."""
    listing = tui_agent(tmp_path, "sessions", "list", "--json")
    assert listing.returncode == 0, listing.stderr
    titles = {json.loads(line)["title"] for line in listing.stdout.decode().splitlines()}
    assert f"title {HOSTILE}" in titles
    report = tui_agent(tmp_path, "sessions", "show", "c0de", "--json")
    assert report.returncode == 0, report.stderr
    document = json.loads(report.stdout)
    assert document["summary"]["title"] == f"title {HOSTILE}"
    assert {f"out {HOSTILE}", f"error {HOSTILE}", f"answer {HOSTILE}"} <= strings(document)
    for result in (listing, report):
        assert controls_in(result.stdout.decode()) == []


def strings(value: Any) -> set[str]:
    """Every string in a JSON value, keys included."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return {k for k in value} | {s for v in value.values() for s in strings(v)}
    if isinstance(value, list):
        return {s for item in value for s in strings(item)}
    return set()


# --- the TUI -------------------------------------------------------------------------------

PAYLOADS = ("\x1b]0;pwned", "\x1b]52;", CURSOR_QUERY, "\x1bP$q", "\x9b", "\r", "\u202e")
"""What the app may never write to its terminal (it writes other sequences itself, such as
OSC 22 for the pointer's shape)."""


def recording_driver(written: list[str]) -> type[HeadlessDriver]:
    """Textual's headless driver, except that the app renders to it as to a terminal and
    everything it writes is kept in `written`."""

    class RecordingDriver(HeadlessDriver):
        @property
        def is_headless(self) -> bool:
            return False

        def write(self, data: str) -> None:
            written.append(data)

    return RecordingDriver


def assert_terminal_safe(written: list[str]) -> None:
    """Nothing the app wrote holds a payload; the title payload was drawn instead (as
    text: styles may come between its characters, as syntax highlighting puts them)."""
    output = "".join(written)
    assert output, "the app wrote nothing"
    assert [payload for payload in PAYLOADS if payload in output] == []
    text = re.sub("\x1b\\[[0-9;]*m", "", output)  # without the app's own colours
    assert "␛]0;pwned-title" in text


async def store_sessions(db: Path, *sessions: list[Event]) -> None:
    async with await Store.open(db) as store:
        for events in sessions:
            for event in events:
                await store.append(event)


async def _wait(pilot: Pilot[Any], condition: Any) -> None:
    for _ in range(500):
        if condition():
            return
        await pilot.pause(0.02)
    raise AssertionError("the app never reached the awaited state")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "sessions.db"


async def test_tui_home_list_writes_no_control_sequence(db: Path) -> None:
    """The home list of sessions whose titles and ids carry the payloads, and the delete
    question that quotes them."""
    await store_sessions(
        db, hostile_events("c0de00000001"), hostile_events(f"1d{HOSTILE}", "scrape")
    )
    written: list[str] = []
    app = TuiAgentApp(db)
    app.driver_class = recording_driver(written)
    async with app.run_test(headless=False, size=SIZE) as pilot:
        await _wait(pilot, lambda: isinstance(app.screen, HomeScreen))
        await _wait(pilot, lambda: app.screen.query_one(SessionsTable).row_count == 2)
        await pilot.pause()
        await pilot.press("d")  # asks before deleting, quoting the title and id
        await _wait(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.pause()
    assert_terminal_safe(written)


@pytest.mark.parametrize("mode", ["stored", "replay", "replay-file", "live"])
async def test_tui_session_screens_write_no_control_sequence(
    db: Path, tmp_path: Path, mode: str
) -> None:
    """A hostile session opened stored, replayed from the store and from its file, and
    followed live: every card (thought, code, output, error, tool calls, items, answer)
    and the title line."""
    events = hostile_events("c0de00000001")
    written: list[str] = []
    if mode == "replay-file":
        path = write_session(tmp_path / "hostile.jsonl", events)
        app = TuiAgentApp(db, replay_events=read_jsonl(path))
    elif mode == "live":
        app = TuiAgentApp(db)
        first = events[0]
        assert isinstance(first, SessionStarted)
        app.start_session(first, _agent(events[1:-1]))
    else:
        await store_sessions(db, events)
        if mode == "stored":
            app = TuiAgentApp(db, open_session="c0de")
        else:
            app = TuiAgentApp(db, replay_session="c0de")
    app.driver_class = recording_driver(written)
    async with app.run_test(headless=False, size=SIZE) as pilot:
        await _wait(pilot, lambda: isinstance(app.screen, SessionScreen))
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        if isinstance(screen, ReplayScreen):
            await pilot.press("end")
        await _wait(pilot, lambda: screen.shown_seq == len(events))
        app.notify(f"a toast quoting {HOSTILE}")
        await pilot.pause()
    assert_terminal_safe(written)
    assert "answer" in "".join(written)


async def test_the_approval_modal_draws_the_model_s_controls_and_runs_its_code_as_written(
    db: Path,
) -> None:
    """Code a model proposes, raw controls in it, is shown drawn; left as it is, the code
    approved is the code proposed, byte for byte."""
    code = f"# {HOSTILE}\nprint('done')\n"  # raw controls, in a comment
    decisions: list[Decision | None] = []
    written: list[str] = []
    app = TuiAgentApp(db)
    app.driver_class = recording_driver(written)
    async with app.run_test(headless=False, size=SIZE) as pilot:
        await _wait(pilot, lambda: isinstance(app.screen, HomeScreen))
        app.push_screen(ApprovalModal(1, code), decisions.append)
        await _wait(pilot, lambda: isinstance(app.screen, ApprovalModal))
        await pilot.pause()
        await pilot.press("ctrl+r")
        await _wait(pilot, lambda: bool(decisions))
    assert_terminal_safe(written)
    assert decisions == [Decision("run")]


async def _agent(events: list[Event]) -> AsyncIterator[Event]:
    """A test agent replaying recorded payloads (the recorder stamps them anew)."""
    for event in events:
        yield event.model_copy(update={"session_id": "", "seq": 0})


def test_the_filter_under_the_tui_keeps_a_line_s_width() -> None:
    """The last net drops what is left (zero cells wide) and changes nothing else."""
    from tui_agent.tui.terminal_filter import ControlFilter

    own = Control.clear().segment  # a control of the app's own
    line = [Segment("a\x1b]0;t\x07b"), own]
    filtered = ControlFilter().apply(line, None)  # type: ignore[arg-type]
    assert filtered[0].text == "a]0;tb"
    assert filtered[1] is own
    clean = [Segment("plain text")]
    assert ControlFilter().apply(clean, None) is clean  # type: ignore[arg-type]
