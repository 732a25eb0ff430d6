"""The `local` backend: the kernel as a plain subprocess of this one, with rlimits only.

It is not isolated: the code sees the host's files and network. Of the environment it gets only
an allowlist (PASSED_ENV: where programs and home are, locale and time zone, the terminal type,
and what Python itself reads to start), so a `DATABASE_URL` or an API key of the host never
reaches it. It is only used when asked for by name.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tui_agent.sandbox.base import ensure_workspace
from tui_agent.sandbox.limits import ADDRESS_SPACE_ENV, Limits
from tui_agent.sandbox.process import (
    KERNEL_FILE,
    MAX_RESULT_BYTES,
    KernelSandbox,
    SubprocessLauncher,
    kernel_command,
)

PASSED_ENV = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "TMPDIR",
        "XDG_CACHE_HOME",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TERM",
        "PYTHONPATH",
        "PYTHONHOME",
        "VIRTUAL_ENV",
        "LD_LIBRARY_PATH",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
    }
)
"""The host variables the local backend passes on, with every LC_* one; no other."""


class LocalSandbox(KernelSandbox):
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
        argv = kernel_command(python, str(KERNEL_FILE), self.limits, max_result_bytes)
        launcher = SubprocessLauncher(
            argv, cwd=self.workspace, env=local_env(), max_processes=self.limits.processes
        )
        super().__init__(launcher, max_result_bytes=max_result_bytes)


def local_env() -> dict[str, str]:
    """The allowlisted part of this process's environment, set up for the kernel."""
    env = {
        name: value
        for name, value in os.environ.items()
        if name in PASSED_ENV or name.startswith("LC_")
    }
    env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1", MPLBACKEND="Agg")
    return {**ADDRESS_SPACE_ENV, **env}
