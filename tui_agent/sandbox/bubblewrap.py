"""The `bubblewrap` backend: the kernel under `bwrap`, in fresh namespaces, with rlimits.

All namespaces are unshared (no network unless asked for, own pid space). bwrap runs as the
sandbox's host user, never root (workspace.sandbox_owner: nobody when root starts it), with an
empty bounding set and a seccomp filter like Docker's default (seccomp.py). The root file system
is read-only binds of /usr and the few /etc files Python needs; /tmp is a tmpfs of
`Limits.tmp_size_mb`; the workspace, capped by a quota where one can be made (quota.py), is the
one writable host folder, at /workspace; the host's files for the sandbox (folders/hosted.py)
are bound read-only at /toolcode. The environment is cleared: host variables (API keys
included) never reach the code. bwrap dies with this process, and the sandbox's whole pid
namespace with it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tui_agent.sandbox import seccomp
from tui_agent.sandbox.base import SandboxError, ensure_workspace
from tui_agent.sandbox.folders.hosted import HOSTED_PATH, HostedFolder, hosted_folder
from tui_agent.sandbox.folders.owner import sandbox_owner
from tui_agent.sandbox.limits import ADDRESS_SPACE_ENV, Limits
from tui_agent.sandbox.process import (
    KERNEL_FILE,
    MAX_RESULT_BYTES,
    Connection,
    KernelSandbox,
    SubprocessLauncher,
    kernel_command,
    signal_reason,
)
from tui_agent.sandbox.quota import SandboxQuota

PYTHON = "/usr/bin/python3"
KERNEL_PATH = "/opt/tui-agent/kernel.py"
WORKSPACE_PATH = "/workspace"
STAGE = Path("/run/tui-agent/workspace")
"""Where root binds the workspace, in the sandbox's own mount namespace, for bwrap to reach."""
HOSTED_STAGE = Path("/run/tui-agent/hosted")
"""Where root binds the hosted folder, likewise."""
INSTALL_HINT = "install it with `apt-get install bubblewrap`"
ROOT_TOOLS = ("unshare", "setpriv", "mount")
UTIL_HINT = "install them with `apt-get install util-linux mount`"
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
DEVICES = ("null", "zero", "full", "random", "urandom")
"""The devices a sandbox gets. Not bwrap's `--dev`: its pseudo-terminals need a second user
namespace, whose uid_map would show the sandbox user as that namespace's root."""
DEVICE_LINKS = {
    "fd": "/proc/self/fd",
    "stdin": "/proc/self/fd/0",
    "stdout": "/proc/self/fd/1",
    "stderr": "/proc/self/fd/2",
}
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
    """Starts bwrap as the sandbox's host user with the kernel and the seccomp filter handed
    over as open descriptors; holds the workspace's quota from the first start to `close`.

    As root, bwrap is started through `unshare` and `setpriv`: in a mount namespace of its own,
    the workspace and the hosted folder are bound at STAGE and HOSTED_STAGE, paths the sandbox
    user can reach whatever the folders above them allow, and then the ids drop to the sandbox
    user's. The binds go away with the namespace.
    """

    def __init__(
        self,
        bwrap: str,
        kernel: list[str],
        *,
        workspace: Path,
        hosted: HostedFolder,
        network: bool,
        limits: Limits,
    ) -> None:
        env = dict(SANDBOX_ENV)
        super().__init__(kernel, cwd=Path("/"), env=env, max_processes=limits.processes)
        self.bwrap = bwrap
        self.workspace = workspace
        self.hosted = hosted
        self.network = network
        self.limits = limits
        self.owner = sandbox_owner(workspace)
        self.quota = SandboxQuota(workspace, limits.workspace_quota_mb, self.owner)

    async def spawn(self) -> Connection:
        await self.quota.take()
        root = os.geteuid() == 0
        if root:
            STAGE.mkdir(parents=True, exist_ok=True)
            HOSTED_STAGE.mkdir(parents=True, exist_ok=True)
        kernel_fd = os.open(KERNEL_FILE, os.O_RDONLY | os.O_CLOEXEC)
        seccomp_fd = seccomp.program_fd()
        try:
            options = Options(
                workspace=STAGE if root else self.workspace,
                hosted=HOSTED_STAGE if root else self.hosted.host,
                owner=self.owner,
                kernel_fd=kernel_fd,
                seccomp_fd=seccomp_fd,
                network=self.network,
                limits=self.limits,
            )
            argv = [*bwrap_command(self.bwrap, options), *self.argv]
            if root:
                binds = {self.workspace: STAGE, self.hosted.host: HOSTED_STAGE}
                argv = [*as_sandbox_user(binds, self.owner), *argv]
            return await self._exec(argv, pass_fds=(kernel_fd, seccomp_fd))
        finally:
            os.close(kernel_fd)
            os.close(seccomp_fd)

    def describe_exit(self, code: int) -> str:
        """bwrap reports a sandboxed process killed by signal N as exit code 128 + N."""
        if code > 128:
            return signal_reason(code - 128)
        return super().describe_exit(code)

    async def close(self) -> None:
        await super().close()
        await self.quota.release()


@dataclass(frozen=True)
class Options:
    """What one bwrap command line is made of."""

    workspace: Path
    hosted: Path
    owner: tuple[int, int]
    kernel_fd: int
    seccomp_fd: int
    network: bool
    limits: Limits


class BubblewrapSandbox(KernelSandbox):
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
        seccomp.program()  # fails here, with its reason, where no filter can be built
        self.limits = limits or Limits()
        self.workspace = ensure_workspace(workspace)
        self.hosted = hosted_folder(self.workspace)
        kernel = kernel_command(python, KERNEL_PATH, self.limits, max_result_bytes)
        self.launcher: BubblewrapLauncher = BubblewrapLauncher(
            found,
            kernel,
            workspace=self.workspace,
            hosted=self.hosted,
            network=network,
            limits=self.limits,
        )
        super().__init__(self.launcher, max_result_bytes=max_result_bytes)


def as_sandbox_user(binds: dict[Path, Path], owner: tuple[int, int]) -> list[str]:
    """argv prefix (as root): bind each host folder of `binds` at its stage in a new mount
    namespace, then run the rest as host user `owner` (uid, gid) with no supplementary
    groups."""
    uid, gid = owner
    bind_then_run = 'while [ "$1" != -- ]; do mount --bind "$1" "$2" || exit 1; shift 2; done'
    bind_then_run += '; shift; exec "$@"'
    argv = ["unshare", "--mount", "--propagation", "private", "sh", "-c", bind_then_run]
    argv.append("tui-agent-sandbox")
    for source, stage in binds.items():
        argv += [str(source), str(stage)]
    argv.append("--")
    return [*argv, "setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--"]


def bwrap_command(bwrap: str, options: Options) -> list[str]:
    """The bwrap argv up to the command it runs inside the sandbox.

    The sandbox's ids are its host ids (`options.owner`), so its one user namespace maps them
    to themselves and to nothing else: root is not mapped at all.
    """
    uid, gid = (str(part) for part in options.owner)
    argv = [bwrap, "--unshare-all", "--unshare-user", "--uid", uid, "--gid", gid]
    argv += ["--die-with-parent", "--new-session", "--hostname", "sandbox", "--cap-drop", "ALL"]
    argv += ["--seccomp", str(options.seccomp_fd)]
    if options.network:
        argv.append("--share-net")
    argv += ["--ro-bind", "/usr", "/usr"]
    for name in ROOT_LINKS:
        path = Path("/", name)
        if path.is_symlink():
            argv += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            argv += ["--ro-bind", str(path), str(path)]
    for name in ETC_FILES + (NETWORK_ETC_FILES if options.network else ()):
        argv += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    for path in sorted(Path("/etc").glob("python3*")):
        argv += ["--ro-bind", str(path), str(path)]
    argv += ["--size", str(options.limits.tmp_size_mb << 20), "--tmpfs", "/tmp"]
    argv += ["--proc", "/proc", "--tmpfs", "/dev", "--tmpfs", "/dev/shm"]
    for name in DEVICES:
        argv += ["--dev-bind", f"/dev/{name}", f"/dev/{name}"]
    for name, target in DEVICE_LINKS.items():
        argv += ["--symlink", target, f"/dev/{name}"]
    argv += ["--bind", str(options.workspace), WORKSPACE_PATH]
    argv += ["--ro-bind", str(options.hosted), HOSTED_PATH]
    argv += ["--ro-bind-data", str(options.kernel_fd), KERNEL_PATH]
    argv += ["--chdir", WORKSPACE_PATH, "--clearenv"]
    for key, value in SANDBOX_ENV.items():
        argv += ["--setenv", key, value]
    return argv


def bubblewrap_status(python: str = PYTHON) -> tuple[bool, str]:
    """(ok, reason): whether bwrap, a system Python and the seccomp filter are there (without
    starting a sandbox)."""
    bwrap = shutil.which("bwrap")
    if not bwrap:
        return False, f"bwrap not found; {INSTALL_HINT}"
    if not Path(python).is_file():
        return False, f"no system Python at {python} (bubblewrap runs the kernel with it)"
    filtered, why = seccomp.seccomp_status()
    if not filtered:
        return False, why
    missing = [tool for tool in ROOT_TOOLS if not shutil.which(tool)]
    if os.geteuid() == 0 and missing:
        return False, f"{', '.join(missing)} missing (bubblewrap drops root with them): {UTIL_HINT}"
    try:
        version = subprocess.run(
            [bwrap, "--version"], capture_output=True, text=True, timeout=10, check=False
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"{bwrap} does not run: {exc}"
    return True, f"{version or 'bwrap'} at {bwrap}, Python {python}, {why}"
