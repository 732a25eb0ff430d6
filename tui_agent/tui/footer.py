"""The footer of the screens: Textual's, rebuilt only when what it shows changed, its keys
made in their final style."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer as TextualFooter
from textual.widgets._footer import FooterKey


class Footer(TextualFooter):
    """Textual's footer, cheaper to keep up to date: the bindings changing several times
    before the next refresh (a screen opening, a move of a replay) rebuild it once, and not
    at all when the keys it would show are those it shows; each key is made compact (or
    not) as it is created rather than restyled as it mounts."""

    _rebuild_due = False
    """A rebuild is queued for after the next refresh."""
    _shown: tuple[tuple[Binding, bool, str], ...] | None = None
    """The screen's active bindings the keys shown were made from."""

    def compose(self) -> ComposeResult:
        self._shown = self._active_bindings() if self._bindings_ready else None
        for widget in super().compose():
            if isinstance(widget, FooterKey) and not widget.has_class("-command-palette"):
                widget.set_reactive(FooterKey.compact, self.compact)  # as its data binding
                widget.set_class(self.compact, "-compact", update=False)
            yield widget

    def _active_bindings(self) -> tuple[tuple[Binding, bool, str], ...]:
        """What the keys shown are made of: the bindings shown, and the palette's."""
        active = self.screen.active_bindings
        palette = active.get(self.app.COMMAND_PALETTE_BINDING)
        return tuple(
            (binding, enabled, tooltip)
            for _, binding, enabled, tooltip in active.values()
            if binding.show or (palette is not None and binding is palette[1])
        )

    def bindings_changed(self, screen: Screen[object]) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus or self._rebuild_due:
            return
        if self.is_attached and screen is self.screen:
            self._rebuild_due = True
            self.call_after_refresh(self._rebuild)

    async def _rebuild(self) -> None:
        self._rebuild_due = False
        if not self.is_attached or self._pruning:  # its screen went meanwhile
            return
        if self._active_bindings() != self._shown:
            await self.recompose()
