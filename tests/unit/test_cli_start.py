"""The command line starts without the parts a light command does not use (benchmarks/
cli_start.py times it): the sandboxes, Chromium's driver and the refinement agents load only
in the commands that run them."""

import json
import subprocess
import sys

HEAVY = ("tui_agent.agents.refine", "tui_agent.sandbox.choose", "playwright", "docker")


def test_parsing_a_command_line_loads_no_sandbox_browser_or_agent():
    probe = (
        "import json, sys, tui_agent.cli\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert json.loads(loaded.stdout) == []
