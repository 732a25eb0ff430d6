"""The one error a refinement or a decision on one raises for the user to read."""

from __future__ import annotations

from tui_agent.errors import UserError


class RefinementError(UserError):
    """A session that cannot be refined or decided on; the message is one line."""
