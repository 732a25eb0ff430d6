"""Starting a refinement of the right kind, and recording the user's decision on its result."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from tui_agent.agents.refine.base import Refinement, RefinementError, is_recipe_session
from tui_agent.agents.refine.code_refinement import CodeRefinement
from tui_agent.agents.refine.code_runs import rerun_code
from tui_agent.agents.refine.recipe_refinement import RecipeRefinement, rerun_recipe
from tui_agent.analysis.models import FieldFeedback
from tui_agent.events import Event, VersionDecided
from tui_agent.session import SessionState

if TYPE_CHECKING:
    from tui_agent.config import Settings


def start_refinement(
    state: SessionState, feedback: list[FieldFeedback], **options: Any
) -> Refinement:
    """A RecipeRefinement for recipe sessions, else a CodeRefinement, with `options` (the
    keywords of `Refinement`: settings, llm, max_attempts, target_coverage).

    Raises RefinementError when the session cannot be refined (no feedback, no code that
    produced items, no test context, no model for code, an unsafe sandbox, ...).
    """
    if is_recipe_session(state):
        return RecipeRefinement(state, feedback, **options)
    return CodeRefinement(state, feedback, **options)


async def decide(
    state: SessionState,
    name: str,
    version: int,
    accepted: bool,
    *,
    settings: Settings,
    reason: str = "",
) -> AsyncIterator[Event]:
    """VersionDecided for `version` of artifact `name`; on accept, the re-run's events end
    with ItemsExtracted(replace=True) and OutputAnalyzed (or a Log saying why they did not)."""
    artifact = state.artifact(name, version)
    if artifact is None:
        raise RefinementError(f"the session has no version {version} of {name!r}")
    if not artifact.candidate:
        raise RefinementError(f"version {version} of {name!r} is not a candidate to decide on")
    yield VersionDecided(name=name, version=version, accepted=accepted, reason=reason)
    if not accepted:
        return
    if name == "recipe":
        url = state.test_context.get("url")
        if not url:
            raise RefinementError("the session has no test url to re-run the recipe on")
        recipe = json.loads(artifact.content)
        max_items = state.params.get("max_items")
        async for event in rerun_recipe(recipe, url, settings=settings, max_items=max_items):
            yield event
        return
    async for event in rerun_code(state, artifact.content, settings=settings):
        yield event
