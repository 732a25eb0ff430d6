"""A session whose recording process was killed: the home screen and replay say so."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from session_factory import wait_until

from tui_agent.tui.app import TuiAgentApp
from tui_agent.tui.screens.replay import ReplayScreen
from tui_agent.tui.widgets.sessions_table import SessionsTable
from tui_agent.tui.widgets.status_line import StatusLine

WRITER = Path(__file__).parents[1] / "integration" / "store_writer.py"
SID = "0123456789ab"


def killed_writer(db: Path) -> None:
    """Record a session in a real writer process and SIGKILL it midway (then reap it)."""
    proc = subprocess.Popen(
        [sys.executable, str(WRITER), str(db), SID, str(db.with_name("never")), "hold"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    while proc.stdout.readline().strip() != "holding":
        assert proc.poll() is None, "the writer exited early"
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)


async def test_home_and_replay_show_an_interrupted_session(db_path: Path) -> None:
    killed_writer(db_path)
    app = TuiAgentApp(db_path)  # opening the store notices the dead writer
    async with app.run_test(size=(100, 30)) as pilot:
        table = app.screen.query_one(SessionsTable)
        await wait_until(pilot, lambda: table.row_count == 1)
        assert table.get_cell(SID, "status").plain == "● interrupted"
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen))
        await pilot.press("end")
        status = app.screen.query_one(StatusLine)
        await wait_until(pilot, lambda: "interrupted" in str(status.render()))
        assert str(status.render()).startswith("● interrupted: process_gone")
