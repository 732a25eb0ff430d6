"""One card's whole text on a screen of its own: every output line, the whole traceback,
result and tool outputs, paged (pageup/pagedown/home/end) and searched (`/`, then Enter or
`n` / `N`). It opens at once however long the text is (the view draws only the rows on
screen). Escape clears a search, then goes back to the stream.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static

from tui_agent.tui.stream.matches import Block, Hit, Matches
from tui_agent.tui.stream.search_bar import SearchBar
from tui_agent.tui.stream.text_view import TextView


class OutputScreen(Screen[None]):
    """`lines` of the card named `title`, whole."""

    DEFAULT_CSS = """
    OutputScreen > #output-title {
        height: 1;
        padding: 0 1;
        background: $panel;
    }
    OutputScreen > TextView {
        padding: 0 1;
    }
    """

    BINDINGS = [
        Binding(
            "escape",
            "clear_search",
            "Clear search",
            id="output.clear-search",
            tooltip="Clear the search and its marks",
        ),
        Binding("escape", "close", "Back", id="output.close", tooltip="Back to the stream"),
        Binding("slash", "search", "Search", id="output.search", tooltip="Search this text"),
        Binding("n", "step(1)", "Next", id="output.next", tooltip="Go to the next match"),
        Binding("N", "step(-1)", "Previous", id="output.previous", tooltip="The previous match"),
    ]

    def __init__(
        self, title: str, lines: list[str], query: str = "", at: Hit | None = None
    ) -> None:
        """`query`: a search to start with, its current match the first at or after `at`."""
        super().__init__(classes="output-screen")
        self.title_text = title
        self.lines = lines
        self.matches = Matches()
        self._block = Block(lines)
        self._start = (query, at)

    def compose(self) -> ComposeResult:
        count = len(self.lines)
        title = Content.assemble(
            (self.title_text, "bold"), (f"  {count:,} line{'s' if count != 1 else ''}", "dim")
        )
        yield Static(title, id="output-title")
        yield TextView(self.lines, id="output-text")
        yield SearchBar(id="output-search")
        yield Footer()

    def on_mount(self) -> None:
        self.view.focus()
        query, at = self._start
        if query:
            self.bar.open(query)
            self.view.focus()
            self.matches.search([self._block], query, at)
            self.call_after_refresh(self._show_matches)

    @property
    def view(self) -> TextView:
        return self.query_one(TextView)

    @property
    def bar(self) -> SearchBar:
        return self.query_one(SearchBar)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("step", "clear_search"):
            return self.bar.is_open
        if action == "search":  # in the input, `/` is text
            return not self.bar.has_focus_within
        return True

    def action_close(self) -> None:
        self.dismiss(None)

    def action_search(self) -> None:
        self.bar.open()

    def action_step(self, delta: int) -> None:
        self.matches.step(delta)
        self._show_matches()

    @on(SearchBar.Changed)
    def _searched(self, message: SearchBar.Changed) -> None:
        start = self.matches.current or Hit(0, self.view.scroll_offset.y, 0)
        self.matches.search([self._block], message.query, start)
        self._show_matches()
        self.refresh_bindings()

    @on(SearchBar.Stepped)
    def _stepped(self, message: SearchBar.Stepped) -> None:
        self.action_step(message.delta)

    @on(SearchBar.Left)
    def _search_left(self) -> None:
        self.view.focus()
        self.refresh_bindings()

    def action_clear_search(self) -> None:
        self.bar.close()
        self.matches.clear()
        self._show_matches()
        self.refresh_bindings()

    def _show_matches(self) -> None:
        matches = self.matches
        self.view.mark(matches.query, matches.hits, matches.current)
        self.bar.show_count(matches.count_text())
