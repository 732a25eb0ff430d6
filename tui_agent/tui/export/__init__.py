"""Copy and export from the TUI: the clipboard with a toast, and the export dialog writing a
session (JSONL), its items (CSV, JSON) or its recipe to a file."""
