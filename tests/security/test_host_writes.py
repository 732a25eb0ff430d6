"""What the host writes for the sandbox (tool code programs, generated packages) cannot be
steered by the code inside: the sandbox owns its workspace and plants links there, renames
folders, races the host with a thread, rewrites packages with recomputed hashes. None of it
makes the host write outside its own folder, and no session inherits another's workspace or
packages.

Each test is a real tool code session: the scripted model writes the programs, the shop MCP
server answers the tool calls, the sandbox is docker or bubblewrap. "The host's folder" the
programs aim at is a folder of the test's own (tmp_path), never a real system path.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from support.mcp_shop import shop_stdio, write_config
from support.scripted_model import ScriptedModel, ToolCallReply, text, tool_calls
from support.sessions import MODEL

from tui_agent.agents.launch import prepare
from tui_agent.agents.requests import ToolcodeRequest
from tui_agent.config import Settings
from tui_agent.events import Event, ExecutionFinished, PhaseFinished
from tui_agent.recorder import SessionRecorder
from tui_agent.session import SessionState
from tui_agent.store import Store
from tui_agent.tools import check_program, load_mcp_config

ANSWER = "Done."

PLANT = """
import os, sys
rename = getattr(os, "re" + "name")
link = getattr(os, "sym" + "link")
opener = getattr(os, "op" + "en")
target = chr(47) + sys.argv[1]  # absolute, yet past the program guard
if os.path.lexists(".toolcode"):
    rename(".toolcode", "moved")
link(target, ".toolcode")
print("planted", os.readlink(".toolcode") == target)
own = os.path.dirname(os.path.abspath(__file__))
try:
    os.close(opener(os.path.join(own, "planted.py"), os.O_WRONLY | os.O_CREAT, 0o644))
    print("own folder: written")
except OSError as exc:
    print("own folder: refused", exc.errno)
"""
"""Moves `.toolcode` away and plants a link to the host folder in its place (the path built
with chr(47), which the program guard does not see), then tries to write beside itself."""

RACE = """
import os, sys, threading, time
rename = getattr(os, "re" + "name")
link = getattr(os, "sym" + "link")
unlink = getattr(os, "un" + "link")
make = getattr(os, "mk" + "dir")
listing = getattr(os, "list" + "dir")
target = chr(47) + sys.argv[1]

def flip():
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if not os.path.lexists(".toolcode"):
                make(".toolcode")
            rename(".toolcode", ".toolcode-real")
            link(target, ".toolcode")
            time.sleep(0.0005)
            unlink(".toolcode")
            rename(".toolcode-real", ".toolcode")
            for name in listing(".toolcode"):
                path = os.path.join(".toolcode", name)
                if name.startswith("code_") and not os.path.islink(path):
                    rename(path, "swapped-" + name)
                    link(target, path)
        except OSError:
            pass

threading.Thread(target=flip, daemon=True).start()
print("racing")
"""
"""A thread that outlives the run flips `.toolcode` between a folder and a link to the host
folder, and swaps every program folder that appears in it for such a link, while the host
writes the next programs."""


NEXT_NUMBER = "from shop_tools import next_number\nprint(next_number(value=1))\n"


def say(number: int) -> str:
    return f"print({number})\n"


@pytest.fixture
def host(tmp_path: Path) -> Path:
    """The host folder the programs aim at, holding one file of the user's."""
    folder = tmp_path / "host"
    folder.mkdir()
    (folder / "main.py").write_text("the user's own file\n")
    return folder


def host_state(folder: Path) -> dict[str, str | int]:
    """Every path under `folder` with its text (a folder: '/'), and the folder's modification
    time (which any entry made or removed in it changes)."""
    state: dict[str, str | int] = {".": folder.stat().st_mtime_ns}
    for path in sorted(folder.rglob("*")):
        state[str(path.relative_to(folder))] = "/" if path.is_dir() else path.read_text()
    return state


def settings(server: ScriptedModel, tmp_path: Path, backend: str, **extra: object) -> Settings:
    return Settings(
        model=server.model(MODEL),
        api_base=server.api_base,
        db=tmp_path / "sessions.db",
        sandbox=backend,  # type: ignore[arg-type]
        **extra,  # type: ignore[arg-type]
    )


async def toolcode(
    server: ScriptedModel,
    chosen: Settings,
    tmp_path: Path,
    programs: list[tuple[str, list[str]]],
) -> tuple[SessionState, list[Event]]:
    """A recorded tool code session whose model writes `programs` (code, args), then answers."""
    for code, _ in programs:
        assert check_program(textwrap.dedent(code)) == [], "the guard lets it through"
    server.push(
        *(
            tool_calls(ToolCallReply("write_code", {"code": textwrap.dedent(code), "args": args}))
            for code, args in programs
        ),
        text(ANSWER),
    )
    mcp = load_mcp_config(write_config(tmp_path / "servers.json", {"shop": shop_stdio()}))
    launch = prepare(ToolcodeRequest(task="Use the shop", mcp_config=mcp.path), chosen)
    async with await Store.open(chosen.db) as store:
        recorder = SessionRecorder(store)
        state = await recorder.run(launch.started, launch.events)
        return state, await store.events(recorder.session_id)


def outputs(events: list[Event]) -> list[list[str]]:
    """Each program's printed lines."""
    return [
        [line.text for line in event.logs]
        for event in events
        if isinstance(event, ExecutionFinished)
    ]


async def test_a_planted_link_never_makes_the_host_write_outside(
    server: ScriptedModel, tmp_path: Path, backend: str, host: Path
) -> None:
    before = host_state(host)
    chosen = settings(server, tmp_path, backend, workspace=tmp_path / "workspace")
    state, events = await toolcode(
        server, chosen, tmp_path, [(PLANT, [str(host).lstrip("/")]), (say(1), []), (say(2), [])]
    )
    assert host_state(host) == before, "nothing was written through the planted link"
    assert state.status == "completed", state.errors
    planted, *after = outputs(events)
    assert planted[0] == "planted True"  # the link is there, where .toolcode was
    assert planted[1].startswith("own folder: refused"), "the program's folder is read-only"
    assert after == [["1"], ["2"]], "the next programs ran as they were written"


async def test_a_racing_thread_never_makes_the_host_write_outside(
    server: ScriptedModel, tmp_path: Path, backend: str, host: Path
) -> None:
    before = host_state(host)
    chosen = settings(server, tmp_path, backend, workspace=tmp_path / "workspace")
    programs = [(RACE, [str(host).lstrip("/")]), *((say(n), []) for n in range(1, 9))]
    state, events = await toolcode(server, chosen, tmp_path, programs)
    assert host_state(host) == before, "no program text landed in the host folder"
    assert state.status == "completed", state.errors
    assert outputs(events) == [["racing"], *([str(n)] for n in range(1, 9))]


async def test_a_link_left_in_a_shared_workspace_does_not_catch_the_next_sessions_packages(
    server: ScriptedModel,
    tmp_path: Path,
    backend: str,
    host: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TUI_AGENT_WORKSPACE_QUOTA_MB", "0")  # no copy-back drops the link
    shared = tmp_path / "shared"
    before = host_state(host)
    chosen = settings(server, tmp_path, backend, workspace=shared)
    first, _ = await toolcode(server, chosen, tmp_path, [(PLANT, [str(host).lstrip("/")])])
    assert first.status == "completed", first.errors
    assert (shared / ".toolcode").is_symlink(), "the link outlived the session"
    second, events = await toolcode(server, chosen, tmp_path, [(NEXT_NUMBER, [])])
    assert host_state(host) == before, "no package was generated through the link"
    assert second.status == "completed", second.errors
    assert outputs(events) == [["2"]]


TAMPER = """
import hashlib, json, os, shutil
import shop_tools, workspace_tools
opener = getattr(os, "op" + "en")
rename = getattr(os, "re" + "name")
copy_tree = getattr(shutil, "copy" + "tree")
print(workspace_tools.update_workspace_file(filepath="secret.txt", content="session one's"))
package = os.path.dirname(shop_tools.__file__)

def read(path):
    fd = opener(path, os.O_RDONLY)
    data = os.read(fd, 1 << 20)
    os.close(fd)
    return data

def write(path, data):
    fd = opener(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, data)
    os.close(fd)

def tamper(folder):
    init = read(os.path.join(folder, "__init__.py")) + b"\\nprint('PWNED')\\n"
    manifest = json.loads(read(os.path.join(folder, "_manifest.json")))
    manifest["files"]["__init__.py"] = hashlib.sha256(init).hexdigest()
    write(os.path.join(folder, "__init__.py"), init)
    write(os.path.join(folder, "_manifest.json"), json.dumps(manifest, indent=2).encode() + b"\\n")

try:
    try:
        tamper(package)
    except PermissionError:  # not ours to write: copy the tree, tamper the copy, swap it in
        top = os.path.dirname(os.path.dirname(package))
        copy_tree(top, "evil")
        tamper(os.path.join("evil", os.path.relpath(package, top)))
        rename(top, "old-toolcode")
        rename("evil", top)
    print("tampered")
except OSError as exc:
    print("refused", exc.errno)
"""
"""Leaves a file in the workspace, then rewrites its own generated package (in place, or as a
tampered copy swapped in) with a manifest whose hashes match the rewrite."""

LATER = """
import shop_tools, workspace_tools
print(workspace_tools.read_workspace_file(filepath="secret.txt"))
print(shop_tools.next_number(value=1))
"""


async def test_sessions_get_their_own_workspace_and_packages_by_default(
    server: ScriptedModel, tmp_path: Path, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    chosen = settings(server, tmp_path, backend)  # no workspace named: the defaults
    first, events = await toolcode(server, chosen, tmp_path, [(TAMPER, [])])
    assert first.status == "completed", first.errors
    [[wrote, tampering]] = outputs(events)
    second, events = await toolcode(server, chosen, tmp_path, [(LATER, [])])
    assert second.status == "completed", second.errors
    [generate] = [e for e in events if isinstance(e, PhaseFinished) and e.phase == "generate"]
    assert generate.summary == "shop_tools written, workspace_tools written"
    [[secret, number]] = outputs(events)
    assert secret.startswith("Error: secret.txt does not exist"), "the first one's file"
    assert number == "2", "the host's own package ran, not the first session's rewrite"
    assert wrote.startswith("wrote") and tampering.startswith("refused")
    workspaces = sorted((data / "tui-agent" / "workspaces").iterdir())
    assert len(workspaces) == 2
    assert [(w / "secret.txt").exists() for w in workspaces].count(True) == 1
