"""Project-wide test settings and the scripted model server."""

import atexit
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator

import pytest
from support.scripted_model import ScriptedModel

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
DATA_HOME = tempfile.mkdtemp(prefix="tui-agent-tests-data-")
os.environ["XDG_DATA_HOME"] = DATA_HOME
"""The user data dir (sessions' own workspaces, hosted folders, named workspaces) of every
test and of the commands they start: a temporary folder, never the user's."""
atexit.register(shutil.rmtree, DATA_HOME, ignore_errors=True)
CACHE_HOME = tempfile.mkdtemp(prefix="tui-agent-tests-cache-")
os.environ["XDG_CACHE_HOME"] = CACHE_HOME
"""The user cache dir (the workspace quota's images and records) of each test process: its own,
so one xdist worker's start never recovers, and races with, an image another worker's test left
marked on purpose."""
atexit.register(shutil.rmtree, CACHE_HOME, ignore_errors=True)


@pytest.fixture(autouse=True)
def no_open_database_left() -> Iterator[None]:
    """A test leaves no SQLite connection open: each holds a thread that keeps the process
    from exiting (the xdist worker is then killed, its exit handlers never run: the workspace
    quota's images stay mounted)."""
    before = _database_threads()
    yield
    left = _database_threads() - before
    for thread in left:  # a closed connection's thread ends just after `close` returns
        thread.join(timeout=5)
    still = [thread for thread in left if thread.is_alive()]
    assert not still, f"{len(still)} aiosqlite connection(s) left open (close them)"


def _database_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if "_connection_worker_thread" in t.name}


@pytest.fixture
def server() -> Iterator[ScriptedModel]:
    """A running scripted model with an empty script (tests `push` replies)."""
    with ScriptedModel() as scripted:
        yield scripted
