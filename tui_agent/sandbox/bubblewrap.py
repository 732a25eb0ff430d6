"""The `bubblewrap` backend: the runner under `bwrap`, in fresh namespaces, with rlimits.

All namespaces are unshared (no network unless asked for, own pid space, user 65534); the root
file system is read-only binds of /usr and the few /etc files Python needs; /tmp is a tmpfs of
`Limits.tmp_size_mb`; the workspace is the one writable host folder, at /workspace. The
environment is cleared: host variables (API keys included) never reach the code. bwrap dies
with this process, and the sandbox's whole pid namespace with it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tui_agent.sandbox.base import SandboxError, ensure_workspace
from tui_agent.sandbox.limits import ADDRESS_SPACE_ENV, Limits
from tui_agent.sandbox.process import (
    MAX_RESULT_BYTES,
    RUNNER_FILE,
    RunnerSandbox,
    SubprocessLauncher,
    runner_command,
    signal_reason,
)

PYTHON = "/usr/bin/python3"
RUNNER_PATH = "/opt/tui-agent/runner.py"
WORKSPACE_PATH = "/workspace"
SANDBOX_ID = "65534"
INSTALL_HINT = "install it with `apt-get install bubblewrap`"
ROOT_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
ETC_FILES = (
    "alternatives",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "mime.types",
    "matplotlibrc",
    "fonts",
    "ssl",
    "ca-certificates",
)
NETWORK_ETC_FILES = ("resolv.conf", "hosts", "nsswitch.conf", "gai.conf", "host.conf")
SANDBOX_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "USER": "sandbox",
    "LANG": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUNBUFFERED": "1",
    "MPLBACKEND": "Agg",
    "MPLCONFIGDIR": "/tmp/matplotlib",
    **ADDRESS_SPACE_ENV,
}


class BubblewrapLauncher(SubprocessLauncher):
    """bwrap reports a sandboxed process killed by signal N as exit code 128 + N."""

    def describe_exit(self, code: int) -> str:
        if code > 128:
            return signal_reason(code - 128)
        return super().describe_exit(code)


class BubblewrapSandbox(RunnerSandbox):
    """Runs code under bubblewrap: isolated from the host's files, network and environment."""

    name = "bubblewrap"
    isolated = True

    def __init__(
        self,
        *,
        workspace: Path,
        network: bool = False,
        limits: Limits | None = None,
        max_result_bytes: int = MAX_RESULT_BYTES,
        python: str = PYTHON,
        bwrap: str | None = None,
    ) -> None:
        found = bwrap or shutil.which("bwrap")
        if not found:
            raise SandboxError(f"bubblewrap (bwrap) is not installed; {INSTALL_HINT}")
        if not Path(python).is_file():
            raise SandboxError(f"bubblewrap needs a system Python at {python}; it is missing")
        self.limits = limits or Limits()
        self.workspace = ensure_workspace(workspace)
        argv = bwrap_command(found, self.workspace, network, self.limits)
        argv += runner_command(python, RUNNER_PATH, self.limits, max_result_bytes)
        # bwrap itself is PID 1 inside the sandbox and its /proc/1/environ is readable there:
        # start it with the sandbox's minimal environment, never the host's.
        launcher = BubblewrapLauncher(
            argv, env=dict(SANDBOX_ENV), max_processes=self.limits.processes
        )
        super().__init__(launcher, max_result_bytes=max_result_bytes)


def bwrap_command(bwrap: str, workspace: Path, network: bool, limits: Limits) -> list[str]:
    """The bwrap argv up to the command it runs inside the sandbox."""
    argv = [bwrap, "--unshare-all", "--unshare-user", "--uid", SANDBOX_ID, "--gid", SANDBOX_ID]
    argv += ["--die-with-parent", "--new-session", "--hostname", "sandbox"]
    if network:
        argv.append("--share-net")
    argv += ["--ro-bind", "/usr", "/usr"]
    for name in ROOT_LINKS:
        path = Path("/", name)
        if path.is_symlink():
            argv += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            argv += ["--ro-bind", str(path), str(path)]
    for name in ETC_FILES + (NETWORK_ETC_FILES if network else ()):
        argv += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    for path in sorted(Path("/etc").glob("python3*")):
        argv += ["--ro-bind", str(path), str(path)]
    argv += ["--size", str(limits.tmp_size_mb << 20), "--tmpfs", "/tmp"]
    argv += ["--proc", "/proc", "--dev", "/dev"]
    argv += ["--bind", str(workspace), WORKSPACE_PATH, "--ro-bind", str(RUNNER_FILE), RUNNER_PATH]
    argv += ["--chdir", WORKSPACE_PATH, "--clearenv"]
    for key, value in SANDBOX_ENV.items():
        argv += ["--setenv", key, value]
    return argv


def bubblewrap_status(python: str = PYTHON) -> tuple[bool, str]:
    """(ok, reason): whether bwrap and a system Python are there (without starting one)."""
    bwrap = shutil.which("bwrap")
    if not bwrap:
        return False, f"bwrap not found; {INSTALL_HINT}"
    if not Path(python).is_file():
        return False, f"no system Python at {python} (bubblewrap runs the runner with it)"
    try:
        version = subprocess.run(
            [bwrap, "--version"], capture_output=True, text=True, timeout=10, check=False
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"{bwrap} does not run: {exc}"
    return True, f"{version or 'bwrap'} at {bwrap}, Python {python}"
