"""The one guard at the mount points of a session screen's widgets.

A screen can go at any moment (Escape, quit) while its widgets are brought up to date: Textual
then removes its widgets leaf first, and a widget mounted into a parent already on its way
out is never attached at all. Everything that mounts goes through here, so nothing mounts
into a parent that is not on a screen any more: `mount_into` for our widgets, and
`update_markdown` for Markdown (which mounts its blocks itself, after parsing off the loop).

How many of a long stream's newest cards to mount is decided here too (`first_mounted`,
`grown_window`): a stream no longer than a whole window is mounted whole; of a longer one, a
pane mounts the newest few, and more only while they do not fill it. A jump to the end of a
long session then mounts what can be seen rather than a whole window of cards, and the pane
shows what it showed with the whole window mounted (scrolled to the newest).
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.widget import MountError, Widget
from textual.widgets import Markdown

FIRST_WINDOW = 8
"""Newest entries a pane mounts of a long stream at first (doubled while they do not fill
it)."""


def on_screen(widget: Widget) -> bool:
    """Whether `widget` is attached to a running app and neither it nor any of its
    ancestors (its screen included) is being removed."""
    return widget.is_attached and not any(
        node._pruning or node._closing
        for node in widget.ancestors_with_self
        if isinstance(node, Widget)
    )


async def mount_into(
    parent: Widget,
    widgets: Sequence[Widget],
    *,
    before: Widget | None = None,
    after: Widget | None = None,
) -> bool:
    """Mount `widgets` into `parent` (before or after one of its children) while `parent`
    is on a screen; False, and nothing mounted, once it is not."""
    if not widgets:
        return on_screen(parent)
    if not on_screen(parent):
        return False
    await parent.mount_all(widgets, before=before, after=after)
    return True


async def update_markdown(markdown: Markdown, text: str) -> None:
    """Show `text` in `markdown` while it is on a screen. Markdown parses off the loop and
    mounts afterwards: a screen that went in between ends the update quietly (a MountError
    while it is still on a screen is a mistake and raises)."""
    if not on_screen(markdown):
        return
    try:
        await markdown.update(text)
    except MountError:
        if on_screen(markdown):
            raise


def first_mounted(total: int, window: int, whole: int) -> int:
    """The index of the first of `total` entries to mount: 0 while there are at most `whole`
    (a short stream is mounted whole), else that of the newest `window`."""
    return 0 if total <= whole else max(0, total - window)


def grown_window(pane: Widget, window: int, first: int, whole: int) -> int:
    """The number of newest entries `pane` should mount: `window` doubled (up to `whole`)
    while its cards do not fill it and earlier entries are left out (`first` > 0)."""
    if first > 0 and pane.max_scroll_y == 0 and window < whole:
        return min(whole, window * 2)
    return window
