"""The `tui-agent` command as a user runs it: real processes, real SQLite files."""

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "sessions").glob("*.jsonl"))


def tui_agent(*args: str, db: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TUI_AGENT_CONFIG_FILE": str(db.parent / "none.toml")}
    return subprocess.run(
        [sys.executable, "-m", "tui_agent", "--db", str(db), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


@pytest.fixture
def db(tmp_path):
    return tmp_path / "sessions.db"


def test_examples_exist():
    assert {p.stem for p in EXAMPLES} >= {"compound-interest", "book-list", "crashing-program"}


def test_import_list_show_export_delete(db, tmp_path):
    imported = tui_agent("sessions", "import", *map(str, EXAMPLES), db=db)
    assert imported.returncode == 0, imported.stderr
    again = tui_agent("sessions", "import", "--skip-existing", *map(str, EXAMPLES), db=db)
    assert again.returncode == 0 and "already imported" in again.stdout

    listing = tui_agent("sessions", "list", "--json", db=db)
    summaries = [json.loads(line) for line in listing.stdout.splitlines()]
    assert len(summaries) == len(EXAMPLES)
    book = next(s for s in summaries if s["title"].startswith("Book list"))
    assert book["item_count"] == 60 and book["status"] == "completed"

    show = tui_agent("sessions", "show", book["session_id"][:6], "--json", db=db)
    document = json.loads(show.stdout)
    assert document["analysis"]["is_structured"]
    assert "author.name" in [f["name"] for f in document["analysis"]["fields"]]

    compound = next(s for s in summaries if s["title"].startswith("Compound"))
    text = tui_agent("sessions", "show", compound["session_id"], db=db)
    assert "NameError" in text.stdout and "21,386.41" in text.stdout

    out = tmp_path / "export.jsonl"
    exported = tui_agent("sessions", "export", compound["session_id"], "-o", str(out), db=db)
    assert exported.returncode == 0, exported.stderr
    original = next(p for p in EXAMPLES if p.stem == "compound-interest")
    assert out.read_bytes() == original.read_bytes()

    assert tui_agent("sessions", "delete", compound["session_id"], db=db).returncode == 0
    remaining = tui_agent("sessions", "list", "--json", db=db).stdout.splitlines()
    assert len(remaining) == len(EXAMPLES) - 1


def test_unknown_session_id(db):
    assert tui_agent("sessions", "list", db=db).returncode == 0
    line = one_line_error(tui_agent("sessions", "show", "feedbeef", db=db))
    assert "feedbeef" in line


def test_corrupt_jsonl_names_the_line_and_imports_nothing(db, tmp_path):
    lines = EXAMPLES[0].read_text().splitlines()
    lines[2] = lines[2][:-5]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    line = one_line_error(tui_agent("sessions", "import", str(bad), db=db))
    assert "line 3" in line
    assert tui_agent("sessions", "list", "--json", db=db).stdout == ""


def test_unreadable_database(tmp_path):
    not_a_db = tmp_path / "notes.db"
    not_a_db.write_text("these are my notes, not a database\n" * 100)
    one_line_error(tui_agent("sessions", "list", db=not_a_db))
    assert not_a_db.read_text().startswith("these are my notes")


def test_database_from_a_newer_schema_is_left_alone(db):
    assert tui_agent("sessions", "import", str(EXAMPLES[0]), db=db).returncode == 0
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    before = db.read_bytes()
    line = one_line_error(tui_agent("sessions", "list", db=db))
    assert "newer" in line
    assert db.read_bytes() == before
