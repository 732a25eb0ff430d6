"""How Chromium is started: its own sandbox on, as an unprivileged user when we are root.

Chromium refuses to start its sandbox as root, and without one a page that breaks the
renderer runs as root. So as root Playwright is pointed at a small wrapper, written for each
launch into a private folder: it hands Playwright's fresh profile folder to the browser user
(`nobody` unless TUI_AGENT_BROWSER_USER names another) and execs Chromium through `setpriv`
as that user, keeping the pipe Playwright talks over (--remote-debugging-pipe, fds 3 and 4).
Chromium then builds its sandbox as for any user (user namespaces, seccomp-bpf), and the
whole process tree runs without root's rights: it cannot read root's files. As another user
nothing is wrapped; the sandbox is simply not turned off. `sandbox=False` (the user's
--no-browser-sandbox) is the old way: Chromium as we are, with --no-sandbox.

Either way Chromium gets a short list of environment variables, not ours (API keys included).
"""

from __future__ import annotations

import os
import pwd
import shlex
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tui_agent.web.browser_error import BrowserError

BROWSER_USER = "nobody"
KEPT_ENV = ("PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TMPDIR")
KEPT_ENV_PREFIXES = ("LC_", "FONTCONFIG_")
NO_SANDBOX_HINT = "pass --no-browser-sandbox to run Chromium without its sandbox"

WRAPPER = """#!/bin/sh
# Written by tui-agent (tui_agent/web/chromium_user.py): Chromium as {user}, its sandbox on.
for arg in "$@"; do
  case "$arg" in --user-data-dir=*) profile="${{arg#--user-data-dir=}}" ;; esac
done
[ -n "$profile" ] || {{ echo "tui-agent: Chromium was given no --user-data-dir" >&2; exit 1; }}
{chown} -R {uid}:{gid} -- "$profile" || exit 1
HOME="$profile"
export HOME
exec {setpriv} --reuid={uid} --regid={gid} --clear-groups --inh-caps=-all -- {chromium} "$@"
"""


@dataclass
class Launch:
    """What Playwright starts and how: `executable` with `chromium_sandbox=sandbox`, `env`."""

    executable: str
    sandbox: bool
    env: dict[str, str] = field(default_factory=dict)
    user: str | None = None
    """The user Chromium runs as when it is not the one we run as."""
    folder: Path | None = None
    """The wrapper's folder, removed by `close`."""

    def close(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None


def plan_launch(chromium: str, *, sandbox: bool = True, user: str = BROWSER_USER) -> Launch:
    """How to start `chromium`: through the wrapper as `user` when we are root and want its
    sandbox, else as it is (BrowserError when the user or a tool it needs is missing)."""
    env = browser_env()
    if not sandbox or os.geteuid() != 0:
        return Launch(chromium, sandbox, env)
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        raise BrowserError(
            f"the browser user {user!r} does not exist: set TUI_AGENT_BROWSER_USER to an "
            f"unprivileged user, or {NO_SANDBOX_HINT}"
        ) from None
    if entry.pw_uid == 0:
        raise BrowserError(f"the browser user {user!r} is root: name an unprivileged user")
    tools = {name: shutil.which(name) for name in ("setpriv", "chown")}
    if None in tools.values():
        missing = ", ".join(name for name, path in tools.items() if path is None)
        raise BrowserError(
            f"{missing} (util-linux, coreutils) is needed to run Chromium as {user}: "
            f"install it, or {NO_SANDBOX_HINT}"
        )
    folder = Path(tempfile.mkdtemp(prefix="tui-agent-chromium-"))
    wrapper = folder / "chromium"
    wrapper.write_text(
        WRAPPER.format(
            user=user,
            uid=entry.pw_uid,
            gid=entry.pw_gid,
            chown=shlex.quote(str(tools["chown"])),
            setpriv=shlex.quote(str(tools["setpriv"])),
            chromium=shlex.quote(chromium),
        ),
        encoding="utf-8",
    )
    wrapper.chmod(0o700)
    return Launch(str(wrapper), True, env, user=user, folder=folder)


def browser_env() -> dict[str, str]:
    """The variables Chromium needs from ours (locale, fonts, PATH), and nothing else."""
    return {
        key: value
        for key, value in os.environ.items()
        if key in KEPT_ENV or key.startswith(KEPT_ENV_PREFIXES)
    }
