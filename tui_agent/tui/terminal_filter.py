"""The last net under every widget: no text the app shows reaches the terminal as a control.

Screens show recorded text through display copies (`visible_event`), with its controls
drawn as pictures. Whatever text still holds one (a model's code in the approval editor, an
error quoted in a form, a widget added later) loses it here, in each rendered line, after
layout: every such character is zero cells wide, so the line keeps its width. Textual's own
controls (cursor moves, styles) are not text and pass.
"""

from __future__ import annotations

from rich.segment import Segment
from textual.color import Color
from textual.filter import LineFilter

from tui_agent.terminal_text import without_unsafe


class ControlFilter(LineFilter):
    """Drops C0 (but newline and tab), DEL, C1 and bidi controls from rendered text."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        filtered = segments
        for index, segment in enumerate(segments):
            if segment.control:
                continue
            text = without_unsafe(segment.text)
            if text is not segment.text:  # rare: copy the line once, change the segment
                if filtered is segments:
                    filtered = list(segments)
                filtered[index] = Segment(text, segment.style)
        return filtered
