"""Refining a session from field feedback: the code or the recipe, in attempts, then a decision.

`start_refinement` picks code or recipe refinement for a recorded session; its events append to
that session and end with a candidate version; `decide` records the user's accept or reject
and, on accept, re-runs the version so the items table shows its output. Both run with
`run_settings`: the session's page and network checked as if typed, an imported session's
approved first from its `RunPlan` (`rerun_plan`, `Refinement.plan`).
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
from tui_agent.agents.refine.run_settings import (
    Allowances,
    RunPlan,
    RunSettings,
    run_settings,
)
from tui_agent.agents.refine.start import decide, rerun_plan, start_refinement

__all__ = [
    "MAX_ATTEMPTS",
    "Allowances",
    "CodeRefinement",
    "RecipeRefinement",
    "Refinement",
    "RefinementError",
    "RefinementOutcome",
    "RunPlan",
    "RunSettings",
    "configured_model",
    "decide",
    "is_recipe_session",
    "named_feedback",
    "rerun_plan",
    "run_settings",
    "start_refinement",
]
