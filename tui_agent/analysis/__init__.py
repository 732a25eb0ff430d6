"""Output analysis (fields, types, coverage) and feedback models."""

from tui_agent.analysis.flatten import flatten_item, is_empty
from tui_agent.analysis.output import analyze_output

__all__ = ["analyze_output", "flatten_item", "is_empty"]
