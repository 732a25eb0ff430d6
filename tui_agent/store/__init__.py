"""The sessions database: events, items, feedback and LLM calls in SQLite; JSONL export/import.

Domain code: never imports textual or tui_agent.tui.
"""

from tui_agent.store.db import Store
from tui_agent.store.errors import JsonlError, SessionNotFound, StoreError
from tui_agent.store.jsonl import read_jsonl
from tui_agent.store.migrations import SCHEMA_VERSION

__all__ = [
    "SCHEMA_VERSION",
    "JsonlError",
    "SessionNotFound",
    "Store",
    "StoreError",
    "read_jsonl",
]
