"""Refining a session from field feedback: the code or the recipe, in attempts, then a decision.

`start_refinement` picks code or recipe refinement for a recorded session; its events append to
that session and end with a candidate version; `decide` records the user's accept or reject
and, on accept, re-runs the version so the items table shows its output.
"""

from tui_agent.agents.refine.base import (
    MAX_ATTEMPTS,
    Refinement,
    RefinementError,
    RefinementOutcome,
    configured_model,
    is_recipe_session,
    named_feedback,
)
from tui_agent.agents.refine.code_refinement import CodeRefinement
from tui_agent.agents.refine.recipe_refinement import RecipeRefinement
from tui_agent.agents.refine.start import decide, start_refinement

__all__ = [
    "MAX_ATTEMPTS",
    "CodeRefinement",
    "RecipeRefinement",
    "Refinement",
    "RefinementError",
    "RefinementOutcome",
    "configured_model",
    "decide",
    "is_recipe_session",
    "named_feedback",
    "start_refinement",
]
