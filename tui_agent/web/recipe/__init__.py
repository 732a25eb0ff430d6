"""Recipes: bindings plus a command vocabulary, and running them in a page with no model.

The model (`RecipeFile`, the commands, `parse_recipe`, `load_recipe`), the `RecipeInterpreter`
that runs one as a phase (events, then its `RunOutcome`; with a `DetailsParser` when a model
reads the details), and the `View` that opens a recipe's first item for refinement.
"""

from tui_agent.web.recipe.details_parser import DetailsCache, DetailsParser
from tui_agent.web.recipe.format import (
    Bindings,
    Click,
    ClickBehavior,
    ClickIfExists,
    CloseDetails,
    FieldSelector,
    Press,
    RecipeError,
    RecipeFile,
    Select,
    TypeText,
    WaitFor,
    load_recipe,
    parse_recipe,
    recipe_json,
    recipe_json_schema,
)
from tui_agent.web.recipe.interpreter import RecipeInterpreter
from tui_agent.web.recipe.page_actions import PageActions
from tui_agent.web.recipe.run_outcome import RunFailure, RunOutcome
from tui_agent.web.recipe.step_failures import BrowserGone, CommandFailed, HardFailure, first_line
from tui_agent.web.recipe.view import Group, View, ViewError, ViewOutcome, open_view, run_in

__all__ = [
    "Bindings",
    "BrowserGone",
    "Click",
    "ClickBehavior",
    "ClickIfExists",
    "CloseDetails",
    "CommandFailed",
    "DetailsCache",
    "DetailsParser",
    "FieldSelector",
    "Group",
    "HardFailure",
    "PageActions",
    "Press",
    "RecipeError",
    "RecipeFile",
    "RecipeInterpreter",
    "RunFailure",
    "RunOutcome",
    "Select",
    "TypeText",
    "View",
    "ViewError",
    "ViewOutcome",
    "WaitFor",
    "first_line",
    "load_recipe",
    "open_view",
    "parse_recipe",
    "recipe_json",
    "recipe_json_schema",
    "run_in",
]
