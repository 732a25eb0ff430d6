"""Which pages Chromium may load: http(s), and file:// beneath one folder when the user allows.

Held in three places:

- `check_navigable(url, allow_file)` before a session starts: one line for the user.
- `goto(page, url)` before every navigation tui-agent makes (a start page, a list to return
  to). data:, chrome://, javascript:, view-source: and about: pages other than about:blank
  reach Chromium no other way: Chromium itself refuses them to pages' links, scripts and
  redirects.
- `guard(context, files)`, a route inside the browser: every file:// request (a goto, a
  page's link, frame or stylesheet) is refused unless it lies beneath `files`, and then
  tui-agent serves it itself: a regular file, reached without following a link out of the
  folder, size-capped, read off the event loop. So an allowed page works even where the
  unprivileged user Chromium runs as (see `chromium_user`) cannot read it, and no page reads
  anything else.
"""

from __future__ import annotations

import asyncio
import contextlib
import mimetypes
import os
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Literal
from urllib.parse import unquote, urlsplit

from tui_agent.web.browser_error import BrowserError

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Page, Response, Route

WEB_SCHEMES = ("http", "https")
BLANK = "about:blank"
FILE_REQUESTS = re.compile(r"^file:")
MAX_FILE_BYTES = 64 * 1024 * 1024
"""The largest file:// file served to a page."""
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_SHOWN = 200

WaitUntil = Literal["commit", "domcontentloaded", "load", "networkidle"]


class NavigationRefused(BrowserError):
    """A URL tui-agent does not load: not http(s), or file:// without --allow-file-urls."""


def check_navigable(url: str, allow_file: bool = False) -> str:
    """`url` when a page may be loaded from it (http(s), about:blank, and file:// if
    `allow_file`), else NavigationRefused saying why in one line."""
    shown = repr(url if len(url) <= _SHOWN else url[:_SHOWN] + "…")
    if any(ord(char) <= 0x20 or ord(char) == 0x7F for char in url):
        raise NavigationRefused(f"not a loadable URL: {shown} (spaces or control characters)")
    if url == BLANK:
        return url
    match = _SCHEME.match(url)
    scheme = match.group(1).lower() if match else ""
    if scheme in WEB_SCHEMES and urlsplit(url).hostname:
        return url
    if scheme == "file":
        if not allow_file:
            raise NavigationRefused(
                f"not a loadable URL: {shown} (file:// pages are loaded only with "
                "--allow-file-urls)"
            )
        if file_path(url) is not None:
            return url
    raise NavigationRefused(
        f"not a loadable URL: {shown} (expected http:// or https://, or file:// with "
        "--allow-file-urls)"
    )


def file_path(url: str) -> Path | None:
    """The absolute local path a file:// URL names (None: not file://, another host, no
    path)."""
    parts = urlsplit(url)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return None
    return Path(unquote(parts.path)) if parts.path.startswith("/") else None


def file_folder(url: str) -> Path | None:
    """The folder of a file:// URL's page, the one its pages are served from (None: not a
    file:// URL)."""
    path = file_path(url)
    return path.parent if path is not None else None


async def goto(
    page: Page, url: str, *, timeout: float, wait_until: WaitUntil | None = None
) -> Response | None:
    """`page.goto(url)` once `url` has a scheme Chromium may be sent to; a URL refused is a
    failed load (a Playwright Error), as any other is to its callers. Whether a file:// URL
    is served is the route's decision (see `guard`)."""
    from playwright.async_api import Error

    try:
        check_navigable(url, allow_file=True)
    except NavigationRefused as refused:
        raise Error(str(refused)) from None
    return await page.goto(url, timeout=timeout, wait_until=wait_until)


async def guard(context: BrowserContext, files: Path | None) -> None:
    """Route the context's file:// requests: served from beneath `files`, else refused."""
    await context.route(FILE_REQUESTS, _FileRoute(files))


class _FileRoute:
    """Serves file:// requests beneath one folder; refuses every other one."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder

    async def __call__(self, route: Route) -> None:
        from playwright.async_api import Error

        path = file_path(route.request.url)
        with contextlib.suppress(Error):  # the page may close while a file is read
            if self.folder is None or path is None:
                await route.abort("accessdenied")
                return
            try:
                body = await asyncio.to_thread(read_beneath, self.folder, path)
            except PermissionError:
                await route.abort("accessdenied")
                return
            except (OSError, ValueError, RuntimeError):  # missing, not a file, a link loop
                await route.abort("failed")
                return
            kind = mimetypes.guess_type(path.name)[0] or "text/plain"
            await route.fulfill(status=200, body=body, content_type=kind)


def read_beneath(folder: Path, path: Path) -> bytes:
    """The bytes of regular file `path` if it lies beneath `folder` once its links are
    resolved (else PermissionError), opened one component at a time without following a
    link: one swapped in after the check is an error, not a way out."""
    try:
        inside = path.resolve().relative_to(folder.resolve())
    except ValueError:
        raise PermissionError(f"{path} is not beneath {folder}") from None
    if not inside.parts:
        raise IsADirectoryError(f"{path} is the folder itself")
    nofollow = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(folder.resolve(), nofollow | os.O_DIRECTORY)
    try:
        for part in inside.parts[:-1]:
            parent, fd = fd, os.open(part, nofollow | os.O_DIRECTORY, dir_fd=fd)
            os.close(parent)
        parent, fd = fd, os.open(inside.parts[-1], nofollow | os.O_NONBLOCK, dir_fd=fd)
        os.close(parent)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            raise OSError(f"{path} is not a regular file of at most {MAX_FILE_BYTES} bytes")
        with os.fdopen(fd, "rb", closefd=False) as file:
            return file.read(MAX_FILE_BYTES)
    finally:
        os.close(fd)
