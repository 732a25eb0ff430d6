"""A model's prose (a thought, a final answer) in the cheapest widget that shows it right.

Text Markdown would show unchanged (one line, no markup) goes in a `Static`: a `Markdown`
view parses off the loop and mounts a widget per block, which costs a card several times
its other parts when many cards mount at once (a jump to the end of a long replay). Text
with anything Markdown reads as markup goes in a `Markdown` view. A text that changes kind
as it grows (streamed tokens reaching a `**`) gets a new view in place of the old one; a
streamed token's trailing space changes nothing (Markdown drops it too).
"""

from __future__ import annotations

import re

from textual.content import Content
from textual.widget import Widget
from textual.widgets import Markdown, Static

from tui_agent.tui.widgets.mounting import mount_into, update_markdown

ProseView = Static | Markdown

_MARKUP = re.compile(
    r"""[\n\t*_`#\[\]<>|~\\&]  # breaks, emphasis, code, headings, links, HTML, tables, escapes
    | \s\s | ^\s             # whitespace Markdown folds or strips
    | ^(?:[-+=]|\d+[.)])     # a list item or a thematic break
    | \.\w | ://             # what linkify makes a link (file.py, www.x.org, https://...)
    | @                      # an address linkify makes a link
    """,
    re.VERBOSE,
)


def plain_text(text: str) -> str | None:
    """`text` as Markdown shows it when that is the text itself: one line that nothing in it
    turns into markup, links or folded whitespace (trailing whitespace, which Markdown drops,
    dropped); None when Markdown would show it otherwise."""
    shown = text.rstrip()
    return None if _MARKUP.search(shown) else shown


def prose_view(text: str, classes: str) -> ProseView:
    """A view of `text`: a `Static` when it is plain, else a `Markdown` view."""
    plain = plain_text(text)
    if plain is None:
        return Markdown(text, classes=classes)
    return Static(Content(plain), classes=classes)


async def show_prose(view: ProseView, text: str) -> ProseView:
    """Show `text` in `view`, or in a new view of the other kind mounted in its place when
    `text` needs it; the view that shows it (`view` itself once its screen is gone)."""
    plain = plain_text(text)
    if plain is not None and isinstance(view, Static):
        view.update(Content(plain))
        return view
    if plain is None and isinstance(view, Markdown):
        await update_markdown(view, text)
        return view
    parent = view.parent
    replacement = prose_view(text, " ".join(view.classes))
    replacement.display = view.display
    if not isinstance(parent, Widget) or not await mount_into(parent, [replacement], after=view):
        return view
    await view.remove()
    return replacement
