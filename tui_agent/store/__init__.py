"""The sessions database: events, items, feedback and LLM calls in SQLite; JSONL export/import.

Domain code: never imports textual or tui_agent.tui.
"""

from tui_agent.store.db import Store
from tui_agent.store.errors import JsonlError, SessionExists, SessionNotFound, StoreError
from tui_agent.store.jsonl import MAX_FILE_MB, read_jsonl
from tui_agent.store.migrations import SCHEMA_VERSION

__all__ = [
    "MAX_FILE_MB",
    "SCHEMA_VERSION",
    "JsonlError",
    "SessionExists",
    "SessionNotFound",
    "Store",
    "StoreError",
    "read_jsonl",
]
