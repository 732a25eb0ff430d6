"""`tui-agent code` as a user runs it: a real process, the scripted model server reached through
litellm, a real sandbox (docker, else bubblewrap; docker required under CI), real SQLite."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.requirements import sandbox_backend
from support.scripted_model import ScriptedModel, text

TASK = (
    "Calculate compound interest at 15k premium, 6% interest compounded semi annually for 6 years"
)
MODEL = "openai/gpt-4o-mini"
TURNS = [
    {
        "thought": "I need to use the compound interest formula A = P(1 + r/n)^(nt)...",
        "action": "execute_code",
        "code": "principal = 15000\nrate = 0.06\nprint(principal * (1 + rate / n) ** (n * t))",
    },
    {
        "thought": "I got an error because I didn't define all variables. Let me fix this...",
        "action": "debug_error",
        "code": "n = 2\nt = 6\nfinal_amount = principal * (1 + rate / n) ** (n * t)\n"
        "print(f'Final Amount: ${final_amount:,.2f}')",
    },
    {
        "thought": "Perfect! The calculation executed successfully.",
        "action": "provide_answer",
        "final_answer": "The final amount is $21,386.41.",
    },
]


@dataclass(frozen=True)
class Answer:
    """What to type once `prompt` has appeared `occurrence` times on the terminal."""

    prompt: str
    occurrence: int
    typed: str


ENV_SETTINGS = ("TUI_AGENT_MODEL", "TUI_AGENT_API_BASE", "TUI_AGENT_SANDBOX", "TUI_AGENT_DB")


def environment(tmp_path: Path, drop: tuple[str, ...] = ()) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ENV_SETTINGS + drop}
    env["TUI_AGENT_CONFIG_FILE"] = str(tmp_path / "none.toml")
    env["COLUMNS"] = "100"
    return env


def command(tmp_path: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "tui_agent", "--db", str(tmp_path / "s.db"), *args]


def tui_agent(
    tmp_path: Path, *args: str, drop: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command(tmp_path, *args),
        capture_output=True,
        text=True,
        timeout=180,
        env=environment(tmp_path, drop),
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
    )


def code_args(server: ScriptedModel, tmp_path: Path, *extra: str) -> list[str]:
    return [
        "code",
        TASK,
        "--model",
        MODEL,
        "--api-base",
        server.api_base,
        "--sandbox",
        sandbox_backend(),
        "--workspace",
        str(tmp_path / "ws"),
        *extra,
    ]


def stored(tmp_path: Path) -> list[dict]:
    listing = tui_agent(tmp_path, "sessions", "list", "--json")
    return [json.loads(line) for line in listing.stdout.splitlines()]


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1, result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


@pytest.fixture
def server() -> Iterator[ScriptedModel]:
    with ScriptedModel([text(json.dumps(turn)) for turn in TURNS]) as scripted:
        yield scripted


def test_headless_prints_the_spec_style(server, tmp_path):
    result = tui_agent(tmp_path, *code_args(server, tmp_path, "--headless"))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    marks = [
        "🤖 Thinking: I need to use the compound interest formula",
        "💻 Executing Code:",
        "❌ Execution Failed:",
        "NameError: name 'n' is not defined",
        "🤖 Thinking: I got an error",
        "💻 Executing Code:",
        "✅ Execution Result:",
        "Final Amount: $21,386.41",
        "🤖 Thinking: Perfect!",
        "🎯 Final Answer",
        "The final amount is $21,386.41.",
        "■ completed",
    ]
    position = 0
    for mark in marks:
        found = out.find(mark, position)
        assert found >= 0, f"{mark!r} missing (in order) from:\n{out}"
        position = found + len(mark)
    [summary] = stored(tmp_path)
    assert summary["kind"] == "code" and summary["status"] == "completed"
    assert summary["step_count"] == 3 and summary["model"] == MODEL
    assert summary["cost"] > 0 and summary["prompt_tokens"] > 0


def test_without_a_terminal_the_tui_gives_way_to_the_printer(server, tmp_path):
    result = tui_agent(tmp_path, *code_args(server, tmp_path))
    assert result.returncode == 0, result.stderr
    assert "no terminal here: printing the session (--headless)" in result.stderr
    assert "🎯 Final Answer" in result.stdout
    [summary] = stored(tmp_path)
    assert summary["status"] == "completed"


def test_json_prints_the_stored_events(server, tmp_path):
    result = tui_agent(tmp_path, *code_args(server, tmp_path, "--json", "--max-steps", "2"))
    assert result.returncode == 1, result.stderr  # two steps are not enough for an answer
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert events[0]["type"] == "session_started" and events[0]["params"]["max_steps"] == 2
    assert events[-1] == {**events[-1], "status": "stopped", "stopped_reason": "max_steps"}
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    session_id = events[0]["session_id"]
    export = tmp_path / "export.jsonl"
    exported = tui_agent(tmp_path, "sessions", "export", session_id, "-o", str(export))
    assert exported.returncode == 0, exported.stderr
    assert [json.loads(line) for line in export.read_text().splitlines()] == events


def test_missing_api_key_is_one_line_and_records_nothing(tmp_path):
    result = tui_agent(
        tmp_path,
        "code",
        TASK,
        "--model",
        "anthropic/claude-3-5-sonnet-20240620",
        "--headless",
        drop=("ANTHROPIC_API_KEY",),
    )
    assert one_line(result) == (
        "tui-agent: ANTHROPIC_API_KEY is not set "
        "(model anthropic/claude-3-5-sonnet-20240620 needs it)"
    )
    assert stored(tmp_path) == []


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ([], "tui-agent: no model: pass --model or set TUI_AGENT_MODEL"),
        (
            ["--model", "openai/scripted", "--api-base", "http://127.0.0.1:9/v1", "--budget", "1"],
            "litellm has none for openai/scripted",
        ),
        (["--model", MODEL, "--max-steps", "0"], "tui-agent: --max-steps must be at least 1"),
        (["--model", MODEL, "--budget", "-1"], "tui-agent: --budget must be a positive amount"),
        (
            ["--model", MODEL, "--api-base", "http://127.0.0.1:9/v1", "--approve"],
            "so each run must be approved, but stdin is not a terminal",
        ),
        (
            ["--model", MODEL, "--api-base", "http://127.0.0.1:9/v1", "--sandbox", "local"],
            "tui-agent: the local sandbox is not isolated, so each run must be approved",
        ),
    ],
)
def test_bad_input_is_one_line_and_records_nothing(tmp_path, extra, expected):
    result = tui_agent(tmp_path, "code", TASK, *extra, "--headless")
    assert expected in one_line(result)
    assert stored(tmp_path) == []


def test_approval_on_a_terminal_edits_then_skips(tmp_path):
    """--approve asks on the terminal: edit (typed code ending with "."), then skip."""
    turns = [
        {"thought": "Divide.", "action": "execute_code", "code": "print(1 / 0)"},
        {"thought": "Delete.", "action": "execute_code", "code": "print('deleting')"},
        {"thought": "Done.", "action": "provide_answer", "final_answer": "Half is 0.5."},
    ]
    with ScriptedModel([text(json.dumps(turn)) for turn in turns]) as server:
        args = code_args(server, tmp_path, "--approve", "--headless")
        transcript = run_on_terminal(
            command(tmp_path, *args),
            environment(tmp_path, drop=("VISUAL", "EDITOR")),
            answers=[
                Answer("(e)dit", 1, "e"),
                Answer("end with a line holding only", 1, "print(1 / 2)\n."),
                Answer("(e)dit", 2, "s"),
            ],
        )
    assert transcript.count("Run the code of step") == 2, transcript
    [summary] = stored(tmp_path)
    assert summary["status"] == "completed", transcript
    show = tui_agent(tmp_path, "sessions", "show", summary["session_id"], "--json")
    steps = json.loads(show.stdout)["steps"]
    assert steps[0]["code"] == "print(1 / 2)\n"
    assert [line["text"] for line in steps[0]["execution"]["logs"]] == ["0.5"]
    assert steps[1]["code"] == "print('deleting')" and steps[1]["execution"] is None
    told = server.requests[2].messages[-1]["content"]
    assert told.startswith("EXECUTION_RESULT: not run: the user skipped this code.")


def run_on_terminal(argv: list[str], env: dict[str, str], answers: list[Answer]) -> str:
    """Run `argv` on a pseudo-terminal; type each answer once its prompt has appeared."""
    main, secondary = pty.openpty()
    process = subprocess.Popen(
        argv, stdin=secondary, stdout=secondary, stderr=secondary, env=env, close_fds=True
    )
    os.close(secondary)
    output = b""
    pending = list(answers)
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(main, 4096)
                except OSError:  # the process closed the terminal
                    break
                if not chunk:
                    break
                output += chunk
            if pending and output.count(pending[0].prompt.encode()) >= pending[0].occurrence:
                os.write(main, (pending.pop(0).typed + "\n").encode())
            if process.poll() is not None and not ready:
                break
    finally:
        os.close(main)
        process.wait(timeout=30)
    return output.decode("utf-8", "replace")
