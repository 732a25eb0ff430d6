"""What the host reads back from a workspace cannot hang it or reach past the workspace: files
swapped for FIFOs by a thread that outlives its run, and an imported session whose written-file
records name host files (absolute paths, `..`, links, a workspace of the importer's choosing).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import signal
import sys
import time
from pathlib import Path

import pytest
from PIL import Image
from support.scripted_model import ScriptedModel, action_reply
from support.sessions import MODEL

from tui_agent.events import (
    CodeProposed,
    Event,
    ExecutionFinished,
    SessionEnded,
    SessionStarted,
    WrittenFile,
)
from tui_agent.sandbox.folders.workspaces import remember
from tui_agent.store import Store
from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.widgets.files_view import ImagePreview

FLIPPER = """
import os, threading, time

BIG = "big.bin"
FAR = 4_102_444_800  # 2100: the newest file, so the host reads it first, for a while
with open(BIG, "wb") as handle:
    handle.write(bytes(48 << 20))

def swap_later(name):
    time.sleep(0.05)  # the run is over, the host has listed the files and reads BIG
    os.unlink(name)
    os.mkfifo(name)

def arm(step):
    os.utime(BIG, (FAR + step, FAR + step))
    for n in range(4):
        name = f"small-{n}.txt"
        if os.path.lexists(name):
            os.unlink(name)
        with open(name, "w") as handle:
            handle.write(f"step {step}")
        threading.Thread(target=swap_later, args=(name,), daemon=True).start()
    return "armed"

print(arm(0))
"""
"""Each run leaves threads that outlive it: while the host reads the big file the run wrote,
they swap the small files it wrote for FIFOs, so the host finds a FIFO where it listed a file."""
STEPS = 4
SESSION_SECONDS = 300


async def test_fifos_swapped_in_after_a_run_do_not_hang_the_host(
    backend: str, tmp_path: Path, server: ScriptedModel
) -> None:
    server.push(
        action_reply("Start the flipper.", "execute_code", code=FLIPPER),
        *(action_reply("Again.", "execute_code", code=f"print(arm({n}))") for n in range(STEPS)),
        action_reply("Done.", "provide_answer", final_answer="Done."),
    )
    db = tmp_path / "sessions.db"
    argv = [sys.executable, "-m", "tui_agent", "code", "Flip files", "--sandbox", backend]
    argv += ["--model", server.model(MODEL), "--api-base", server.api_base]
    argv += ["--max-steps", str(STEPS + 2), "--workspace", str(tmp_path / "workspace")]
    process = await asyncio.create_subprocess_exec(
        *argv,
        "--headless",
        env={**os.environ, "TUI_AGENT_DB": str(db)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        output, _ = await asyncio.wait_for(process.communicate(), SESSION_SECONDS)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
        pytest.fail("the host hung reading the workspace (a FIFO swapped in)")
    assert process.returncode == 0, output.decode(errors="replace")
    async with await Store.open(db) as store:
        [summary] = await store.list_sessions()
        state = await store.state(summary.session_id)
    assert state.status == "completed", state.errors
    assert state.final_answer == "Done."
    runs = [step.execution for step in state.steps.values() if step.execution is not None]
    assert all(isinstance(run, ExecutionFinished) and run.success for run in runs)
    assert len(runs) == STEPS + 1, "every step ran, each followed by a look at the workspace"


def image(path: Path) -> WrittenFile:
    Image.new("RGB", (16, 8), "red").save(path)
    data = path.read_bytes()
    return WrittenFile(path=path.name, size=len(data), sha256=hashlib.sha256(data).hexdigest())


def imported(session_id: str, steps: list[tuple[str, WrittenFile]]) -> list[Event]:
    """A session file as an importer could write it: one step per (workspace, file record)."""
    payloads: list[Event] = [SessionStarted(kind="exec", title="imported")]
    for step, (workspace, written) in enumerate(steps, start=1):
        payloads += [
            CodeProposed(step=step, code="pass"),
            ExecutionFinished(step=step, success=True, files=[written], workspace=workspace),
        ]
    payloads.append(SessionEnded(status="completed"))
    return [
        event.model_copy(update={"session_id": session_id, "seq": seq, "ts": time.time()})
        for seq, event in enumerate(payloads, start=1)
    ]


async def test_an_imported_sessions_file_records_never_reach_past_its_workspace(
    tmp_path: Path,
) -> None:
    host = tmp_path / "host"
    host.mkdir()
    secret = image(host / "secret.png")  # the importer knows its bytes, so its checksum
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    remember(workspace)  # a workspace a session of this machine really used
    os.symlink(host / "secret.png", workspace / "link.png")  # as its sandbox could plant
    records = [
        (str(host), secret),  # a workspace of the importer's choosing
        (str(workspace), secret.model_copy(update={"path": str(host / "secret.png")})),
        (str(workspace), secret.model_copy(update={"path": "../host/secret.png"})),
        (str(workspace), secret.model_copy(update={"path": "link.png"})),
    ]
    session_id = "1a2b3c4d5e6f"
    exported = tmp_path / "imported.jsonl"
    lines = [event.model_dump_json() for event in imported(session_id, records)]
    exported.write_text("\n".join(lines) + "\n")
    db = tmp_path / "sessions.db"
    async with await Store.open(db) as store:
        assert await store.import_jsonl(exported) == session_id
    app = TuiAgentApp(db, open_session=session_id)
    async with app.run_test(size=(120, 60)) as pilot:
        deadline = time.monotonic() + 20
        while len(app.screen.query(ImagePreview)) < len(records):
            assert time.monotonic() < deadline, "every record gets its preview line"
            await pilot.pause(0.05)
        shown = {str(p.written.path): p.image for p in app.screen.query(ImagePreview)}
    assert all(isinstance(why, str) for why in shown.values()), shown
    assert shown["secret.png"] == "not in a workspace of this machine's sessions"
