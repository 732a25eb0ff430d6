"""Generating steps from a strategy: filter / sort / search fragments, then the whole recipe.

`FragmentsPhase` writes and proves in the browser the fragments a task needs (ending with a
`FragmentsOutcome`); `RecipeWriter` turns a strategy and its fragments into bindings +
recipe and dry-runs it on a few items (ending with a `RecipeOutcome`). Both are phases: see
web.phase.
"""

from tui_agent.web.generate.phase import FragmentsOutcome, FragmentsPhase
from tui_agent.web.generate.recipe_writer import RecipeOutcome, RecipeWriter

__all__ = ["FragmentsOutcome", "FragmentsPhase", "RecipeOutcome", "RecipeWriter"]
