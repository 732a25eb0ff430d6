"""A `dask-local` cluster, started by the batch itself: from inside the TUI (as the new-session
form starts one), and stopped by a Ctrl+C from the terminal (which reaches its workers too).

Textual replaces `sys.stderr` with a capture whose `fileno()` is -1; multiprocessing hands
that to the first process it starts, and the cluster used to fail with "Nanny failed to
start". That app runs in a fresh interpreter: in this one an earlier test may already have
started multiprocessing's resource tracker, which would hide the fault."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from batch_support import Cli, HeldPage, read_store, recipe_batch, write_urls

from tui_agent.demo_site import DemoSite

SCRIPT = textwrap.dedent(
    """
    import asyncio, sys

    from textual.app import App

    from tui_agent.batch.engines import DaskEngine


    async def main() -> None:
        async with App().run_test():
            assert sys.stderr.fileno() == -1, "not under Textual's capture"
            engine = DaskEngine(workers=1)
            try:
                await engine.start()
                print("started with", engine.slots, "slot", file=sys.__stdout__)
            finally:
                await engine.close()


    if __name__ == "__main__":
        asyncio.run(main())
    """
)


def test_a_local_cluster_starts_inside_the_app() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "started with 1 slot"


@pytest.mark.chromium
def test_ctrl_c_from_the_terminal_says_interrupted_once(
    cli: Cli, demo: DemoSite, held: HeldPage
) -> None:
    """The workers are in the terminal's process group: they ignore its Ctrl+C, and the
    driver alone answers it (no worker's KeyboardInterrupt over the batch's lines)."""
    path, _ = write_urls(cli.folder, demo, 4, held)
    with cli.start(*recipe_batch(path, "dask-local:2"), group=True) as running:
        assert held.arrived.wait(timeout=180), "item 3 never loaded its page"
        running.interrupt_group()
        code, errors = running.finish()
    held.release.set()
    assert code == 130, errors
    assert errors.strip().splitlines()[-1] == "tui-agent: interrupted", errors
    for noise in ("Traceback", "KeyboardInterrupt", "never retrieved", "Error"):
        assert noise not in errors, errors
    stopped = read_store(cli.db)
    assert stopped.batch.status == "cancelled"
