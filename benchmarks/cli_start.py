"""How long a light command takes to start: `tui-agent sessions list` on an empty database
against the interpreter's own start (`python -c pass`), both timed here, alternating.

Every command line pays this before it does anything (and so does every CLI test); the
modules a command does not use (the sandboxes, Chromium's driver, the refinement agents) are
loaded only by the commands that use them.

    .venv/bin/python benchmarks/cli_start.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def timed(argv: list[str]) -> float:
    began = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        db = str(Path(folder) / "sessions.db")
        command = [sys.executable, "-m", "tui_agent", "--db", db, "sessions", "list"]
        floor = [sys.executable, "-c", "pass"]
        timed(command)  # the database is created once, outside the figures
        ours, bare = [], []
        for _ in range(args.repeat):
            ours.append(timed(command))
            bare.append(timed(floor))
    command_s, floor_s = statistics.median(ours), statistics.median(bare)
    print(f"tui-agent sessions list: {command_s * 1000:.0f} ms (median of {args.repeat})")
    print(f"python -c pass:          {floor_s * 1000:.0f} ms")
    print(f"ratio: {command_s / floor_s:.1f}x the interpreter's own start")


if __name__ == "__main__":
    main()
