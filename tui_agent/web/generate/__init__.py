"""Generating steps from a strategy: filter / sort / search fragments, then the whole recipe.

`GeneratorPhase` writes and proves in the browser the fragments a task needs (ending with a
`FragmentsOutcome`); `RecipeGenerator` turns a strategy and its fragments into bindings +
recipe and dry-runs it on a few items (ending with a `RecipeOutcome`). Both are phases: see
web.phase.
"""

from tui_agent.web.generate.phase import FragmentsOutcome, GeneratorPhase
from tui_agent.web.generate.recipe_writer import RecipeGenerator, RecipeOutcome

__all__ = ["FragmentsOutcome", "GeneratorPhase", "RecipeGenerator", "RecipeOutcome"]
