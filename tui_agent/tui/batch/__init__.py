"""A batch in the TUI: its screen (live and stored), its replay, the items table, the progress
line, and the new-session form's batch part."""
