"""Session owners: a process named so that a reused pid never passes for it (real /proc)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace

import pytest

from tui_agent.store.owners import Owner, liveness, this_process

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs /proc")

# A child that names itself like a parser trap, prints its identity and waits for stdin.
CHILD = """
import ctypes, json, sys
ctypes.CDLL(None).prctl(15, b"x) Z 1 (y", 0, 0, 0)  # PR_SET_NAME: the comm in /proc/pid/stat
from tui_agent.store.owners import this_process
print(json.dumps(this_process().row()), flush=True)
sys.stdin.readline()
"""


@pytest.fixture
def child():
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    owner = Owner(*json.loads(proc.stdout.readline()))
    yield proc, owner
    proc.kill()
    proc.wait()


def test_this_process_is_named_by_boot_pid_namespace_and_start_time() -> None:
    me = this_process()
    assert me.pid == os.getpid()
    assert me.boot_id and me.pid_ns.startswith("pid:[") and me.start_ticks > 0
    assert liveness(me) == "alive"


def test_a_reused_pid_or_a_restarted_machine_is_gone() -> None:
    me = this_process()
    assert liveness(replace(me, start_ticks=me.start_ticks - 1)) == "gone"  # pid reused
    assert liveness(replace(me, boot_id="another boot")) == "gone"  # the machine restarted


def test_what_cannot_be_checked_from_here_is_unknown() -> None:
    me = this_process()
    assert liveness(replace(me, host="elsewhere")) == "unknown"
    assert liveness(replace(me, pid_ns="pid:[1]")) == "unknown"
    assert liveness(replace(me, boot_id="", start_ticks=-1)) == "unknown"  # written without /proc


def test_a_child_is_alive_until_killed_then_gone_reaped_or_not(child) -> None:
    proc, owner = child
    assert (owner.pid, owner.host) == (proc.pid, this_process().host)
    assert liveness(owner) == "alive"  # its odd name did not confuse the parser
    proc.kill()
    proc.wait()
    assert liveness(owner) == "gone"


def test_a_dead_child_not_yet_reaped_is_gone(child) -> None:
    proc, owner = child
    proc.kill()
    os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # dead, left unreaped: a zombie
    assert os.path.exists(f"/proc/{proc.pid}/stat")
    assert liveness(owner) == "gone"
