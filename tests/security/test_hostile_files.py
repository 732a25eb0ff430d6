"""Session files and recipes written to hurt: each is one line and a non-zero exit, never a
traceback or a hang, and a big session that is imported replays in bounded time.

Real `tui-agent` processes and SQLite; the replay runs the real app in this process. Files are
made in the test's folder: 100,000 levels of nested JSON, REPEAT 1e9 times, ids that would be
taken for each other, and tens of megabytes of streamed thought.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tui_agent.events import BaseEvent, Log, SessionEnded, SessionStarted, dump_event
from tui_agent.store import Store

RECIPES = Path(__file__).resolve().parents[2] / "recipes"
DEEP = 100_000
BOUND = 300
"""Seconds a command may take on a busy machine (a bound, never asserted as a timing)."""
BIG_MB = 80
"""A session file larger than an import takes by default (64 MB)."""


def tui_agent(
    tmp_path: Path, *args: str, timeout: float = BOUND
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui_agent", "--db", str(tmp_path / "sessions.db"), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={
            **os.environ,
            "TUI_AGENT_CONFIG_FILE": str(tmp_path / "none.toml"),
            "TUI_AGENT_MODEL": "",
        },
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
    )


def refused(result: subprocess.CompletedProcess[str]) -> str:
    """The one line a refusal prints (non-zero exit, no traceback)."""
    assert result.returncode != 0, result.stdout
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def session_lines(session_id: str, events: list[BaseEvent]) -> list[str]:
    return [
        dump_event(e.model_copy(update={"session_id": session_id, "seq": n, "ts": 1000.0 + n}))
        for n, e in enumerate(events, start=1)
    ]


def write_session(path: Path, session_id: str, events: list[BaseEvent] | None = None) -> Path:
    events = events or [SessionStarted(kind="exec", title="t"), SessionEnded(status="completed")]
    path.write_text("\n".join(session_lines(session_id, events)) + "\n", encoding="utf-8")
    return path


def stored_ids(tmp_path: Path) -> list[str]:
    async def read() -> list[str]:
        async with await Store.open(tmp_path / "sessions.db") as store:
            return sorted(s.session_id for s in await store.list_sessions())

    return asyncio.run(read())


@pytest.mark.parametrize("depth", [150, DEEP])  # 150: parsed by both JSON readers
def test_an_import_nested_too_deep_is_one_line(tmp_path: Path, depth: int) -> None:
    first = session_lines("deep00000000", [SessionStarted(kind="exec", title="deep")])[0]
    deep = '{"type":"items_extracted","session_id":"deep00000000","seq":2,"ts":1.0,"items":'
    deep += "[" * depth + "]" * depth + "}"
    path = tmp_path / "deep.jsonl"
    path.write_text(f"{first}\n{deep}\n", encoding="utf-8")

    line = refused(tui_agent(tmp_path, "sessions", "import", str(path)))
    assert line == (f"tui-agent: {path} line 2: JSON nested more than 100 levels deep")
    assert stored_ids(tmp_path) == []
    assert refused(tui_agent(tmp_path, "replay", str(path))) == line


def test_a_recipe_nested_100000_levels_deep_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text('{"recipe": ' + "[" * DEEP + "]" * DEEP + "}", encoding="utf-8")

    line = refused(tui_agent(tmp_path, "recipe", "run", str(path), "--url", "http://127.0.0.1:9/"))

    assert line == (
        f"tui-agent: recipe {path} is not a usable recipe: JSON nested more than 100 levels deep"
    )


def repeated(times: Any, inner: dict[str, Any] | None = None) -> dict[str, Any]:
    """demo-panel.json with its commands inside REPEAT `times` (inside `inner` too, if given)."""
    document = json.loads((RECIPES / "demo-panel.json").read_text())
    body = document["recipe"]["commands"]
    if inner is not None:
        body = [{**inner, "body": body}]
    document["recipe"]["commands"] = [{"type": "REPEAT", "times": times, "body": body}]
    return document


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        (repeated(1e9), "recipe.commands[0].times: Input should be less than or equal to 1000"),
        (
            repeated(100, {"type": "REPEAT", "times": 100}),
            "recipe.commands[0].body[0]: REPEATs nested here run up to 10,000 iterations "
            "(at most 1,000 together: lower times or maxIterations)",
        ),
    ],
    ids=["1e9 times", "nested"],
)
def test_repeat_beyond_its_cap_is_refused_when_the_recipe_is_read(
    tmp_path: Path, document: dict[str, Any], problem: str
) -> None:
    path = tmp_path / "repeat.json"
    path.write_text(json.dumps(document), encoding="utf-8")

    result = tui_agent(tmp_path, "recipe", "run", str(path), "--url", "http://127.0.0.1:9/")

    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert result.stderr.splitlines() == [
        f"tui-agent: {path} is not a valid recipe (1 error):",
        f"  {problem}",
    ]


def test_sessions_that_would_be_taken_for_each_other_are_not_imported(tmp_path: Path) -> None:
    first = write_session(tmp_path / "first.jsonl", "abcdef123456")
    assert tui_agent(tmp_path, "sessions", "import", str(first)).returncode == 0

    for name, other in [
        ("same-short", "abcdef12ffff"),  # `sessions list` shows both as abcdef12
        ("prefix", "abcdef12"),  # `replay abcdef12` would open it, not the first
        ("longer", "abcdef123456ff"),
    ]:
        path = write_session(tmp_path / f"{name}.jsonl", other)
        line = refused(tui_agent(tmp_path, "sessions", "import", str(path)))
        assert line.startswith(f"tui-agent: import refused: session {other} could be taken for")
        assert "abcdef123456" in line
    hostile = write_session(tmp_path / "escape.jsonl", "\x1b]0;pwned\x07")
    assert "is not 1 to 64 letters" in refused(
        tui_agent(tmp_path, "sessions", "import", str(hostile))
    )
    assert stored_ids(tmp_path) == ["abcdef123456"]

    again = tui_agent(tmp_path, "sessions", "import", "--skip-existing", str(first))
    assert again.returncode == 0
    assert again.stdout.strip() == f"{first}: session abcdef123456 already imported"
    shown = tui_agent(tmp_path, "sessions", "show", "abcdef12", "--json")
    assert json.loads(shown.stdout)["summary"]["session_id"] == "abcdef123456"


def test_an_id_that_several_sessions_start_with_is_ambiguous(tmp_path: Path) -> None:
    async def record(*ids: str) -> None:  # recorded here (ids can meet by chance, or be old)
        async with await Store.open(tmp_path / "sessions.db") as store:
            for session_id in ids:
                started = SessionStarted(kind="exec", title="t", session_id=session_id, seq=1)
                await store.append(started)

    asyncio.run(record("0123456789ab", "01234567ffff", "7777", "777712345678"))

    for typed, ids in [("01234567", "0123456789ab, 01234567ffff"), ("7777", "7777, 777712345678")]:
        for command in (("sessions", "show", typed), ("replay", typed)):
            assert refused(tui_agent(tmp_path, *command)) == (
                f"tui-agent: session id {typed!r} is ambiguous: several sessions' ids start "
                f"with it ({ids}); give more characters"
            )


def thought_session(path: Path, session_id: str, megabytes: int) -> Path:
    """A CodeAct session streaming one long thought in pieces, then a huge log line."""
    piece = "thinking about the listing " * 6
    with path.open("w", encoding="utf-8") as f:
        started = SessionStarted(kind="code", title="a long thought")
        f.write(session_lines(session_id, [started])[0] + "\n")
        seq = 1
        while f.tell() < megabytes * 1_000_000:
            seq += 1
            f.write(
                f'{{"type":"thought_delta","session_id":"{session_id}","seq":{seq},'
                f'"ts":{1000 + seq * 1e-3},"step":1,"text":"{piece}"}}\n'
            )
        for event in (Log(message="x" * 2_000_000), SessionEnded(status="completed")):
            seq += 1
            stamped = event.model_copy(update={"session_id": session_id, "seq": seq, "ts": 2e3})
            f.write(dump_event(stamped) + "\n")
    return path


def test_a_big_import_is_refused_or_imported_and_replays_in_bounded_time(tmp_path: Path) -> None:
    from tui_agent.tui.app import TuiAgentApp
    from tui_agent.tui.messages import ReplayMoved
    from tui_agent.tui.screens.replay import ReplayScreen

    big = thought_session(tmp_path / "big.jsonl", "b16b16b16b16", BIG_MB)
    line = refused(tui_agent(tmp_path, "sessions", "import", str(big), timeout=120))
    assert line.startswith(f"tui-agent: {big} holds ")
    assert "sessions import --max-mb N" in line

    session = thought_session(tmp_path / "long.jsonl", "10b610b610b6", 30)
    small_limit = tui_agent(tmp_path, "sessions", "import", "--max-mb", "10", str(session))
    assert "more than the 10 MB" in refused(small_limit)
    result = tui_agent(tmp_path, "sessions", "import", str(session))
    assert result.returncode == 0, result.stderr

    async def replay_to_the_end() -> tuple[int, int]:
        messages: list[Any] = []
        app = TuiAgentApp(tmp_path / "sessions.db", replay_session="10b610b6")
        async with app.run_test(size=(120, 40), message_hook=messages.append) as pilot:
            while not isinstance(app.screen, ReplayScreen):
                await pilot.pause(0.1)
            total = app.screen.replay.total
            await pilot.press("end")
            while not any(isinstance(m, ReplayMoved) and m.position == total for m in messages):
                await pilot.pause(0.1)
            await pilot.pause(0.5)  # the frame after the move is drawn too
            return total, app.screen.state.event_count

    began = time.monotonic()
    total, applied = asyncio.run(asyncio.wait_for(replay_to_the_end(), BOUND))
    assert applied == total > 100_000, time.monotonic() - began
