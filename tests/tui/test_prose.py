"""A model's prose in the cheapest widget that shows it right (tui/prose.py): plain text in a
Static shows what a Markdown view shows of it, cell for cell; anything Markdown reads as
markup stays Markdown; a view changes kind in place when its text does."""

from __future__ import annotations

import asyncio

import pytest
from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import Markdown, Static

from tui_agent.session import Pieces, StepState
from tui_agent.tui.prose import plain_text, prose_view, show_prose
from tui_agent.tui.widgets.step_card import StepCard

PLAIN = [
    "The price column is empty on every second page, so I will try the next selector.",
    "Done: 42 rows (3 had no price); is that what you wanted? Yes!",
    "It costs $12 - or 10% off - for 2 of them (see the page above).",
    "I will fetch it. Then count the rows.   ",  # trailing spaces: Markdown drops them
]
MARKUP = [
    "Use **bold** here",
    "Call `fetch()` first",
    "# A heading",
    "- one item",
    "1. first",
    "2) second",
    "> quoted",
    "see [the page](https://x.test)",
    "a | b | c",
    "a_b_c and *x*",
    "two\nlines",
    "two  spaces",
    "  indented",
    "open main.py next",
    "go to https://x.test",
    "mail me@x.test",
    "a &amp; b",
    "a <b>tag</b>",
    "~~gone~~",
    "escaped \\* star",
    "---",
    "tab\there",
]


@pytest.mark.parametrize("text", PLAIN)
def test_plain_text_is_shown_as_it_is(text: str) -> None:
    assert plain_text(text) == text.rstrip()
    assert isinstance(prose_view(text, "thought"), Static)


@pytest.mark.parametrize("text", MARKUP)
def test_markup_links_and_folded_whitespace_stay_markdown(text: str) -> None:
    assert plain_text(text) is None
    assert isinstance(prose_view(text, "thought"), Markdown)


class Side(App[None]):
    """The same text as a Markdown view and as the prose view, both as a step card's."""

    CSS = """
    .thought { margin: 0; padding: 0; background: transparent; height: auto; }
    .thought MarkdownBlock { margin-bottom: 0; }
    Vertical { height: auto; width: 40; }
    """

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical(id="markdown"):
            yield Markdown(self.text, classes="thought")
        with Vertical(id="prose"):
            yield prose_view(self.text, "thought")


def shown(widget: Widget) -> list[tuple[str, list[object]]]:
    """Each row of `widget` as rendered: its text and the style of each segment."""
    region = Region(0, 0, widget.size.width, widget.size.height)
    return [(strip.text, [s.style for s in strip]) for strip in widget.render_lines(region)]


@pytest.mark.parametrize("text", PLAIN[:3])
async def test_a_plain_static_renders_what_markdown_renders(text: str) -> None:
    app = Side(text)
    async with app.run_test(size=(60, 12)) as pilot:
        await pilot.pause()
        markdown = app.query_one("#markdown > Markdown", Markdown)
        await pilot.wait_for_animation()
        [paragraph] = markdown.children
        static = app.query_one("#prose > Static", Static)
        assert static.size == paragraph.size and static.size.height > 1  # wrapped alike
        assert shown(static) == shown(paragraph)


class Card(App[None]):
    def compose(self) -> ComposeResult:
        with Vertical(id="card"):
            yield Static("above", id="above")
            yield prose_view("Let me", "thought")
            yield Static("below", id="below")


async def test_a_view_changes_kind_in_place_when_its_text_does() -> None:
    app = Card()
    async with app.run_test() as pilot:
        view = app.query_one(".thought")
        assert isinstance(view, Static)
        view = await show_prose(view, "Let me think ")  # a token's trailing space: still plain
        assert isinstance(view, Static) and str(view.content) == "Let me think"
        view = await show_prose(view, "Let me **think**")
        assert isinstance(view, Markdown) and view.source == "Let me **think**"
        same = await show_prose(view, "Let me **think** it over.")
        assert same is view  # grown in place
        await pilot.pause()
        ids = [child.id for child in app.query_one("#card").children]
        assert ids == ["above", None, "below"] and app.query_one(".thought") is view
        view = await show_prose(view, "Plain again.")
        assert isinstance(view, Static) and len(app.query(".thought")) == 1


class OneCard(App[None]):
    def compose(self) -> ComposeResult:
        yield StepCard(StepState(index=1, thought_pieces=Pieces("Let me")))


async def test_a_card_shown_twice_at_once_keeps_one_thought() -> None:
    """The pane shows a card each frame, and the card shows itself as it mounts: a kind
    change under way when the next show comes still leaves one thought, the newest."""
    app = OneCard()
    async with app.run_test() as pilot:
        card = app.query_one(StepCard)
        await pilot.pause()
        texts = ["Let me **think**", "Let me **think** it", "Plain at last."]
        steps = [StepState(index=1, thought_pieces=Pieces(text)) for text in texts]
        await asyncio.gather(*(card.show(step) for step in steps))
        await pilot.pause()
        [view] = card.query(".thought")
        assert isinstance(view, Static) and str(view.content) == "Plain at last."
