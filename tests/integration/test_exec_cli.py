"""`tui-agent exec` end to end: real sandboxes, real Chromium, real SQLite."""

import json
import os
import subprocess
import sys
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from support.requirements import require, require_chromium

from tui_agent.sandbox.choose import backend_status

ITEMS_PROGRAM = """
def main(n, label):
    print(f"making {n} {label}")
    return [{"name": f"{label} {i}", "price": i * 1.5 if i % 2 else None} for i in range(n)]
"""

SCRAPER = """
import re
def main():
    return [{"title": t, "url": url} for t in re.findall(r"<h2>(.*?)</h2>", html)]
"""


def tui_agent(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TUI_AGENT_CONFIG_FILE": str(tmp_path / "none.toml")}
    command = [sys.executable, "-m", "tui_agent", "--db", str(tmp_path / "s.db"), *args]
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
    )


def stored(tmp_path: Path) -> list[dict]:
    listing = tui_agent(tmp_path, "sessions", "list", "--json")
    return [json.loads(line) for line in listing.stdout.splitlines()]


@pytest.fixture
def program(tmp_path: Path) -> Path:
    path = tmp_path / "items.py"
    path.write_text(ITEMS_PROGRAM)
    return path


@pytest.mark.parametrize("backend", ["docker", "bubblewrap"])
def test_exec_records_items_and_analysis(tmp_path, program, backend):
    status = backend_status(backend)
    require(status.ok, f"the {backend} sandbox", status.reason)
    result = tui_agent(
        tmp_path,
        "exec",
        str(program),
        "--arg",
        "4",
        "--arg",
        "book",
        "--sandbox",
        backend,
        "--workspace",
        str(tmp_path / "ws"),
        "--json",
    )
    assert result.returncode == 0, result.stderr
    printed = [json.loads(line) for line in result.stdout.splitlines()]
    live = [line for e in printed if e["type"] == "execution_output" for line in e["lines"]]
    events = [e for e in printed if e["type"] != "execution_output"]
    types = [e["type"] for e in events]
    assert types == [
        "session_started",
        "code_proposed",
        "execution_started",
        "execution_finished",
        "items_extracted",
        "output_analyzed",
        "session_ended",
    ]
    assert live in ([], events[3]["logs"])  # streamed while running, or only at the end
    assert events[2]["backend"] == backend and events[2]["isolated"]
    assert events[3]["logs"] == [{"stream": "stdout", "text": "making 4 book"}]
    fields = {f["name"]: f for f in events[5]["analysis"]["fields"]}
    assert fields["price"]["coverage"] == 50 and fields["name"]["coverage"] == 100
    [summary] = stored(tmp_path)
    assert summary["item_count"] == 4 and summary["status"] == "completed"


def test_crashing_code_fails_with_one_line_and_is_recorded(tmp_path):
    crash = tmp_path / "crash.py"
    crash.write_text("print('before')\n1 / 0\n")
    result = tui_agent(tmp_path, "exec", str(crash), "--sandbox", "local", "--headless")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "tui-agent: session failed: ZeroDivisionError: division by zero"
    ]
    assert "NOT isolated" in result.stdout and "before" in result.stdout
    [summary] = stored(tmp_path)
    assert summary["status"] == "failed" and summary["stopped_reason"] == "ZeroDivisionError"


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--context", "ctx.json"], "is not valid JSON: Expecting ',' delimiter at line 1"),
        (["--context", "list.json"], "must hold a JSON object, not list"),
        (["--context", "missing.json"], "cannot read context file"),
        (["--url", "not a url"], "not a loadable URL"),
        (["--timeout", "0"], "--timeout must be a positive number"),
        (["--sandbox", "local", "--workspace", "/proc/nope/ws"], "workspace"),
    ],
)
def test_bad_input_is_one_line_and_records_nothing(tmp_path, program, extra, expected):
    (tmp_path / "ctx.json").write_text('{"a": 1 "b": 2}')
    (tmp_path / "list.json").write_text("[1, 2]")
    result = tui_agent(tmp_path, "exec", str(program), *extra, "--headless")
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], result.stderr
    assert stored(tmp_path) == []


def test_missing_file(tmp_path):
    result = tui_agent(tmp_path, "exec", str(tmp_path / "nope.py"), "--headless")
    assert result.returncode == 1
    assert result.stderr.strip() == f"tui-agent: no such file: {tmp_path / 'nope.py'}"


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "site"
    root.mkdir()
    (root / "index.html").write_text(
        "<html><body><div id=list></div><script>"
        "for (const t of ['Alpha', 'Beta']) document.getElementById('list')"
        ".insertAdjacentHTML('beforeend', '<h' + '2>' + t + '</h' + '2>');</script></body></html>"
    )
    handler = partial(SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a: None
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/index.html"
    server.shutdown()


def test_url_is_rendered_on_the_host_and_passed_as_html(tmp_path, site):
    require_chromium()
    scraper = tmp_path / "scrape.py"
    scraper.write_text(SCRAPER)
    result = tui_agent(
        tmp_path, "exec", str(scraper), "--url", site, "--sandbox", "local", "--json"
    )
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert [e["type"] for e in events[1:3]] == ["phase_started", "phase_finished"]
    items = next(e for e in events if e["type"] == "items_extracted")["items"]
    assert items == [{"title": "Alpha", "url": site}, {"title": "Beta", "url": site}]
    started = events[0]
    assert started["agent_type"] == "scraper" and started["test_context"]["url"] == site


def test_headless_prints_output_while_the_code_runs(tmp_path):
    slow = tmp_path / "slow.py"
    slow.write_text(
        "import time\nprint('fir' + 'st', flush=True)\ntime.sleep(1)\nprint('sec' + 'ond')\n"
    )
    result = tui_agent(tmp_path, "exec", str(slow), "--sandbox", "local", "--headless")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.index("⏳ Output:") < out.index("first") < out.index("✅ Execution Result:")
    assert out.count("first") == 1 and out.count("second") == 1  # each line once


def test_with_no_terminal_the_session_is_printed_instead_of_the_tui(tmp_path, program):
    status = backend_status("bubblewrap")
    require(status.ok, "the bubblewrap sandbox", status.reason)
    args = ("exec", str(program), "--arg", "2", "--arg", "pen", "--sandbox", "bubblewrap")
    result = tui_agent(tmp_path, *args, "--workspace", str(tmp_path / "ws"))
    assert result.returncode == 0, result.stderr
    assert "no terminal here: printing the session (--headless)" in result.stderr
    assert "making 2 pen" in result.stdout and "\x1b[?1049h" not in result.stdout + result.stderr
    [summary] = stored(tmp_path)
    assert summary["status"] == "completed" and summary["item_count"] == 2
