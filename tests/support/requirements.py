"""Skip locally, fail under CI: tests that need Docker or Chromium must run there."""

import os

import pytest


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1")


def require(ok: bool, what: str, reason: str) -> None:
    """Skip the test (or under CI=true fail it) when `what` is not usable here."""
    if ok:
        return
    if in_ci():
        pytest.fail(f"{what} must work in CI: {reason}")
    pytest.skip(f"{what} unavailable: {reason}")


def require_chromium() -> None:
    from tui_agent.web.browser import BrowserError, find_chromium

    try:
        found = find_chromium()
    except BrowserError as exc:
        require(False, "Chromium", str(exc))
        return
    require(found is not None, "Chromium", "no chromium on PATH and TUI_AGENT_CHROMIUM unset")


def require_backend(name: str) -> None:
    """Skip (or under CI, fail) the test when sandbox backend `name` does not work here."""
    from tui_agent.sandbox.choose import backend_status

    status = backend_status(name)
    require(status.ok, f"the {name} sandbox", status.reason)


def sandbox_backend(docker_only: bool = False) -> str:
    """docker when it works here, else bubblewrap; under CI (or `docker_only`) docker must work."""
    from tui_agent.sandbox.choose import backend_status

    docker = backend_status("docker")
    if docker.ok:
        return "docker"
    require(not (docker_only or in_ci()), "the docker sandbox", docker.reason)
    bubblewrap = backend_status("bubblewrap")
    require(bubblewrap.ok, "a sandbox (docker or bubblewrap)", bubblewrap.reason)
    return "bubblewrap"


def in_chromium(test):
    """Mark `test` as a Chromium test run in its module's event loop (where the web
    fixtures' browser lives)."""
    return pytest.mark.chromium(pytest.mark.asyncio(loop_scope="module")(test))
