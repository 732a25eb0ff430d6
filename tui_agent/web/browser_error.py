"""The error every browser problem raises, below the modules that raise it."""

from __future__ import annotations

from tui_agent.errors import UserError


class BrowserError(UserError):
    """No browser, a crashed browser or a page that cannot be loaded (one clear line)."""
