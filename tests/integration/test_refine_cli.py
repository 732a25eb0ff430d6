"""`tui-agent refine` and `sessions feedback` end to end: real processes, SQLite and Chromium.

A scrape session of recipes/demo-panel.json with a broken price binding is recorded once by
`tui-agent recipe run`; each test refines its own copy of that database.
"""

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.requirements import require_chromium
from support.sessions import copy_database

from tui_agent.analysis import analyze_output
from tui_agent.demo_site import DemoSite
from tui_agent.events import (
    ItemsExtracted,
    OutputAnalyzed,
    SessionEnded,
    SessionStarted,
    VersionDecided,
)
from tui_agent.recorder import SessionRecorder
from tui_agent.session import SessionState
from tui_agent.store import Store

RECIPES = Path(__file__).resolve().parents[2] / "recipes"
MAX_ITEMS = "5"
FIX_PRICE = ("--field", "price", "--issue", "missing", "--selector", ".field-price")
"""The refine options that give the broken price binding its correct selector."""


def tui_agent(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui_agent", "--db", str(db), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={
            **os.environ,
            "TUI_AGENT_CONFIG_FILE": str(db.parent / "none.toml"),
            "TUI_AGENT_MODEL": "",
            "TUI_AGENT_WORKSPACE": str(db.parent / "workspace"),
        },
        stdin=subprocess.DEVNULL,
        cwd=db.parent,
    )


@pytest.fixture(scope="module")
def demo():
    with DemoSite() as site:
        yield site


@pytest.fixture(scope="module")
def recorded(demo, tmp_path_factory) -> tuple[Path, str]:
    """A database with one recorded run of the broken recipe, and the session's id."""
    require_chromium()
    folder = tmp_path_factory.mktemp("recorded")
    document = json.loads((RECIPES / "demo-panel.json").read_text())
    document["bindings"]["DETAILS_FIELDS"]["price"] = ".nope"
    recipe = folder / "broken.json"
    recipe.write_text(json.dumps(document))
    db = folder / "s.db"
    url = demo.url("panel")
    result = tui_agent(
        db, "recipe", "run", str(recipe), "--url", url, "--max-items", MAX_ITEMS, "--json"
    )
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    [analysis] = [e["analysis"] for e in events if e["type"] == "output_analyzed"]
    assert next(f for f in analysis["fields"] if f["name"] == "price")["coverage"] == 0
    return db, events[0]["session_id"]


def copy_db(recorded: tuple[Path, str], tmp_path: Path) -> tuple[Path, str]:
    db, session_id = recorded
    return copy_database(db, tmp_path), session_id


def stored_state(db: Path, session_id: str) -> SessionState:
    """The session as the store folds it now (read in this process)."""

    async def read() -> SessionState:
        async with await Store.open(db) as store:
            return await store.state(session_id)

    return asyncio.run(read())


@pytest.mark.chromium
def test_refine_headless_accept_fixes_the_field_and_refreshes_the_items(tmp_path, demo, recorded):
    db, session_id = copy_db(recorded, tmp_path)
    result = tui_agent(db, "refine", session_id[:6], *FIX_PRICE, "--headless", "--accept")
    assert result.returncode == 0, result.stderr
    assert "Fixed 1 field" in result.stdout
    assert '+      "price": ".field-price",' in result.stdout  # the diff of the bindings
    assert '-      "price": ".nope",' in result.stdout

    after = stored_state(db, session_id)
    assert after.analysis.field("price").coverage == 100
    assert after.llm_calls == 0 and after.current_versions == {"recipe": 2}
    truth = [row["price"] for row in demo.ground_truth("panel")[: int(MAX_ITEMS)]]
    assert [item["price"] for item in after.items] == truth

    exported = tui_agent(db, "sessions", "feedback", session_id, "-o", "-")
    assert exported.returncode == 0, exported.stderr
    [feedback] = json.loads(exported.stdout)
    assert (feedback["field"], feedback["issue"], feedback["correct_selector"]) == (
        "price",
        "missing",
        ".field-price",
    )
    written = tui_agent(db, "sessions", "feedback", session_id, "-o", str(tmp_path / "fb.json"))
    assert written.returncode == 0, written.stderr
    assert json.loads((tmp_path / "fb.json").read_text()) == [feedback]


@pytest.mark.chromium
def test_a_wrong_field_given_only_a_selector_is_changed_not_verified(tmp_path, demo, recorded):
    db, session_id = copy_db(recorded, tmp_path)
    wrong = ("--field", "category", "--issue", "wrong", "--selector", ".field-seller")
    result = tui_agent(db, "refine", session_id, *wrong, "--headless")
    assert result.returncode == 0, result.stderr
    out = " ".join(result.stdout.split())  # rich wraps long lines
    truth = demo.ground_truth("panel")
    first = f"{truth[0]['category']!r} -> {truth[0]['seller']!r}"
    assert f"category 100% -> 100% (changed, not verified: {first}" in out
    assert "Fixed 0 fields; changed, not verified: category" in out
    assert "(fixed)" not in out and "fixed: category" not in out
    shown = tui_agent(db, "sessions", "show", session_id, "--json").stdout
    [candidate] = [a for a in json.loads(shown)["artifacts"] if a["candidate"]]
    assert candidate["summary"].startswith(f"category 100% -> 100% (changed, not verified: {first}")


@pytest.mark.chromium
def test_refine_json_leaves_the_candidate_waiting_until_decided(tmp_path, recorded):
    db, session_id = copy_db(recorded, tmp_path)
    result = tui_agent(db, "refine", session_id, *FIX_PRICE, "--json")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert events[0]["type"] == "feedback_submitted"
    artifacts = [(e["version"], e["candidate"]) for e in events if e["type"] == "artifact"]
    assert artifacts == [(1, False), (2, True)]
    assert events[-1]["type"] == "refinement_progress"
    assert events[-1]["message"] == "Fixed 1 field"
    assert not [e for e in events if e["type"] in ("version_decided", "llm_call")]
    assert f"tui-agent refine {session_id} --accept" in result.stderr
    waiting = stored_state(db, session_id)
    assert waiting.analysis.field("price").coverage == 0  # nothing replaced yet
    assert waiting.current_versions == {"recipe": 1}
    reason = "the price\n  selector is too   specific"  # one line once recorded
    rejected = tui_agent(db, "refine", session_id, "--reject", "--reason", reason, "--json")
    assert rejected.returncode == 0, rejected.stderr
    [decided] = [json.loads(line) for line in rejected.stdout.splitlines()]
    assert (decided["type"], decided["version"], decided["accepted"], decided["reason"]) == (
        "version_decided",
        2,
        False,
        "the price selector is too specific",
    )
    rejected_state = stored_state(db, session_id)
    assert rejected_state.event_count == waiting.event_count + 1
    [stored] = [e for e in rejected_state.timeline if isinstance(e, VersionDecided)]
    assert (stored.version, stored.accepted, stored.reason) == (
        2,
        False,
        "the price selector is too specific",
    )
    again = tui_agent(db, "refine", session_id, "--accept")
    assert again.returncode == 2
    assert "no candidate waiting for a decision" in again.stderr


async def _record_without_browser(db: Path) -> tuple[str, str]:
    """A session with items and one without, recorded straight into the store."""
    items = [{"title": "Kettle", "price": None}]
    ids = []
    async with await Store.open(db) as store:
        for recorded_items in (items, []):
            events = [ItemsExtracted(items=recorded_items)] if recorded_items else []
            events.append(OutputAnalyzed(analysis=analyze_output(recorded_items)))
            events.append(SessionEnded(status="completed"))

            async def agent(events=events):
                for event in events:
                    yield event

            started = SessionStarted(
                kind="scrape",
                title="recipe",
                agent_type="scraper",
                test_context={
                    "url": "http://127.0.0.1:9/",
                    "recipe": json.loads((RECIPES / "demo-panel.json").read_text()),
                },
            )
            state = await SessionRecorder(store).run(started, agent())
            ids.append(state.session_id)
    return ids[0], ids[1]


async def _event_counts(db: Path) -> dict[str, int]:
    async with await Store.open(db) as store:
        return {s.session_id: s.event_count for s in await store.list_sessions()}


def test_bad_input_is_one_line_exit_2_and_records_nothing(tmp_path):
    db = tmp_path / "s.db"
    with_items, without_items = asyncio.run(_record_without_browser(db))
    before = asyncio.run(_event_counts(db))
    fix = ("--issue", "missing", "--selector", ".field-price")
    cases = {
        "no session 'zzz'": ("zzz", "--field", "price", *fix),
        "has no field 'cost' (fields: title, price)": (with_items, "--field", "cost", *fix),
        "has no items to give feedback on": (without_items, "--field", "price", *fix),
        "is not IN=>OUT": (with_items, "--field", "price", *fix, "--example", "12.5"),
        "--issue is required": (with_items, "--field", "price"),
        "is not a regular expression (missing ), unterminated subpattern at position 0); to "
        "describe the values in words use --looks-like": (
            with_items,
            "--field",
            "price",
            "--issue",
            "format",
            "--pattern",
            "(\\d+",
        ),
        "--looks-like and --example need --field": (
            with_items,
            "--accept",
            "--looks-like",
            "prices in euros",
        ),
        "no model to propose one": (with_items, "--field", "price", "--issue", "missing"),
        "no candidate waiting": (with_items, "--accept"),
        "--reason goes with --reject": (with_items, "--accept", "--reason", "fine"),
    }
    for message, args in cases.items():
        result = tui_agent(db, "refine", *args)
        assert result.returncode == 2, (args, result.stderr)
        assert message in result.stderr, (args, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "Traceback" not in result.stderr
    assert asyncio.run(_event_counts(db)) == before


BANDS_PROGRAM = """\
ORDERS = [{"id": 1, "price": 100.0}, {"id": 2, "price": 20.0}, {"id": 3, "price": 240.0}]

def main():
    return [{"id": o["id"], "band": BAND} for o in ORDERS]
"""
WRONG_BANDS = BANDS_PROGRAM.replace("BAND", 'str(o["price"])')
RIGHT_BANDS = BANDS_PROGRAM.replace(
    "BAND", '"low" if o["price"] < 50 else "mid" if o["price"] <= 100 else "high"'
)
LOOKS_LIKE = "price bands: low under 50, mid up to 100, high above"


@pytest.mark.parametrize("with_pattern", [True, False])
def test_an_analyzers_pattern_is_checked_and_its_description_told(tmp_path, with_pattern):
    from support.requirements import require_backend
    from support.scripted_model import ScriptedModel, text

    require_backend("bubblewrap")
    program = tmp_path / "bands.py"
    program.write_text(BANDS_PROGRAM.replace("BAND", '"big" if o["price"] > 100 else "small"'))
    db = tmp_path / "s.db"
    sandbox = ("--sandbox", "bubblewrap")
    recorded = tui_agent(db, "exec", str(program), *sandbox, "--agent-type", "analyzer", "--json")
    assert recorded.returncode == 0, recorded.stderr
    session_id = json.loads(recorded.stdout.splitlines()[0])["session_id"]
    pattern = ("--pattern", "low|mid|high") if with_pattern else ()
    replies = [text(f"```python\n{WRONG_BANDS}```"), text(f"```python\n{RIGHT_BANDS}```")]
    with ScriptedModel(replies if with_pattern else replies[1:]) as server:
        result = tui_agent(
            db,
            "refine",
            session_id,
            *("--field", "band", "--issue", "format", *pattern, "--looks-like", LOOKS_LIKE),
            *("--model", "openai/gpt-4o-mini", "--api-base", server.api_base, *sandbox),
            "--headless",
        )
        prompts = [r.messages[-1]["content"] for r in server.requests]
    assert result.returncode == 0, result.stderr
    out = " ".join(result.stdout.split())
    assert all(f"What the values should look like: {LOOKS_LIKE}" in p for p in prompts)
    if with_pattern:  # the first attempt's values fail the pattern; the second's pass it
        assert "attempt 1: band (format): 100% -> 100%, not fixed: 3 of 3 values" in out
        assert "attempt 2: band (format): 100% -> 100%, fixed" in out
        assert "band 100% -> 100% (fixed)" in out
    else:  # words alone verify nothing
        assert "band 100% -> 100% (changed, not verified: 'small' -> 'mid'" in out
        assert "(fixed)" not in out
