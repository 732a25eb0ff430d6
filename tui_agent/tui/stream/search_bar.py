"""The search bar: `/`, the string searched for, and where the current match stands (`3/17`,
`no matches`). Typing searches as it goes; Enter (or down) goes to the next match,
shift+Enter (or up) to the previous one. Escape leaves the input with the search kept (its
owner then steps with `n` / `N` and clears it with Escape). Letters typed here are text: the
input takes every printable key before any binding sees it.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.widgets import Input, Static


class SearchInput(Input):
    """The search's input: Enter (shown in the footer) goes to the next match."""

    BINDINGS = [
        Binding("enter", "submit", "Next", id="search.next", tooltip="Go to the next match"),
    ]


class SearchBar(Horizontal):
    """A one-line search input with its match count; hidden until `open()`."""

    DEFAULT_CSS = """
    SearchBar {
        display: none;
        height: 1;
        background: $boost;
    }
    SearchBar.-open {
        display: block;
    }
    SearchBar > .search-label {
        width: 2;
        color: $text-accent;
        text-style: bold;
    }
    SearchBar > SearchInput {
        width: 1fr;
        height: 1;
        border: none;
        padding: 0;
        background: transparent;
    }
    SearchBar > .search-count {
        width: 28;
        padding: 0 1;
        text-align: right;
        color: $text-muted;
    }
    SearchBar > .search-count.-none {
        color: $text-warning;
    }
    """

    BINDINGS = [
        Binding(
            "escape",
            "leave",
            "Done",
            id="search.leave",
            tooltip="Leave the search input (the matches stay: n / N step through them)",
        ),
        Binding(
            "shift+enter,up",
            "step(-1)",
            "Previous",
            id="search.previous",
            tooltip="Go to the previous match",
        ),
        Binding("down", "step(1)", "Next", id="search.down", tooltip="The next match", show=False),
    ]

    class Changed(Message):
        """The string searched for changed."""

        def __init__(self, bar: SearchBar, query: str) -> None:
            super().__init__()
            self.bar = bar
            self.query = query

    class Stepped(Message):
        """Go to the next (`delta` 1) or the previous (-1) match."""

        def __init__(self, bar: SearchBar, delta: int) -> None:
            super().__init__()
            self.bar = bar
            self.delta = delta

    class Left(Message):
        """Escape in the input: the search is kept, the keys go back to its owner."""

        def __init__(self, bar: SearchBar) -> None:
            super().__init__()
            self.bar = bar

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="search-bar")
        self._input = SearchInput(placeholder="search", compact=True, select_on_focus=True)
        self._count = Static(classes="search-count")

    def compose(self) -> ComposeResult:
        yield Static("/", classes="search-label")
        yield self._input
        yield self._count

    @property
    def is_open(self) -> bool:
        return self.has_class("-open")

    @property
    def text(self) -> str:
        """The string searched for."""
        return self._input.value

    @property
    def count(self) -> str:
        """What the count says now (`3/17`, `no matches`)."""
        return str(self._count.content)

    def open(self, query: str | None = None) -> None:
        """Show the bar and put the cursor in its input (its string, or `query`, selected)."""
        self.add_class("-open")
        if query is not None:
            with self._input.prevent(Input.Changed):
                self._input.value = query
        self._input.focus()

    def show_count(self, text: str) -> None:
        self._count.update(Content(text), layout=False)  # a fixed width: no relayout
        self._count.set_class(text == "no matches", "-none")

    def close(self) -> None:
        """Hide the bar and forget its string."""
        self.remove_class("-open")
        with self._input.prevent(Input.Changed):
            self._input.value = ""
        self.show_count("")

    def action_leave(self) -> None:
        self.post_message(self.Left(self))

    def action_step(self, delta: int) -> None:
        self.post_message(self.Stepped(self, delta))

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        event.stop()
        self.post_message(self.Changed(self, event.value))

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.Stepped(self, 1))
