"""Where the session database lives by default."""

from __future__ import annotations

from pathlib import Path

import platformdirs


def default_db_path() -> Path:
    """`<user data dir>/tui-agent/sessions.db` (e.g. ~/.local/share/tui-agent/sessions.db)."""
    return platformdirs.user_data_path("tui-agent", appauthor=False) / "sessions.db"
