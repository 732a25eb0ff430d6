"""`tui-agent code --continue ID` and `--fork ID --at STEP` as a user runs them: real processes
(one killed with SIGKILL between turns), the scripted model server, a real sandbox, SQLite."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

from support.requirements import sandbox_backend
from support.scripted_model import ScriptedModel
from support.scripted_model import action_reply as reply
from test_code_cli import MODEL, environment, one_line, tui_agent

HOLDER = Path(__file__).with_name("conversation_process.py")
TASK = "Set x to 41 and write notes.txt"
FIRST_TURN = [
    reply("Setting up.", "execute_code", code="x = 41\nopen('notes.txt', 'w').write('kept')"),
    reply("Done.", "provide_answer", final_answer="x is 41."),
]


def session_args(server: ScriptedModel, tmp_path: Path, *extra: str) -> list[str]:
    return [
        "--model",
        MODEL,
        "--api-base",
        server.api_base,
        "--sandbox",
        sandbox_backend(),
        *extra,
    ]


def events_of(tmp_path: Path, session_id: str) -> list[dict]:
    """The session's events as stored (read from the SQLite file directly)."""
    with sqlite3.connect(tmp_path / "s.db") as conn:
        rows = conn.execute(
            "SELECT json FROM events WHERE session_id = ? ORDER BY seq", (session_id,)
        ).fetchall()
    return [json.loads(row[0]) for row in rows]


def start_headless(server: ScriptedModel, tmp_path: Path) -> str:
    server.push(*FIRST_TURN)
    done = tui_agent(
        tmp_path,
        "code",
        TASK,
        *session_args(server, tmp_path, "--workspace", str(tmp_path / "ws")),
        "--json",
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[0])["session_id"]


def test_continue_restores_the_state_and_appends_to_the_session(server, tmp_path):
    session_id = start_headless(server, tmp_path)
    before = events_of(tmp_path, session_id)
    server.push(
        reply("x is still there.", "execute_code", code="print(x + 1, open('notes.txt').read())"),
        reply("Done.", "provide_answer", final_answer="42 kept"),
    )
    went_on = tui_agent(
        tmp_path,
        "code",
        "--continue",
        session_id[:6],
        "What is x + 1, and the notes?",
        *session_args(server, tmp_path),
        "--headless",
    )

    assert went_on.returncode == 0, went_on.stdout + went_on.stderr
    assert "restoring the state by running 1 run again" in went_on.stdout
    assert "state restored: 1 of 1 runs" in went_on.stdout
    assert "42 kept" in went_on.stdout
    after = events_of(tmp_path, session_id)
    assert after[: len(before)] == before  # nothing recorded changes
    kinds = [e["type"] for e in after[len(before) :]]
    assert kinds[:3] == ["session_resumed", "state_restore_run", "state_restored"]
    [said] = [e for e in after if e["type"] == "user_message"]
    assert (said["turn"], said["text"]) == (2, "What is x + 1, and the notes?")
    assert kinds[-1] == "session_ended"
    shown = json.loads(tui_agent(tmp_path, "sessions", "show", session_id, "--json").stdout)
    assert shown["messages"] == [
        {"turn": 2, "text": "What is x + 1, and the notes?", "queued": False}
    ]
    assert [t["status"] for t in shown["turns"]] == []  # one turn each process: no waits
    assert list(shown["models"]) == [MODEL] and shown["models"][MODEL]["calls"] == 4
    # exported and imported elsewhere, the conversation is the same, byte for byte
    exported = tmp_path / "conversation.jsonl"
    assert (
        tui_agent(tmp_path, "sessions", "export", session_id, "-o", str(exported)).returncode == 0
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert tui_agent(elsewhere, "sessions", "import", str(exported)).returncode == 0
    again = tmp_path / "again.jsonl"
    assert tui_agent(elsewhere, "sessions", "export", session_id, "-o", str(again)).returncode == 0
    assert again.read_bytes() == exported.read_bytes()
    assert '"type":"user_message"' in exported.read_text()
    # an imported session is someone else's: continuing it is refused, rerun is the way
    refused = one_line(
        tui_agent(
            elsewhere,
            "code",
            "--continue",
            session_id,
            "go on",
            *session_args(server, tmp_path),
            "--headless",
        )
    )
    assert "imported from a file" in refused


def test_a_session_killed_between_turns_is_continued_in_a_new_process(server, tmp_path):
    server.push(*FIRST_TURN)
    holder = subprocess.Popen(
        [
            sys.executable,
            str(HOLDER),
            str(tmp_path / "s.db"),
            server.api_base,
            MODEL,
            sandbox_backend(),
            str(tmp_path / "ws"),
            TASK,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(tmp_path),
    )
    try:
        assert holder.stdout is not None
        session_id = holder.stdout.readline().split()[-1]
        assert holder.stdout.readline().strip() == "WAITING", holder.stderr and holder.stderr.read()
        listed = tui_agent(tmp_path, "sessions", "list", "--json").stdout
        assert json.loads(listed)["status"] == "waiting"
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)

    server.push(
        reply("Still here.", "execute_code", code="print(x * 2)"),
        reply("Done.", "provide_answer", final_answer="82"),
    )
    went_on = tui_agent(
        tmp_path,
        "code",
        "--continue",
        session_id,
        "And twice x?",
        *session_args(server, tmp_path),
        "--json",
    )

    assert went_on.returncode == 0, went_on.stderr
    printed = [json.loads(line) for line in went_on.stdout.splitlines()]
    ends = [e for e in events_of(tmp_path, session_id) if e["type"] == "session_ended"]
    assert [e["status"] for e in ends] == ["interrupted", "completed"]
    [restored] = [e for e in printed if e["type"] == "state_restored"]
    assert (restored["ran"], restored["total"], restored["failed"]) == (1, 1, [])
    outputs = [e for e in printed if e["type"] == "execution_finished"]
    assert [line["text"] for line in outputs[-1]["logs"]] == ["82"]


def test_a_fork_is_a_new_session_linked_to_its_parent(server, tmp_path):
    session_id = start_headless(server, tmp_path)
    server.push(
        reply("Another path.", "execute_code", code="print(x - 1)"),
        reply("Done.", "provide_answer", final_answer="40"),
    )
    forked = tui_agent(
        tmp_path,
        "code",
        "--fork",
        session_id,
        "--at",
        "1",
        "What is x - 1?",
        *session_args(server, tmp_path),
        "--headless",
    )

    assert forked.returncode == 0, forked.stdout + forked.stderr
    assert f"fork of {session_id} at step 1" in forked.stdout
    listing = "".join(tui_agent(tmp_path, "sessions", "list").stdout.split())  # wrapped cells
    assert f"(forkof{session_id}@1)" in listing
    rows = [
        json.loads(line)
        for line in tui_agent(tmp_path, "sessions", "list", "--json").stdout.splitlines()
    ]
    [fork] = [row for row in rows if row["parent"]]
    assert fork["parent"] == f"{session_id}@1" and fork["status"] == "completed"


def test_continuing_wrongly_is_one_line(server, tmp_path):
    session_id = start_headless(server, tmp_path)
    base = session_args(server, tmp_path)
    cases = [
        (["--continue", session_id, *base, "--headless"], "say what comes next"),
        (["--fork", session_id, "x", *base, "--headless"], "--fork needs --at STEP"),
        (["x", "--at", "1", *base, "--headless"], "--at is the step of a fork"),
        (["--fork", session_id, "--at", "9", "x", *base, "--headless"], "there is no step 9"),
        (["--continue", "ffffffffff", "x", *base, "--headless"], "ffffffffff"),
    ]
    for args, said in cases:
        line = one_line(tui_agent(tmp_path, "code", *args))
        assert line.startswith("tui-agent: ") and said in line, line
