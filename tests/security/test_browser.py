"""Chromium is confined: its own sandbox on, as an unprivileged user when tui-agent is root;
its pages load http(s) only, and file:// pages beneath their own folder only when allowed.

Hostile pages are served on loopback and from the test's temporary folder; the secret is a
root-only (0600) file in that folder.
"""

import json
import os
import pwd
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Error as PlaywrightError
from support.requirements import require_chromium

from tui_agent.agents.refine.recipe_refinement import rerun_recipe
from tui_agent.config import Settings
from tui_agent.events import ItemsExtracted, Log
from tui_agent.web.browser import Browser, BrowserError
from tui_agent.web.recipe import parse_recipe

pytestmark = pytest.mark.chromium

AS_ROOT = os.geteuid() == 0
NAVIGATES = {
    "bindings": {
        "LIST": "ul",
        "LIST_ITEM": "a.go",
        "CLICK_BEHAVIOR": "navigates",
        "LIST_LOADED": {"exists": "a.go"},
        "DETAILS_LOADED": {"exists": "body"},
        "DETAILS_FIELDS": {"text": "p", "file": "pre"},
    },
    "recipe": {
        "id": "follow-links",
        "name": "follow each link",
        "commands": [
            {"type": "WAIT_FOR", "target": "list"},
            {
                "type": "FOR_EACH_ITEM_IN_LIST",
                "body": [
                    {"type": "CLICK", "timeout": 3000},
                    {"type": "WAIT_FOR", "target": "details", "timeout": 3000},
                    {"type": "EXTRACT_DETAILS"},
                    {"type": "SAVE", "as": "item"},
                    {"type": "MARK_DONE"},
                ],
            },
            {"type": "END"},
        ],
        "config": {},
    },
}
READ_BODY = {
    "bindings": {"LIST_ITEM": "body", "CLICK_BEHAVIOR": "inline"},
    "recipe": {
        "id": "read-body",
        "name": "the page's text as one item",
        "commands": [
            {
                "type": "FOR_EACH_ITEM_IN_LIST",
                "body": [
                    {"type": "EXTRACT_DETAILS"},
                    {"type": "SAVE", "as": "item"},
                    {"type": "MARK_DONE"},
                ],
            }
        ],
    },
}


def links(*targets: str) -> str:
    items = "".join(
        f'<li><a class="go" href="{t}">link {n}</a></li>' for n, t in enumerate(targets)
    )
    return f"<!doctype html><title>links</title><ul>{items}</ul>"


@pytest.fixture
def secret(tmp_path: Path) -> tuple[Path, str]:
    """A root-only file in tmp_path, and the text in it."""
    text = f"top-secret-{uuid.uuid4().hex}"
    path = tmp_path / "secret.txt"
    path.write_text(text)
    path.chmod(0o600)
    return path, text


@pytest.fixture
def web(tmp_path: Path, secret: tuple[Path, str]) -> Iterator[str]:
    """A loopback site (its base URL) whose links go to the secret file, directly and through a
    redirect, and to data: and chrome:// pages."""
    root = tmp_path / "web"
    root.mkdir()
    path, _ = secret

    class Handler(SimpleHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/to-file":
                self.send_response(302)
                self.send_header("Location", path.as_uri())
                self.end_headers()
                return
            super().do_GET()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    (root / "item.html").write_text("<!doctype html><title>item</title><p>a plain item</p>")
    (root / "list.html").write_text(
        links(
            path.as_uri(),
            f"{base}/to-file",
            "data:text/html,<p>from-a-data-url</p>",
            "chrome://version",
            f"{base}/item.html",
        )
    )
    yield base
    server.shutdown()
    server.server_close()


@pytest.fixture
def local_site(tmp_path: Path, secret: tuple[Path, str]) -> Path:
    """A page in a folder of its own (root-only files, like the folders above it) linking to
    an item beside it and to the secret outside the folder, directly and as ../secret.txt."""
    site = tmp_path / "site"
    site.mkdir()
    path, _ = secret
    (site / "item.html").write_text("<!doctype html><title>item</title><p>a local item</p>")
    (site / "list.html").write_text(links("item.html", path.as_uri(), "../secret.txt"))
    for page in site.iterdir():
        page.chmod(0o600)
    return site / "list.html"


def tui_agent(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui_agent", "--db", str(tmp_path / "s.db"), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TUI_AGENT_CONFIG_FILE": str(tmp_path / "none.toml"), **(env or {})},
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
    )


def run_recipe_cli(
    tmp_path: Path,
    recipe: dict[str, Any],
    url: str,
    *flags: str,
    env: dict[str, str] | None = None,
) -> list[dict]:
    """`tui-agent recipe run` of `recipe` on `url`: its items (the run must complete)."""
    path = tmp_path / f"recipe-{uuid.uuid4().hex[:6]}.json"
    path.write_text(json.dumps(recipe))
    args = ["recipe", "run", str(path), "--url", url, "--json", *flags]
    result = tui_agent(tmp_path, *args, env=env)
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    return [item for e in events if e["type"] == "items_extracted" for item in e["items"]]


def descendants(pid: int) -> list[int]:
    """The processes below `pid`, from /proc, leaving out the subtree of any Python process
    below it: another process this test process started earlier (a Dask worker of a batch
    test's cluster, kept for the session) may run a Chromium of its own."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = (entry / "status").read_text()
            except OSError:
                continue
            ppid = next(line for line in status.splitlines() if line.startswith("PPid:"))
            parents[int(entry.name)] = int(ppid.split()[1])
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        children = [
            child for child, ppid in parents.items() if ppid == parent and not python(child)
        ]
        found += children
        todo += children
    return found


def python(pid: int) -> bool:
    """Whether `pid` runs this test's Python (False once it has ended)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().startswith(sys.executable.encode())
    except OSError:
        return False


@dataclass
class Process:
    """What /proc says of one running process."""

    command: str
    uids: list[str]
    seccomp: str
    pid_namespace: str
    environ: bytes


def process(pid: int) -> Process | None:
    """Process `pid`, None once it has ended (or has no command line left: a zombie)."""
    proc = Path(f"/proc/{pid}")
    try:
        command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
        fields = dict(line.split(":", 1) for line in (proc / "status").read_text().splitlines())
        found = Process(
            command,
            fields["Uid"].split(),
            fields["Seccomp"].strip(),
            os.readlink(proc / "ns" / "pid"),
            (proc / "environ").read_bytes(),
        )
    except (FileNotFoundError, ProcessLookupError):
        return None
    return found if command else None


async def chromium_processes(browser: Browser, url: str) -> list[Process]:
    """Chromium's running processes, a renderer among them, while `browser` shows `url`."""
    page = await browser.page()
    await page.goto(url)
    found = [process(pid) for pid in descendants(os.getpid())]
    await page.context.close()
    # Chromium's, not the Playwright driver's.
    return [p for p in found if p is not None and not p.command.split()[0].endswith("/node")]


async def test_chromium_runs_unprivileged_with_its_sandbox(web, host_secret):
    require_chromium()
    expected = str(pwd.getpwnam("nobody").pw_uid if AS_ROOT else os.getuid())
    async with Browser() as browser:
        processes = await chromium_processes(browser, f"{web}/item.html")
    assert all("chromium" in p.command.split()[0] for p in processes), processes
    renderers = [p for p in processes if "--type=renderer" in p.command]
    assert renderers, processes
    for found in processes:
        assert found.uids == [expected] * 4, found.command
        assert "--no-sandbox" not in found.command
    # The sandbox is really up: renderers in a PID namespace of their own, under seccomp.
    for renderer in renderers:
        assert renderer.pid_namespace != os.readlink("/proc/self/ns/pid")
        assert renderer.seccomp == "2"
    # And Chromium does not get our environment (API keys in it).
    [main] = [p for p in processes if "--type=" not in p.command]
    assert host_secret.encode() not in main.environ


async def test_no_browser_sandbox_is_chromium_as_we_are(web):
    require_chromium()
    async with Browser(sandbox=False) as browser:
        processes = await chromium_processes(browser, f"{web}/item.html")
    assert any("--type=renderer" in p.command for p in processes), processes
    for found in processes:
        assert found.uids[0] == str(os.getuid())
        assert "--no-sandbox" in found.command


@pytest.mark.skipif(not AS_ROOT, reason="the browser user is only used as root")
async def test_a_missing_browser_user_is_one_line():
    require_chromium()
    with pytest.raises(BrowserError, match="browser user 'no-such-user-here' does not exist"):
        async with Browser(user="no-such-user-here"):
            pass


@pytest.mark.parametrize("command", ["scrape", "recipe"])
def test_a_file_url_is_refused_in_one_line(tmp_path, secret, command):
    require_chromium()
    path, _ = secret
    recipe = tmp_path / "recipe.json"
    recipe.write_text(json.dumps(READ_BODY))
    args = {
        "scrape": ["scrape", path.as_uri(), "--task", "Extract 3 items", "--planner", "offline"],
        "recipe": ["recipe", "run", str(recipe), "--url", path.as_uri()],
    }[command]
    result = tui_agent(tmp_path, *args, "--json")
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"tui-agent: not a loadable URL: {path.as_uri()!r} "
        "(file:// pages are loaded only with --allow-file-urls)"
    ]
    assert result.stdout == ""


@pytest.mark.parametrize(
    "url",
    [
        "secret",
        "data:text/html,<p>from-a-data-url</p>",
        "chrome://version",
        "view-source:secret",
        "javascript:document.write('from-a-script')",
        "about:version",
    ],
)
async def test_a_stored_url_is_not_loaded_unless_it_is_a_web_page(tmp_path, secret, url):
    """A session's url goes to Chromium unchecked on a re-run: the browser refuses it."""
    require_chromium()
    path, text = secret
    url = url.replace("secret", path.as_uri())
    settings = Settings(db=tmp_path / "s.db", model=None)
    events = [
        e async for e in rerun_recipe(parse_recipe(READ_BODY), url, settings=settings, max_items=3)
    ]
    assert not [e for e in events if isinstance(e, ItemsExtracted)]
    [failed] = [e for e in events if isinstance(e, Log) and e.level == "error"]
    assert "not a loadable URL" in failed.message or "ERR_ACCESS_DENIED" in failed.message
    shown = json.dumps([e.model_dump(mode="json") for e in events])
    assert text not in shown
    assert "User Agent" not in shown  # chrome://version's content
    assert "from-a-" not in shown.replace(url, "")


def test_links_and_redirects_to_local_urls_are_not_followed(tmp_path, web, secret):
    """From a web page: to the secret, through a redirect, to data: and chrome:// (Chromium
    refuses these itself too; this keeps it so)."""
    require_chromium()
    _, text = secret
    items = run_recipe_cli(tmp_path, NAVIGATES, f"{web}/list.html")
    assert "a plain item" in [item.get("text") for item in items]
    shown = json.dumps(items)
    assert text not in shown
    assert "from-a-data-url" not in shown


@pytest.mark.parametrize("allowed_by", ["flag", "environment"])
def test_allowed_file_pages_are_served_from_their_folder_only(
    tmp_path, local_site, secret, allowed_by
):
    """--allow-file-urls (or TUI_AGENT_ALLOW_FILE_URLS): the page and the item beside it load
    (root-only files under root-only folders, which the browser user cannot read itself); its
    links to the secret outside the folder do not."""
    require_chromium()
    _, text = secret
    flags = ["--allow-file-urls"] if allowed_by == "flag" else []
    env = {"TUI_AGENT_ALLOW_FILE_URLS": "true"} if allowed_by == "environment" else {}
    items = run_recipe_cli(tmp_path, NAVIGATES, local_site.as_uri(), *flags, env=env)
    assert "a local item" in [item.get("text") for item in items]
    assert text not in json.dumps(items)


async def test_a_page_goto_to_a_file_outside_the_folder_is_refused_in_the_browser(
    local_site, secret
):
    """Playwright's own goto, past every check of ours: the route refuses the request, so
    not a byte of the file reaches the page."""
    require_chromium()
    path, _ = secret
    async with Browser(files=local_site.parent) as browser:
        page = await browser.page()
        await page.goto(local_site.as_uri())
        assert "link 0" in await page.content()
        with pytest.raises(PlaywrightError, match="ERR_ACCESS_DENIED"):
            await page.goto(path.as_uri())
