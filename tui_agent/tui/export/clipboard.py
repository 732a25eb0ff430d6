"""Copy to the system clipboard (OSC 52: works over SSH), and say in a toast what was copied:
a terminal without OSC 52 copies nothing, and the toast then still shows the text's start."""

from __future__ import annotations

from typing import Any

from textual.app import App

PREVIEW = 60
"""Characters of the copied text the toast shows."""


def preview(text: str, limit: int = PREVIEW) -> str:
    """The start of `text` on one line (each run of whitespace as one space), cut to `limit`
    characters ("…" says there is more)."""
    line = " ".join(text[: limit * 4].split())
    if len(line) > limit:
        return line[: limit - 1] + "…"
    return line + ("…" if len(text) > limit * 4 else "")


def copy_text(app: App[Any], text: str, what: str) -> None:
    """Put `text` on the clipboard; the toast names `what` it is and how long."""
    app.copy_to_clipboard(text)
    count = len(text)
    size = f"{count:,} character{'' if count == 1 else 's'}"
    app.notify(preview(text) or "(empty)", title=f"Copied {what} · {size}", markup=False)
