"""`sessions show --json` as a program reads it: a scrape, a CodeAct session and a refined exec
session, recorded by real `tui-agent` processes (Chromium, the sandbox, the scripted model
through litellm, SQLite), each report validated against `tui-agent sessions schema`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from support.requirements import require_backend, require_chromium
from support.scripted_model import ScriptedModel, text

from tui_agent.demo_site import DemoSite

MODEL = "openai/gpt-4o-mini"
ORDERS_PROGRAM = """\
ORDERS = [
    {"id": 1, "qty": 2, "price": 100.0},
    {"id": 2, "qty": 1, "price": 89.5},
    {"id": 3, "qty": 3, "price": 20.0},
]

def main():
    return [{"id": o["id"], "total": None} for o in ORDERS]
"""
TOTAL_FIXED = ORDERS_PROGRAM.replace('"total": None', '"total": o["qty"] * o["price"]')


def tui_agent(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "tui_agent", "--db", str(db), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={
            **os.environ,
            "TUI_AGENT_CONFIG_FILE": str(db.parent / "none.toml"),
            "TUI_AGENT_WORKSPACE": str(db.parent / "workspace"),
        },
        stdin=subprocess.DEVNULL,
        cwd=db.parent,
    )
    assert done.returncode == 0, (args, done.stderr)
    return done


def only_session(db: Path) -> str:
    [line] = tui_agent(db, "sessions", "list", "--json").stdout.splitlines()
    return json.loads(line)["session_id"]


def validated_report(db: Path, session_id: str, *extra: str) -> dict[str, Any]:
    """The session's JSON report, checked against the schema the CLI prints."""
    schema = json.loads(tui_agent(db, "sessions", "schema").stdout)
    report = json.loads(tui_agent(db, "sessions", "show", session_id, "--json", *extra).stdout)
    jsonschema.validate(report, schema, cls=jsonschema.Draft202012Validator)
    return report


@pytest.mark.chromium
def test_a_scrape_report_counts_probes_dry_run_and_list_apart(tmp_path: Path) -> None:
    require_chromium()
    db = tmp_path / "s.db"
    with DemoSite() as site:
        task = 'Extract 3 items searching for "oak"'
        tui_agent(
            db, "scrape", site.url("filter"), "--task", task, "--planner", "offline", "--headless"
        )
    session_id = only_session(db)

    report = validated_report(db, session_id)

    assert report["search_query"] == "oak" and report["stopped_reason"] == "max_items"
    assert [p["name"] for p in report["phases"]] == ["load", "plan", "generators", "recipe", "list"]
    assert all(p["finished"] and p["ok"] and p["duration"] > 0 for p in report["phases"])
    starts = [p["started_at"] for p in report["phases"]]
    assert starts == sorted(starts) and starts[0] >= report["summary"]["started_at"]
    calls = report["tool_calls"]
    assert calls["plan"]["calls"] > 0 and calls["recipe"]["calls"] > 0
    assert calls["list"]["by_name"]["SAVE"] == 3 == report["item_count"] == len(report["items"])
    assert all("oak" in item["title"].lower() for item in report["items"])
    assert report["recipe"]["bindings"]["LIST_ITEM"]
    assert {a["name"] for a in report["artifacts"]} >= {"strategy", "recipe"}
    assert report["strategy"] and report["analysis"]["item_count"] == 3
    assert report["summary"]["item_count"] == 3

    first = validated_report(db, session_id, "--items", "1")
    assert (first["item_count"], len(first["items"])) == (3, 1)

    shown = tui_agent(db, "sessions", "show", session_id).stdout
    assert "search    oak" in shown
    listed = calls["list"]["calls"]
    assert f"list {listed}" in shown and f"plan {calls['plan']['calls']}" in shown


def test_a_codeact_report_has_its_steps_and_model_calls(tmp_path: Path) -> None:
    backend = "bubblewrap"
    require_backend(backend)
    turns = [
        text("I add them.\n\n```python\nprint(2 + 3)\n```"),
        text('{"thought": "It printed 5.", "action": "provide_answer", "final_answer": "5"}'),
    ]
    db = tmp_path / "s.db"
    with ScriptedModel(turns) as server:
        tui_agent(
            db,
            "code",
            "What is 2 + 3?",
            "--model",
            MODEL,
            "--api-base",
            server.api_base,
            "--sandbox",
            backend,
            "--workspace",
            str(tmp_path / "ws"),
            "--reply-format",
            "json",
            "--json",
        )

    report = validated_report(db, only_session(db))

    assert report["final_answer"] == "5" and report["stopped_reason"] is None
    assert [(s["index"], s["code"], s["model_calls"]) for s in report["steps"]] == [
        (1, "print(2 + 3)", 1),
        (2, None, 1),
    ]
    assert report["model_calls"] == {"total": 2, "by_step": {"1": 1, "2": 1}}
    repairs = [line["message"] for line in report["logs"]]
    assert "step 1: reply read as: took the Python code block as the code (no JSON action)" in (
        repairs
    )
    assert [line["text"] for line in report["steps"][0]["execution"]["logs"]] == ["5"]
    assert report["summary"]["status"] == "completed" and report["items"] == []


def test_a_refined_exec_report_has_the_versions_the_decision_and_the_feedback(
    tmp_path: Path,
) -> None:
    backend = "bubblewrap"
    require_backend(backend)
    program = tmp_path / "orders.py"
    program.write_text(ORDERS_PROGRAM)
    db = tmp_path / "s.db"
    sandbox = ("--sandbox", backend)
    tui_agent(db, "exec", str(program), *sandbox, "--agent-type", "transformer", "--json")
    session_id = only_session(db)
    unusable = text("The total should be qty times price.")
    fixed = text(f"Here is the improved transformer:\n```python\n{TOTAL_FIXED}```")
    with ScriptedModel([unusable, fixed]) as server:
        tui_agent(
            db,
            "refine",
            session_id,
            "--field",
            "total",
            "--issue",
            "missing",
            "--expression",
            "qty * price",
            "--model",
            MODEL,
            "--api-base",
            server.api_base,
            *sandbox,
            "--accept",
            "--json",
        )

    report = validated_report(db, session_id)

    assert [item["total"] for item in report["items"]] == [200.0, 89.5, 60.0]
    versions = [(a["name"], a["version"], a["candidate"], a["in_use"]) for a in report["artifacts"]]
    assert versions == [("code", 1, False, False), ("code", 2, True, True)]
    assert report["artifacts"][1]["content"] == TOTAL_FIXED.rstrip()
    assert report["decisions"] == [{"name": "code", "version": 2, "accepted": True, "reason": ""}]
    assert [(f["field"], f["issue"]) for f in report["feedback"]] == [("total", "missing")]
    assert report["agent_type"] == "transformer" and report["errors"] == []
    # the attempt's reply was re-asked once: two model calls on its step (3: the accepted re-run)
    assert report["model_calls"] == {"total": 2, "by_step": {"2": 2}}
    assert [(s["index"], s["model_calls"]) for s in report["steps"]] == [(1, 0), (2, 2), (3, 0)]
    outcome = report["refinement"][-1]
    assert (outcome["fixed"], outcome["unverified"], outcome["remaining"]) == (["total"], [], [])
    assert outcome["message"] == "Fixed 1 field"
    assert any("(2 model calls)" in p["message"] for p in report["refinement"])
    assert any(
        line["level"] == "warning" and "could not be used" in line["message"]
        for line in report["logs"]
    )


def test_the_schema_refuses_a_report_with_a_part_missing_or_unknown(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    schema = json.loads(tui_agent(db, "sessions", "schema").stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert {"items", "tool_calls", "phases", "recipe", "stopped_reason"} <= set(schema["required"])
    with pytest.raises(jsonschema.ValidationError, match="is a required property"):
        jsonschema.validate({}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"surprise": 1}, schema)
