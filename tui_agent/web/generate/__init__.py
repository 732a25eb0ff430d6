"""Generating steps from a strategy: filter / sort / search fragments, then the whole recipe.

`GeneratorPhase` writes and proves in the browser the fragments a task needs; `RecipeGenerator`
turns a strategy and its fragments into bindings + recipe and dry-runs it on a few items.
"""

from tui_agent.web.generate.phase import GeneratorPhase
from tui_agent.web.generate.recipe_writer import RecipeGenerator

__all__ = ["GeneratorPhase", "RecipeGenerator"]
