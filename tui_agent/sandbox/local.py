"""The `local` backend: the runner as a plain subprocess of this one, with rlimits only.

It is not isolated: the code sees the host's files, network and environment (minus variables
whose names look like secrets). It is only used when asked for by name.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from tui_agent.sandbox.base import ensure_workspace
from tui_agent.sandbox.limits import ADDRESS_SPACE_ENV, Limits
from tui_agent.sandbox.process import (
    MAX_RESULT_BYTES,
    RUNNER_FILE,
    RunnerSandbox,
    SubprocessLauncher,
    runner_command,
)

SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE", re.IGNORECASE)


class LocalSandbox(RunnerSandbox):
    """Runs code in a subprocess on the host, in `workspace`, under rlimits (NOT isolated).

    `network` is accepted so every backend is built alike; the local backend cannot take the
    network away.
    """

    name = "local"
    isolated = False

    def __init__(
        self,
        *,
        workspace: Path,
        network: bool = False,
        limits: Limits | None = None,
        max_result_bytes: int = MAX_RESULT_BYTES,
        python: str | None = None,
    ) -> None:
        self.limits = limits or Limits()
        self.workspace = ensure_workspace(workspace)
        python = python or sys.executable
        argv = runner_command(python, str(RUNNER_FILE), self.limits, max_result_bytes)
        launcher = SubprocessLauncher(
            argv, cwd=self.workspace, env=local_env(), max_processes=self.limits.processes
        )
        super().__init__(launcher, max_result_bytes=max_result_bytes)


def local_env() -> dict[str, str]:
    """This process's environment without secret-looking variables, set up for the runner."""
    env = {name: value for name, value in os.environ.items() if not SECRET_NAME.search(name)}
    env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1", MPLBACKEND="Agg")
    return {**ADDRESS_SPACE_ENV, **env}
