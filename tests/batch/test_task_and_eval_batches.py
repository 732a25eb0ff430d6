"""Task and eval batches as a user runs them: a real `tui-agent batch` process, the scripted
model through litellm, a real sandbox, real SQLite. A task batch generates its code once per
context shape; an eval batch judges each task's code with the task's own check."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.requirements import sandbox_backend
from support.scripted_model import ScriptedModel, text

from tui_agent.store import Store

MODEL = "openai/gpt-4o-mini"
DISCOUNT = "Calculate discount (10% if total > 1000)"
CODE = (
    "```python\n# STAGE: TASK\ntotal = context['total']\n"
    "context['discount'] = total * 0.10 if total > 1000 else 0.0\n```"
)
VALID = json.dumps({"valid": True, "reason": "10% of the total over 1000"})
DROPPED = ("TUI_AGENT_MODEL", "TUI_AGENT_API_BASE", "TUI_AGENT_SANDBOX", "TUI_AGENT_DB")


def tui_agent(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in DROPPED}
    env["TUI_AGENT_CONFIG_FILE"] = str(tmp_path / "none.toml")
    env["COLUMNS"] = "160"
    return subprocess.run(
        [sys.executable, "-m", "tui_agent", "--db", str(tmp_path / "s.db"), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
    )


def sessions(tmp_path: Path) -> list[dict[str, Any]]:
    listed = tui_agent(tmp_path, "sessions", "list", "--json")
    return [json.loads(line) for line in listed.stdout.splitlines()]


def show(tmp_path: Path, session_id: str) -> dict[str, Any]:
    shown = tui_agent(tmp_path, "sessions", "show", session_id, "--json")
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)


async def task_outputs(db: Path, ids: list[str]) -> dict[int, float]:
    """Each task session's total -> the discount its code computed."""
    async with await Store.open(db) as store:
        states = [await store.state(session_id) for session_id in ids]
    return {
        state.task_results[-1].context["total"]: state.task_results[-1].context["discount"]
        for state in states
    }


@pytest.fixture
def backend() -> str:
    return sandbox_backend()


def test_a_50_row_task_batch_generates_its_code_once(
    tmp_path: Path, server: ScriptedModel, backend: str
):
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps({"total": 400 + 40 * i}) + "\n" for i in range(50)))
    server.push(text(CODE), text(VALID))
    done = tui_agent(
        tmp_path,
        "batch",
        "task",
        DISCOUNT,
        "--rows",
        str(rows),
        "--model",
        MODEL,
        "--api-base",
        server.api_base,
        "--sandbox",
        backend,
        "--engine",
        "local:4",
    )
    assert done.returncode == 0, done.stderr + done.stdout
    generations = [r for r in server.requests if "STAGE" in json.dumps(r.messages[0])]
    assert len(generations) == 1, f"{len(server.requests)} model calls"
    assert len(server.requests) == 2  # the one generation and its output check
    found = sessions(tmp_path)
    [batch] = [s for s in found if s["kind"] == "batch"]
    children = [s for s in found if s["batch"] == batch["session_id"]]
    assert len(children) == 50 and all(s["status"] == "completed" for s in children)
    report = show(tmp_path, batch["session_id"])
    items = report["batch_items"]
    assert [i["state"] for i in items] == ["finished"] * 50
    assert {i["session_id"] for i in items} == {s["session_id"] for s in children}
    discounts = asyncio.run(task_outputs(tmp_path / "s.db", [i["session_id"] for i in items]))
    assert discounts == {t: (t * 0.10 if t > 1000 else 0.0) for t in discounts}
    assert len(discounts) == 50
    listed = tui_agent(tmp_path, "cache", "list", "--json")
    [entry] = [json.loads(line) for line in listed.stdout.splitlines()]
    assert entry["task"] == DISCOUNT  # the batch's code is the driver's cache entry now
    assert entry["hits"] == 49  # every other row ran it


def test_rows_of_two_shapes_generate_code_twice(
    tmp_path: Path, server: ScriptedModel, backend: str
):
    rows = tmp_path / "rows.csv"
    rows.write_text("total\n1500\n200\n2500\n")
    other = tmp_path / "more.jsonl"
    other.write_text('{"total": 1500.5}\n{"total": 99.5}\n')
    server.push(text(CODE), text(VALID), text(CODE), text(VALID))
    common = ["--model", MODEL, "--api-base", server.api_base, "--sandbox", backend]
    first = tui_agent(tmp_path, "batch", "task", DISCOUNT, "--rows", str(rows), *common)
    assert first.returncode == 0, first.stderr + first.stdout
    assert len(server.requests) == 2  # ints: generated once
    second = tui_agent(tmp_path, "batch", "task", DISCOUNT, "--rows", str(other), *common)
    assert second.returncode == 0, second.stderr + second.stdout
    assert len(server.requests) == 4  # floats are another shape: generated once more


HUMANEVAL = [
    {
        "task_id": "HumanEval/0",
        "prompt": 'def add(a: int, b: int) -> int:\n    """Add two numbers."""\n',
        "entry_point": "add",
        "test": "def check(candidate):\n    assert candidate(2, 3) == 5\n"
        "    assert candidate(-1, 1) == 0\n",
    },
    {
        "task_id": "HumanEval/1",
        "prompt": "from typing import List\n\n\ndef evens(xs: List[int]) -> List[int]:\n"
        '    """The even numbers of xs."""\n',
        "entry_point": "evens",
        "test": "def check(candidate):\n    assert candidate([1, 2, 4]) == [2, 4]\n",
    },
]
OWN = {"id": "squares", "task": "Define squares(n): the first n squares", "check": ""}
OWN["check"] = "assert squares(3) == [0, 1, 4]"


def step(code: str) -> Any:
    return text(f"Thought: write it and try it.\n```python\n{code}\n```")


def test_an_eval_batch_reports_each_task_and_two_compare(
    tmp_path: Path, server: ScriptedModel, backend: str
):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(t) + "\n" for t in [*HUMANEVAL, OWN]))
    right = [
        step("def add(a, b):\n    return a + b\n\nprint(add(2, 3))"),
        text("Final answer: add returns a + b"),
        step("def evens(xs):\n    return [x for x in xs if x % 2 == 0]\n\nprint(evens([1, 2]))"),
        text("Final answer: done"),
        step("def squares(n):\n    return [i * i for i in range(n)]\n\nprint(squares(3))"),
        text("Final answer: done"),
    ]
    wrong = [*right[:2], step("def evens(xs):\n    return xs\n\nprint(evens([1]))"), *right[3:]]
    common = ["--api-base", server.api_base, "--sandbox", backend, "--max-in-flight", "1"]
    ids = []
    for model, replies in (("openai/right", right), ("openai/wrong", wrong)):
        server.push(*replies)
        done = tui_agent(tmp_path, "batch", "eval", str(tasks), "--model", model, *common)
        ids.append(next(s["session_id"] for s in sessions(tmp_path) if s["kind"] == "batch"))
        if model == "openai/right":
            assert done.returncode == 0, done.stderr + done.stdout
            assert "3/3 passed (100%) with openai/right" in done.stdout
        else:
            assert done.returncode == 0, done.stderr  # every session completed; one failed
            assert "2/3 passed" in done.stdout
            assert "check failed: AssertionError" in done.stdout
    report = tui_agent(tmp_path, "batch", "report", ids[0], "--json")
    rows = [json.loads(line) for line in report.stdout.splitlines()]
    assert [r["label"] for r in rows] == ["HumanEval/0", "HumanEval/1", "squares"]
    assert all(r["passed"] and r["steps"] == 2 and r["tokens"] > 0 for r in rows)
    compared = tui_agent(tmp_path, "batch", "compare", ids[1], ids[0])
    assert compared.returncode == 0, compared.stderr
    assert "openai/right: 3/3 passed, 6 steps, " in compared.stdout
    assert "openai/wrong: 2/3 passed, 6 steps, " in compared.stdout
    assert re.search(r"HumanEval/1\s+FAIL\s+2\s+\d+\s+—", compared.stdout)  # no known price
    shown = tui_agent(tmp_path, "sessions", "show", ids[1])
    assert "3 of 3 done, 0 errored; 2 of 3 passed their check" in shown.stdout


@pytest.mark.parametrize(
    ("lines", "said"),
    [
        (
            '{"task_id": "x", "prompt": "def f():\\n", "test": "def check(c): pass"}',
            "line 1: a HumanEval task needs `entry_point` with its `test`",
        ),
        ("not json", "line 1: not JSON"),
        ('{"task": "do it"}', "needs `check`"),
        ("", "holds no items"),
    ],
)
def test_a_bad_task_file_is_one_line_and_records_nothing(tmp_path: Path, lines: str, said: str):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(lines + "\n")
    done = tui_agent(tmp_path, "batch", "eval", str(tasks), "--model", MODEL)
    assert done.returncode == 1
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("tui-agent: ") and said in line
    assert sessions(tmp_path) == []
