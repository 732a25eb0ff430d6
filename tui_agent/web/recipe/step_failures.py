"""How a recipe step fails: the item is skipped, the run stops, or the browser is gone."""

from __future__ import annotations


class HardFailure(Exception):
    """The recipe cannot go on (no list items, a page-level step failed): one clear line."""


class BrowserGone(Exception):
    """Chromium exited (crashed or was killed) while the recipe ran."""


class CommandFailed(Exception):
    """One command failed; inside an item that item is skipped, elsewhere the run stops."""


class ItemMoved(CommandFailed):
    """The item's element left the page (the list re-rendered) before it could be used."""


def seconds(ms: int) -> str:
    """Milliseconds as a reader wants them: `0.5 s`, `10 s`."""
    return f"{ms / 1000:g} s"


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
