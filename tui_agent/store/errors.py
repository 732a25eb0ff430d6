"""The store's exceptions: each carries one line the CLI can print as is."""

from __future__ import annotations

from tui_agent.errors import UserError


class StoreError(UserError):
    """The database cannot be used as asked (unreadable, foreign, newer schema, ...)."""


class SessionNotFound(StoreError):
    """No session has this id (or id prefix)."""


class SessionExists(StoreError):
    """An imported session's id (`session_id`) is already in the database."""

    def __init__(self, message: str, session_id: str) -> None:
        super().__init__(message)
        self.session_id = session_id


class JsonlError(StoreError):
    """An exported session file is malformed; `line` is the first bad line (1-based)."""

    def __init__(self, path: object, line: int, reason: str) -> None:
        super().__init__(f"{path} line {line}: {reason}")
        self.line = line
        self.reason = reason
