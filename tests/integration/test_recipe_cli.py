"""`tui-agent recipe` end to end: real Chromium, the demo site, real SQLite, real processes."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from support.requirements import require_chromium

from tui_agent.demo_site import DemoSite

RECIPES = Path(__file__).resolve().parents[2] / "recipes"


def command(tmp_path: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "tui_agent", "--db", str(tmp_path / "s.db"), *args]


def environment(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "TUI_AGENT_CONFIG_FILE": str(tmp_path / "none.toml")}


def tui_agent(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command(tmp_path, *args),
        capture_output=True,
        text=True,
        timeout=300,
        env=environment(tmp_path),
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
    )


def stored(tmp_path: Path) -> list[dict]:
    listing = tui_agent(tmp_path, "sessions", "list", "--json")
    return [json.loads(line) for line in listing.stdout.splitlines()]


@pytest.fixture(scope="module")
def demo():
    with DemoSite() as site:
        yield site


def test_schema_is_printed_as_json(tmp_path):
    result = tui_agent(tmp_path, "recipe", "schema")
    assert result.returncode == 0, result.stderr
    schema = json.loads(result.stdout)
    assert schema["title"] == "tui-agent recipe"
    assert {"bindings", "recipe"} <= set(schema["properties"])


@pytest.mark.chromium
def test_a_run_is_recorded_item_by_item_and_reported(tmp_path, demo):
    require_chromium()
    url = demo.url("pagination")
    result = tui_agent(
        tmp_path,
        "recipe",
        "run",
        str(RECIPES / "demo-pagination.json"),
        "--url",
        url,
        "--max-items",
        "30",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    started, ended = events[0], events[-1]
    assert (started["kind"], started["agent_type"]) == ("scrape", "scraper")
    assert started["test_context"]["url"] == url
    assert started["test_context"]["recipe"]["recipe"]["id"] == "demo-pagination"
    assert started["params"]["max_items"] == 30
    batches = [e["items"] for e in events if e["type"] == "items_extracted"]
    assert [len(batch) for batch in batches] == [1] * 30
    truth = demo.ground_truth("pagination")[:30]
    assert [batch[0]["title"] for batch in batches] == [r["title"] for r in truth]
    phases = [(e["type"], e["phase"]) for e in events if e["type"].startswith("phase_")]
    assert phases == [
        ("phase_started", "load"),
        ("phase_finished", "load"),
        ("phase_started", "list"),
        ("phase_finished", "list"),
    ]
    calls = [e["name"] for e in events if e["type"] == "tool_call"]
    assert calls.count("CLICK_IF_EXISTS") == 1  # page 2 holds items 25..48
    loops = [
        e for e in events if e["type"] == "tool_result" and e["name"] == "FOR_EACH_ITEM_IN_LIST"
    ]
    # the last page's loop counts the whole run, not its own 6 items
    assert loops[-1]["output"].startswith("30 items processed: 30 saved, 0 failed")
    assert events[-2]["type"] == "output_analyzed"
    assert (ended["status"], ended["stopped_reason"]) == ("completed", "max_items")
    [summary] = stored(tmp_path)
    assert (summary["kind"], summary["item_count"], summary["status"]) == (
        "scrape",
        30,
        "completed",
    )

    report = tui_agent(tmp_path, "sessions", "show", summary["session_id"])
    assert report.returncode == 0, report.stderr
    text = report.stdout
    assert "Session report" in text and url in text
    assert "stopped   max_items" in text
    assert "items     30 extracted (max 30)" in text
    assert re.search(rf"commands  list {len(calls)} *\n", text)  # all in the list, none failed
    assert "CLICK_IF_EXISTS" in text and "Classic Oak Kettle" in text
    assert "NEXT_PAGE_BUTTON" in text and "a.page-next" in text


def browser_process(parent: int) -> int | None:
    """The main Chromium process started under `parent` (its children are Chromium too)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int(
                    (entry / "stat").read_text().rsplit(")", 1)[1].split()[1]
                )
            except (OSError, IndexError, ValueError):
                continue

    def is_chromium(pid: int) -> bool:
        try:
            return "chrom" in os.readlink(f"/proc/{pid}/exe")
        except OSError:
            return False

    def under(pid: int) -> bool:
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == parent:
                return True
        return False

    found = [p for p in parents if under(p) and is_chromium(p) and not is_chromium(parents[p])]
    return found[0] if found else None


@pytest.mark.chromium
def test_chromium_killed_mid_run_ends_with_an_error_and_keeps_the_items(tmp_path, demo):
    require_chromium()
    process = subprocess.Popen(
        command(
            tmp_path,
            "recipe",
            "run",
            str(RECIPES / "demo-panel.json"),
            "--url",
            demo.url("panel"),
            "--json",
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(tmp_path),
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
    )
    events, items, killed = [], 0, None
    assert process.stdout is not None
    for line in process.stdout:
        events.append(json.loads(line))
        if events[-1]["type"] == "items_extracted":
            items += 1
            if items == 5:
                killed = browser_process(process.pid)
                assert killed is not None
                os.kill(killed, signal.SIGKILL)
    process.wait(timeout=60)
    assert process.returncode == 1
    ended, error = events[-1], next(e for e in events if e["type"] == "error")
    assert (ended["status"], ended["stopped_reason"]) == ("failed", "error")
    assert error["message"].startswith("Chromium exited while the recipe ran")
    saved = sum(len(e["items"]) for e in events if e["type"] == "items_extracted")
    assert saved >= 5
    [summary] = stored(tmp_path)
    assert (summary["status"], summary["item_count"]) == ("failed", saved)
    assert summary["event_count"] == len(events)


@pytest.mark.chromium
def test_a_run_killed_midway_keeps_every_item_it_printed(tmp_path, demo):
    require_chromium()
    argv = ["recipe", "run", str(RECIPES / "demo-panel.json"), "--url", demo.url("panel")]
    process = subprocess.Popen(
        command(tmp_path, *argv, "--json"),
        stdout=subprocess.PIPE,
        text=True,
        env=environment(tmp_path),
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
    )
    assert process.stdout is not None
    seen = 0
    for line in process.stdout:
        if json.loads(line)["type"] == "items_extracted":
            seen += 1
            if seen == 4:
                process.kill()
                break
    process.wait(timeout=60)
    # Events are printed after they are stored, so every item printed is in the database;
    # the listing, finding the run's process gone, ended the session as interrupted.
    [summary] = stored(tmp_path)
    assert summary["status"] == "interrupted" and summary["item_count"] >= seen


@pytest.mark.chromium
def test_a_list_that_is_not_there_fails_in_one_line_naming_the_selector(tmp_path, demo):
    require_chromium()
    recipe = json.loads((RECIPES / "demo-panel.json").read_text())
    recipe["bindings"]["LIST_ITEM"] = "li.product"
    recipe["bindings"]["LIST_LOADED"] = {"exists": "li.product"}
    recipe["recipe"]["commands"][1]["timeout"] = 300
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(recipe))
    result = tui_agent(
        tmp_path, "recipe", "run", str(path), "--url", demo.url("panel"), "--headless"
    )
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("tui-agent: session failed: LIST_LOADED (exists li.product) did not")
    assert 'LIST_ITEM "li.product"' in line and '"ul.product-list > li.card"' in line
    [summary] = stored(tmp_path)
    assert (summary["status"], summary["stopped_reason"]) == ("failed", "error")


def test_an_invalid_recipe_lists_each_error_with_its_path_and_records_nothing(tmp_path):
    bad = {
        "bindings": {"LIST_ITEM": "", "CLICK_BEHAVIOR": "hover"},
        "recipe": {"id": "x", "name": "x", "commands": [{"type": "CLIK"}]},
    }
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    result = tui_agent(tmp_path, "recipe", "run", str(path), "--url", "http://127.0.0.1:9/")
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert lines[0] == f"tui-agent: {path} is not a valid recipe (3 errors):"
    assert [line.split(":")[0].strip() for line in lines[1:]] == [
        "bindings.LIST_ITEM",
        "bindings.CLICK_BEHAVIOR",
        "recipe.commands[0]",
    ]
    assert stored(tmp_path) == []


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize(
    ("url", "extra", "expected"),
    [
        ("http://127.0.0.1:{port}/panel", [], "cannot reach http://127.0.0.1:{port}/panel: "),
        ("not a url", [], "not a loadable URL: 'not a url'"),
        ("http://127.0.0.1:{port}/", ["--max-items", "0"], "--max-items must be at least 1"),
    ],
)
def test_bad_input_is_one_line_and_records_nothing(tmp_path, url, extra, expected):
    port = closed_port()
    url, expected = url.format(port=port), expected.format(port=port)
    recipe = str(RECIPES / "demo-panel.json")
    result = tui_agent(tmp_path, "recipe", "run", recipe, "--url", url, *extra, "--headless")
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"tui-agent: {expected}")
    assert result.stdout == ""
    assert stored(tmp_path) == []
