"""Lines of text, however many, drawn only where they are on screen.

A line-API scroll view: each frame renders the rows in view and nothing else, so 100,000
lines open and page as fast as 100. Lines are not wrapped (left and right scroll them; the
line-number gutter stays), and the occurrences of a searched string are marked,
the current one more strongly.
"""

from __future__ import annotations

from rich.segment import Segment
from textual.binding import Binding
from textual.content import Content
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tui_agent.tui.stream.matches import Hit

MATCH_STYLE = "on $warning 40%"
CURRENT_STYLE = "bold $background on $warning"


class TextView(ScrollView, can_focus=True):
    """`lines` shown lazily with a line-number gutter; `mark` marks a search's occurrences."""

    DEFAULT_CSS = """
    TextView {
        height: 1fr;
        scrollbar-size-vertical: 1;
    }
    """

    BINDINGS = [
        Binding("pageup", "page(-1)", "Page up", id="text.page-up", tooltip="Up a page"),
        Binding(
            "pagedown,space", "page(1)", "Page down", id="text.page-down", tooltip="Down a page"
        ),
        Binding("home", "edge(0)", "Top", id="text.home", tooltip="The first line", show=False),
        Binding("end", "edge(1)", "Bottom", id="text.end", tooltip="The last line", show=False),
    ]

    def action_page(self, direction: int) -> None:
        """Up (-1) or down (1) a page, at once (no animation, however far it goes)."""
        self.scroll_to(y=self.scroll_y + direction * self.size.height, animate=False)

    def action_edge(self, end: int) -> None:
        """To the first line (0) or the last (1), at once."""
        self.scroll_to(y=self.max_scroll_y if end else 0, animate=False)

    def __init__(self, lines: list[str], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines = lines
        self._gutter = len(str(len(lines))) + 3
        self._query = ""
        self._marked: dict[int, list[int]] = {}
        self._current: Hit | None = None
        widest = max(map(len, lines), default=0)
        self.virtual_size = Size(self._gutter + widest, len(lines))

    def mark(self, query: str, hits: list[Hit], current: Hit | None) -> None:
        """Mark the occurrences `hits` of `query` (`current` more strongly) and bring the
        current one into view."""
        self._query = query
        self._marked = {}
        for hit in hits:
            self._marked.setdefault(hit.line, []).append(hit.column)
        self._current = current
        if current is not None:
            self._bring_into_view(current, len(query))
        self.refresh()

    def _bring_into_view(self, hit: Hit, size: int) -> None:
        """Scroll (only as needed) so the occurrence `hit` is on screen, centred if it was
        not."""
        width, height = self.size.width - self._gutter, self.size.height
        x, y = self.scroll_x, self.scroll_y
        if not x <= hit.column <= hit.column + size <= x + width:
            x = max(0, hit.column + size - width // 2) if hit.column + size > width else 0
        if not y <= hit.line < y + height:
            y = max(0, hit.line - height // 2)
        self.scroll_to(x, y, animate=False, force=True, immediate=True)

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.size.width
        style = self.rich_style
        if index >= len(self.lines):
            return Strip.blank(width, style)
        gutter, size = self._gutter, len(self._query)
        text = self.lines[index][scroll_x : scroll_x + width]
        content = Content.assemble((f"{index + 1:>{gutter - 3}} │ ", "$text-muted"), text)
        for column in self._marked.get(index, ()):
            at = column - scroll_x
            if at + size <= 0 or at >= len(text):
                continue
            current = self._current is not None and self._current[1:] == (index, column)
            begin, end = gutter + max(0, at), gutter + min(len(text), at + size)
            content = content.stylize(CURRENT_STYLE if current else MATCH_STYLE, begin, end)
        rendered = content.render(self.visual_style, end="", parse_style=self._get_style)
        segments = [Segment(part, part_style.rich_style) for part, part_style in rendered]
        return Strip(segments).crop_extend(0, width, style).apply_offsets(scroll_x, index)
