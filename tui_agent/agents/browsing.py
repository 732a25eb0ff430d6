"""Chromium as the settings say: which start URLs it may load, its file:// folder, its sandbox.

Every session kind that opens a browser builds it here, so `--allow-file-urls` and
`--no-browser-sandbox` mean the same everywhere.
"""

from __future__ import annotations

from tui_agent.config import Settings
from tui_agent.web.browser import Browser, check_reachable
from tui_agent.web.navigation import check_navigable, file_folder


def check_start_url(url: str, settings: Settings) -> str:
    """`url` if a session may start on it: a scheme the settings allow, a server that answers
    (or a file that exists); else a BrowserError in one line."""
    return check_reachable(check_navigable(url, allow_file=settings.allow_file_urls))


def browser_for(settings: Settings, url: str | None, executable: str | None = None) -> Browser:
    """A Browser (not started) for pages from `url`: file:// beneath its folder only when the
    settings allow them, Chromium's sandbox as the settings say."""
    files = file_folder(url) if url and settings.allow_file_urls else None
    return Browser(
        executable or settings.chromium,
        files=files,
        sandbox=settings.browser_sandbox,
        user=settings.browser_user,
    )
