"""Output analysis (fields, types, coverage) and feedback models."""
