"""The message line of a conversation: what the user says to a live code or toolcode session.

Enter sends, ctrl+j starts a new line, up and down (on the first or last line) walk through
what was sent before; ctrl+c is not copy here but the screen's: it stops the agent's run.
Above it, the messages said while the agent works wait, marked as queued, until the session
gives them to the model (its UserMessage shows them in the stream then).
"""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Static, TextArea

from tui_agent.formatting import clipped
from tui_agent.terminal_text import visible

PLACEHOLDER = "Message the agent · Enter sends · ctrl+j new line · /model NAME switches model"
BUSY_PLACEHOLDER = "The agent works: a message now is sent after this run · Escape stops the run"


class MessageInput(TextArea, inherit_bindings=False):
    """A TextArea where Enter sends (posts `Sent`), ctrl+j adds a line, and up / down on the
    first / last line recall what was sent."""

    BINDINGS = [
        *(b for b in TextArea.BINDINGS if not (isinstance(b, Binding) and "ctrl+c" in b.key)),
    ]
    """TextArea's own keys (not those of the scroll view), but ctrl+c is left to the screen:
    it stops the agent's run."""

    class Sent(Message):
        """The user sent `text` (not empty)."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, compact=True, soft_wrap=True, placeholder=PLACEHOLDER)
        self.sent: list[str] = []
        self._recalled: int | None = None
        """Index in `history` of the message shown (None: the user's own draft)."""
        self._draft = ""

    async def _on_key(self, event: events.Key) -> None:
        key = event.key
        if key == "enter":
            event.stop()
            event.prevent_default()
            self._send()
            return
        if key == "ctrl+j":
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        row = self.cursor_location[0]
        if key == "up" and row == 0 and self.sent:
            event.stop()
            event.prevent_default()
            self._recall(-1)
            return
        if key == "down" and row == self.document.line_count - 1 and self._recalled is not None:
            event.stop()
            event.prevent_default()
            self._recall(1)
            return
        await super()._on_key(event)

    def _send(self) -> None:
        text = self.text
        if not text.strip():
            return
        if not self.sent or self.sent[-1] != text:
            self.sent.append(text)
        self._recalled, self._draft = None, ""
        self.clear()
        self.post_message(self.Sent(text))

    def _recall(self, delta: int) -> None:
        """Show the message `delta` places away in the history (past its end: the draft)."""
        if self._recalled is None:
            self._draft = self.text
            index = len(self.sent) + delta
        else:
            index = self._recalled + delta
        if index < 0:
            return
        if index >= len(self.sent):
            self._recalled = None
            self.load_text(self._draft)
        else:
            self._recalled = index
            self.load_text(self.sent[index])
        self.move_cursor(self.document.end)


def queued_content(queued: list[str]) -> Content:
    """`» queued · will be sent after this run: text` for each message waiting."""
    parts: list[str | tuple[str, str]] = []
    for index, text in enumerate(queued):
        if index:
            parts.append("\n")
        parts += [
            ("» queued", "$text-warning bold"),
            (" · will be sent after this run: ", "dim"),
            clipped(visible(" ".join(text.split())), 200),
        ]
    return Content.assemble(*parts)


class MessageLine(Vertical):
    """The queued messages, then the input (see the module)."""

    def compose(self) -> ComposeResult:
        yield Static(id="queued")
        yield MessageInput(id="message-input")

    @property
    def input(self) -> MessageInput:
        return self.query_one(MessageInput)

    def show(self, queued: list[str], *, busy: bool, ended: bool) -> None:
        """Show the messages waiting, and what sending one now does."""
        shown = self.query_one("#queued", Static)
        shown.display = bool(queued)
        if queued:
            shown.update(queued_content(queued))
        message_input = self.input
        message_input.disabled = ended
        message_input.placeholder = BUSY_PLACEHOLDER if busy else PLACEHOLDER
