"""The files a step's run wrote, on its card: name and size, and images previewed inline.

Previews use textual-image: Kitty's graphics protocol or Sixel where the terminal answers
for them, coloured half-blocks otherwise (so they work over SSH), plain Unicode without a
terminal. The image is read from the workspace as it is now, and only from a workspace this
machine gave a session (`known_workspace`: an imported session's records name any folder they
like), beneath it without following a link the sandbox planted (`read_workspace_file`), and
shown only when it still has the checksum the run recorded (a later run may have overwritten
it). A click on a preview opens it full screen.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import PurePosixPath

from PIL import Image as PILImage
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Static
from textual_image.widget import Image as ImageWidget

from tui_agent.agents.workspace_files import WorkspaceError, read_workspace_file
from tui_agent.events import ExecutionFinished, WrittenFile
from tui_agent.formatting import format_size
from tui_agent.sandbox.folders.workspaces import known_workspace
from tui_agent.tui.widgets.mounting import mount_into

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp")
MAX_LISTED = 8
"""Files named on a card (the rest are counted)."""
MAX_PREVIEWS = 2
"""Images previewed on a card."""
MAX_IMAGE_BYTES = 20_000_000
MAX_IMAGE_PIXELS = 40_000_000
"""Larger images are listed, not decoded (a decompression bomb stays a name)."""


def is_image(written: WrittenFile) -> bool:
    return PurePosixPath(written.path).suffix.lower() in IMAGE_SUFFIXES


def load_image(workspace: str, written: WrittenFile) -> PILImage.Image | str:
    """The image as the run left it, or why it cannot be shown (one short line)."""
    if written.size > MAX_IMAGE_BYTES:
        return f"too large to preview ({format_size(written.size)})"
    root = known_workspace(workspace)
    if root is None:
        return "not in a workspace of this machine's sessions"
    if not written.sha256:
        return "no checksum recorded"
    try:
        data = read_workspace_file(root, written.path, MAX_IMAGE_BYTES + 1)
    except FileNotFoundError:
        return "no longer in the workspace"
    except WorkspaceError:
        return "not a file inside the workspace"
    except OSError as error:
        return f"not readable: {error.strerror or error}"
    if hashlib.sha256(data).hexdigest() != written.sha256:
        return "overwritten since this run"
    try:
        image = PILImage.open(io.BytesIO(data))
        if image.width * image.height > MAX_IMAGE_PIXELS:
            return f"too large to preview ({image.width}x{image.height} pixels)"
        image.load()
    except (OSError, ValueError, PILImage.DecompressionBombError) as error:
        return f"not an image Pillow can read ({type(error).__name__})"
    return image


def files_content(execution: ExecutionFinished) -> Content:
    """`🗂 wrote 2 files` then one line per file: name and size."""
    files = execution.files
    count = len(files)
    parts: list[str | tuple[str, str]] = [
        ("🗂 ", ""),
        (f"wrote {count} file{'s' if count != 1 else ''}", "bold"),
    ]
    for written in files[:MAX_LISTED]:
        mark = "▣" if is_image(written) else "·"
        parts += [
            f"\n  {mark} ",
            (written.path, "$text-accent"),
            (f"  {format_size(written.size)}", "dim"),
        ]
    if count > MAX_LISTED:
        parts.append((f"\n  … {count - MAX_LISTED} more", "dim"))
    return Content.assemble(*parts)


class ImagePreview(Vertical):
    """One image of a step (or why it cannot be shown); a click opens it full screen."""

    class Opened(Message):
        """The user asked to see `written` full screen."""

        def __init__(self, workspace: str, written: WrittenFile) -> None:
            super().__init__()
            self.workspace = workspace
            self.written = written

    def __init__(self, workspace: str, written: WrittenFile) -> None:
        super().__init__(classes="image-preview")
        self.workspace = workspace
        self.written = written
        self.image = load_image(workspace, written)

    def compose(self) -> ComposeResult:
        if isinstance(self.image, str):
            yield Static(Content.styled(f"{self.written.path}: {self.image}", "dim italic"))
        else:
            yield ImageWidget(self.image, classes="image")

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.open()

    def open(self) -> None:
        if not isinstance(self.image, str):
            self.post_message(self.Opened(self.workspace, self.written))


class FilesView(Vertical):
    """The written files of one execution, with previews of its first images."""

    def __init__(self) -> None:
        super().__init__(classes="files")
        self.display = False  # until an execution that wrote files is shown
        self._shown: ExecutionFinished | None = None
        self._list = Static(classes="files-list")

    def compose(self) -> ComposeResult:
        yield self._list

    @property
    def previews(self) -> list[ImagePreview]:
        return list(self.query(ImagePreview))

    @property
    def openable(self) -> bool:
        """Whether an image is previewed here (Enter opens it)."""
        return any(not isinstance(p.image, str) for p in self.previews)

    def open_first(self) -> None:
        """Open the first previewed image full screen."""
        for preview in self.previews:
            if not isinstance(preview.image, str):
                preview.open()
                return

    async def show(self, execution: ExecutionFinished | None) -> None:
        """List the files `execution` wrote (nothing when it wrote none)."""
        if execution is self._shown:
            return
        self._shown = execution
        files = execution.files if execution is not None else []
        self.display = bool(files)
        await self.query(ImagePreview).remove()
        if execution is None or not files:
            return
        self._list.update(files_content(execution))
        images = [f for f in files if is_image(f)][:MAX_PREVIEWS]
        if execution.workspace and images:
            await mount_into(self, [ImagePreview(execution.workspace, f) for f in images])
