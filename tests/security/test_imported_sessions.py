"""An imported session is someone else's input: refining it or accepting its refined version
re-checks its settings as if typed and runs nothing until the user approves what it shows.

The sessions are files an attacker would write (a code candidate waiting for `--accept`, a
network flag on, a file:// / chrome:// / data: page), imported with `tui-agent sessions import`;
each test drives the real `tui-agent` process with the real sandboxes (docker, bubblewrap, and
the local backend where approval is the point), Chromium and SQLite. The code writes a marker
in its workspace when it runs and returns its network interfaces.
"""

from __future__ import annotations

import asyncio
import json
import os
import pty
import re
import select
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from support.requirements import require_chromium

from tui_agent.analysis import analyze_output
from tui_agent.demo_site import DemoSite
from tui_agent.events import (
    Artifact,
    BaseEvent,
    CodeProposed,
    ExecutionFinished,
    ItemsExtracted,
    OutputAnalyzed,
    SessionEnded,
    SessionStarted,
    VersionDecided,
    dump_event,
)
from tui_agent.session import SessionState
from tui_agent.store import Store

RECIPES = Path(__file__).resolve().parents[2] / "recipes"
RUN_TIMEOUT = 300
"""Seconds a CLI run may take on a busy machine (a bound, never asserted as a timing)."""
ORIGINAL = "def main():\n    return [{'name': 'a', 'price': None}]\n"
HOSTILE = """\
import socket

def main():
    with open("ran-{token}", "w") as marker:
        marker.write("ran")
    interfaces = sorted(name for _, name in socket.if_nameindex())
    return [{{"interfaces": interfaces, "html": html}}]
"""
PAGE = "<html><body><p>recorded page</p></body></html>"


def write_session(path: Path, session_id: str, events: list[BaseEvent]) -> Path:
    """`events` as an exported session file: stamped with the id and seq 1..n."""
    lines = [
        dump_event(e.model_copy(update={"session_id": session_id, "seq": n, "ts": 1000.0 + n}))
        for n, e in enumerate(events, start=1)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def code_session(
    folder: Path, token: str, *, url: str, html: str | None, network: bool = True
) -> tuple[Path, str]:
    """An exec session whose candidate code (v2) waits for `--accept`, asking for `network`
    and the page `url` (with `html`, nothing is loaded); the file and its session id."""
    items = [{"name": "a", "price": None}]
    context: dict[str, Any] = {"args": [], "url": url}
    if html is not None:
        context["html"] = html
    events: list[BaseEvent] = [
        SessionStarted(
            kind="exec",
            title="prices",
            params={"timeout": 60, "entrypoint": "main", "network": network},
            test_context=context,
        ),
        CodeProposed(step=1, code=ORIGINAL),
        ExecutionFinished(step=1, success=True, result=items),
        ItemsExtracted(step=1, items=items),
        OutputAnalyzed(step=1, analysis=analyze_output(items)),
        Artifact(name="code", content=ORIGINAL, format="python", version=1, origin="original"),
        Artifact(
            name="code",
            content=HOSTILE.format(token=token),
            format="python",
            version=2,
            candidate=True,
            origin="refinement attempt 1",
        ),
        SessionEnded(status="completed"),
    ]
    session_id = uuid.uuid4().hex[:12]
    return write_session(folder / f"{session_id}.jsonl", session_id, events), session_id


def recipe_session(folder: Path, url: str) -> tuple[Path, str]:
    """A recipe session on `url` whose candidate recipe (v2) waits for `--accept`."""
    recipe = json.loads((RECIPES / "demo-panel.json").read_text())
    items = [{"title": "a", "price": None}]
    text = json.dumps(recipe, indent=2)
    events: list[BaseEvent] = [
        SessionStarted(
            kind="scrape",
            title="recipe demo-panel",
            agent_type="scraper",
            params={"max_items": 2},
            test_context={"url": url, "recipe": recipe},
        ),
        ItemsExtracted(items=items),
        OutputAnalyzed(analysis=analyze_output(items)),
        Artifact(name="recipe", content=text, format="json", version=1, origin="original"),
        Artifact(
            name="recipe",
            content=text,
            format="json",
            version=2,
            candidate=True,
            origin="refinement attempt 1",
        ),
        SessionEnded(status="completed"),
    ]
    session_id = uuid.uuid4().hex[:12]
    return write_session(folder / f"{session_id}.jsonl", session_id, events), session_id


def environment(tmp_path: Path, sandbox: str) -> dict[str, str]:
    return {
        **os.environ,
        "TUI_AGENT_CONFIG_FILE": str(tmp_path / "none.toml"),
        "TUI_AGENT_MODEL": "",
        "TUI_AGENT_SANDBOX": sandbox,
        "TUI_AGENT_WORKSPACE": str(tmp_path / "workspace"),
        "TUI_AGENT_WORKSPACE_QUOTA_MB": "0",
        "TUI_AGENT_DB": str(tmp_path / "sessions.db"),
    }


def tui_agent(tmp_path: Path, sandbox: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`tui-agent ARGS` with no terminal (stdin from /dev/null)."""
    return subprocess.run(
        [sys.executable, "-m", "tui_agent", *args],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        env=environment(tmp_path, sandbox),
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
    )


def imported(tmp_path: Path, sandbox: str, file: Path) -> None:
    result = tui_agent(tmp_path, sandbox, "sessions", "import", str(file))
    assert result.returncode == 0, result.stderr


def stored(tmp_path: Path, session_id: str) -> SessionState:
    async def read() -> SessionState:
        async with await Store.open(tmp_path / "sessions.db") as store:
            return await store.state(session_id)

    return asyncio.run(read())


def ran(tmp_path: Path, token: str) -> bool:
    return (tmp_path / "workspace" / f"ran-{token}").exists()


def one_line_refusal(result: subprocess.CompletedProcess[str]) -> str:
    """The refusal's one stderr line (non-zero exit, no traceback, nothing on stdout)."""
    assert result.returncode != 0, result.stdout
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.fixture
def token() -> str:
    return uuid.uuid4().hex[:8]


def test_accepting_with_no_terminal_refuses_in_one_line_and_runs_nothing(
    tmp_path: Path, backend: str, token: str
) -> None:
    secret = tmp_path / "host-secret.txt"
    secret.write_text("host secret")
    file, session_id = code_session(tmp_path, token, url=secret.as_uri(), html=None)
    imported(tmp_path, backend, file)
    before = stored(tmp_path, session_id)

    result = tui_agent(tmp_path, backend, "refine", session_id, "--accept")

    assert "--allow-file-urls" in one_line_refusal(result)  # its page is refused first
    assert not ran(tmp_path, token)
    assert stored(tmp_path, session_id) == before

    file, session_id = code_session(tmp_path, token, url="http://127.0.0.1:9/", html=PAGE)
    imported(tmp_path, backend, file)
    before = stored(tmp_path, session_id)
    result = tui_agent(tmp_path, backend, "refine", session_id, "--accept")
    line = one_line_refusal(result)
    assert f"session {session_id} was imported from a file" in line
    assert "--trust" in line
    assert not ran(tmp_path, token)
    assert stored(tmp_path, session_id) == before


def test_trust_runs_with_the_network_off_and_refuses_a_file_url(
    tmp_path: Path, backend: str, token: str
) -> None:
    secret = tmp_path / "host-secret.txt"
    secret.write_text("host secret")
    file, session_id = code_session(tmp_path, token, url=secret.as_uri(), html=None)
    imported(tmp_path, backend, file)
    before = stored(tmp_path, session_id)

    refused = tui_agent(tmp_path, backend, "refine", session_id, "--accept", "--trust")

    line = one_line_refusal(refused)
    assert "file://" in line and "--allow-file-urls" in line
    assert not ran(tmp_path, token)
    assert stored(tmp_path, session_id) == before

    # The same code on an http page: it runs once trusted, but without the network it asked
    # for (its only interface is the loopback), and its code and settings were shown first.
    file, session_id = code_session(tmp_path, token, url="http://127.0.0.1:9/", html=PAGE)
    imported(tmp_path, backend, file)
    result = tui_agent(tmp_path, backend, "refine", session_id, "--accept", "--trust")
    assert result.returncode == 0, result.stderr
    assert f"Run the code of imported session {session_id}?" in result.stdout
    assert f'open("ran-{token}", "w")' in result.stdout
    assert "network" in result.stdout and "off (an imported session" in result.stdout
    assert ran(tmp_path, token)
    after = stored(tmp_path, session_id)
    assert after.current_versions == {"code": 2}
    assert after.items == [{"interfaces": ["lo"], "html": PAGE}]


def test_the_local_backend_never_runs_an_imported_session_without_approval(
    tmp_path: Path, token: str
) -> None:
    file, session_id = code_session(tmp_path, token, url="http://127.0.0.1:9/", html=PAGE)
    imported(tmp_path, "local", file)
    before = stored(tmp_path, session_id)

    result = tui_agent(tmp_path, "local", "refine", session_id, "--accept")

    assert "--trust" in one_line_refusal(result)
    assert not ran(tmp_path, token)
    assert stored(tmp_path, session_id) == before


def run_in_terminal(tmp_path: Path, args: list[str], answer: bytes) -> tuple[int, str]:
    """`tui-agent ARGS` on a pseudo-terminal; `answer` is typed at the "Run it?" question.
    The exit code and everything shown (colours stripped)."""
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "tui_agent", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env={**environment(tmp_path, "local"), "COLUMNS": "200", "LINES": "50"},
        cwd=tmp_path,
        close_fds=True,
    )
    os.close(slave)
    shown = b""
    answered = False
    deadline = time.monotonic() + RUN_TIMEOUT
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if not ready:
                if process.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the process closed the terminal
                break
            if not chunk:
                break
            shown += chunk
            if not answered and b"Run it?" in shown:
                os.write(master, answer)
                answered = True
        code = process.wait(timeout=RUN_TIMEOUT)
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown.decode("utf-8", "replace"))
    return code, text


def test_in_a_terminal_the_code_and_settings_are_shown_and_asked_for(
    tmp_path: Path, token: str
) -> None:
    file, session_id = code_session(tmp_path, token, url="http://127.0.0.1:9/", html=PAGE)
    imported(tmp_path, "local", file)
    before = stored(tmp_path, session_id)

    code, shown = run_in_terminal(tmp_path, ["refine", session_id, "--accept"], b"n\n")

    assert code != 0 and "Traceback" not in shown
    assert f"Run the code of imported session {session_id}?" in shown
    assert f'open("ran-{token}", "w")' in shown
    assert "local (NOT isolated" in shown
    assert "not run: the code of session" in shown
    assert not ran(tmp_path, token)
    assert stored(tmp_path, session_id) == before

    code, shown = run_in_terminal(tmp_path, ["refine", session_id, "--accept"], b"y\n")
    assert code == 0, shown
    assert ran(tmp_path, token)
    assert stored(tmp_path, session_id).current_versions == {"code": 2}


@pytest.mark.chromium
@pytest.mark.parametrize(
    "url",
    [
        "chrome://version/",
        "data:text/html,<ul><li class='x'>planted</li></ul>",
        "file",  # a file in the test's folder
    ],
)
def test_a_recipe_rerun_of_an_imported_session_refuses_other_pages(
    tmp_path: Path, url: str
) -> None:
    require_chromium()
    if url == "file":
        page = tmp_path / "page.html"
        page.write_text("<ul><li>host file</li></ul>")
        url = page.as_uri()
    file, session_id = recipe_session(tmp_path, url)
    imported(tmp_path, "auto", file)
    before = stored(tmp_path, session_id)

    accept = tui_agent(tmp_path, "auto", "refine", session_id, "--accept")
    fix = ("--field", "price", "--issue", "missing", "--selector", ".field-price")
    refine = tui_agent(tmp_path, "auto", "refine", session_id, *fix)

    for result in (accept, refine):
        line = one_line_refusal(result)
        assert "the imported session's URL" in line
        assert "refused" in line
    assert stored(tmp_path, session_id) == before
    assert not [e for e in stored(tmp_path, session_id).timeline if isinstance(e, VersionDecided)]


@pytest.mark.chromium
def test_a_trusted_recipe_rerun_on_an_http_page_runs(tmp_path: Path) -> None:
    require_chromium()
    with DemoSite() as demo:
        url = demo.url("panel")
        file, session_id = recipe_session(tmp_path, url)
        imported(tmp_path, "auto", file)
        refused = tui_agent(tmp_path, "auto", "refine", session_id, "--accept")
        assert "--trust" in one_line_refusal(refused)
        result = tui_agent(tmp_path, "auto", "refine", session_id, "--accept", "--trust")
        truth = demo.ground_truth("panel")[:2]
    assert result.returncode == 0, result.stderr
    assert "Chromium" in result.stdout and url in result.stdout
    after = stored(tmp_path, session_id)
    assert after.current_versions == {"recipe": 2}
    assert [item["title"] for item in after.items] == [row["title"] for row in truth]


async def test_the_tui_asks_in_a_dialog_and_runs_nothing_when_cancelled(
    tmp_path: Path, backend: str, token: str
) -> None:
    from tui_agent.config import Settings
    from tui_agent.tui.app import TuiAgentApp
    from tui_agent.tui.screens.diff import DiffScreen
    from tui_agent.tui.screens.imported_run import ImportedRunModal
    from tui_agent.tui.screens.session import SessionScreen

    file, session_id = code_session(tmp_path, token, url="http://127.0.0.1:9/", html=PAGE)
    imported(tmp_path, backend, file)

    async def state() -> SessionState:
        async with await Store.open(tmp_path / "sessions.db") as store:
            return await store.state(session_id)

    before = await state()
    settings = Settings(
        db=tmp_path / "sessions.db",
        sandbox=backend,  # type: ignore[arg-type]
        workspace=tmp_path / "workspace",
        workspace_quota_mb=0,
    )

    async def until(pilot: Any, condition: Any, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            assert time.monotonic() < deadline, "timed out waiting"
            await pilot.pause(0.05)

    async def review_and_accept(pilot: Any, app: TuiAgentApp) -> ImportedRunModal:
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, DiffScreen))
        await pilot.press("ctrl+y")
        await until(pilot, lambda: isinstance(app.screen, ImportedRunModal))
        assert isinstance(app.screen, ImportedRunModal)
        return app.screen

    app = TuiAgentApp(settings.db, open_session=session_id, settings=settings)
    async with app.run_test(size=(120, 45)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, SessionScreen))
        screen = app.screen
        modal = await review_and_accept(pilot, app)
        shown = f"{modal.plan.shown_content()}\n{modal.plan.settings_text()}"
        assert f'open("ran-{token}", "w")' in shown
        assert "off (an imported session" in shown
        await pilot.press("n")
        await until(pilot, lambda: app.screen is screen)
        await pilot.pause(0.5)
        assert await state() == before and not ran(tmp_path, token)

        await review_and_accept(pilot, app)
        await pilot.press("y", "e", "s")  # typing runs nothing: only ctrl+y does
        await pilot.pause(0.5)
        assert isinstance(app.screen, ImportedRunModal) and not ran(tmp_path, token)
        await pilot.press("ctrl+y")
        await until(pilot, lambda: ran(tmp_path, token), 240.0)
        await until(pilot, lambda: screen.state.current_versions == {"code": 2}, 240.0)
        await until(pilot, lambda: "interfaces" in screen.state.items[0], 240.0)
    assert (await state()).items == [{"interfaces": ["lo"], "html": PAGE}]
