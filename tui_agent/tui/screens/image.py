"""One image a run wrote, full screen (Escape goes back)."""

from __future__ import annotations

from PIL import Image as PILImage
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, Static
from textual_image.widget import Image as ImageWidget

from tui_agent.events import WrittenFile
from tui_agent.formatting import format_size


class ImageScreen(ModalScreen[None]):
    """`image` (the file `written` of a step) as large as the terminal allows."""

    BINDINGS = [
        Binding("escape,enter,q", "close", "Back", id="image.close", tooltip="Back to the stream"),
    ]

    def __init__(self, written: WrittenFile, image: PILImage.Image) -> None:
        super().__init__(classes="image-screen")
        self.written = written
        self.image = image

    def compose(self) -> ComposeResult:
        size = f"{self.image.width}x{self.image.height} · {format_size(self.written.size)}"
        yield Static(Content.assemble((self.written.path, "bold"), "  ", (size, "dim")))
        yield ImageWidget(self.image, id="full-image")
        yield Footer()

    def action_close(self) -> None:
        self.dismiss(None)
