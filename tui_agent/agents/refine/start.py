"""Starting a refinement of the right kind, and recording the user's decision on its result."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from tui_agent.agents.refine.base import Refinement, RefinementError, is_recipe_session
from tui_agent.agents.refine.code_refinement import CodeRefinement
from tui_agent.agents.refine.code_runs import code_source, rerun_code
from tui_agent.agents.refine.recipe_refinement import (
    RecipeRefinement,
    artifact_recipe,
    rerun_recipe,
)
from tui_agent.agents.refine.run_settings import (
    RunPlan,
    RunSettings,
    code_plan,
    recipe_plan,
    run_settings,
)
from tui_agent.analysis.shapes import FieldFeedback
from tui_agent.events import Artifact, Event, VersionDecided
from tui_agent.session import SessionState
from tui_agent.web.recipe import RecipeError, RecipeFile, parse_recipe

if TYPE_CHECKING:
    from tui_agent.config import Settings


def start_refinement(
    state: SessionState, feedback: list[FieldFeedback], **options: Any
) -> Refinement:
    """A RecipeRefinement for recipe sessions, else a CodeRefinement, with `options` (the
    keywords of `Refinement`: settings, llm, max_attempts, target_coverage, run).

    Raises RefinementError when the session cannot be refined (no feedback, no code that
    produced items, no test context, no model for code, an unsafe sandbox, a refused URL, ...).
    """
    if is_recipe_session(state):
        return RecipeRefinement(state, feedback, **options)
    return CodeRefinement(state, feedback, **options)


def candidate_to_decide(state: SessionState, name: str, version: int) -> Artifact:
    """Version `version` of artifact `name`, a candidate; else a RefinementError."""
    artifact = state.artifact(name, version)
    if artifact is None:
        raise RefinementError(f"the session has no version {version} of {name!r}")
    if not artifact.candidate:
        raise RefinementError(f"version {version} of {name!r} is not a candidate to decide on")
    return artifact


def _rerun_recipe(artifact: Artifact, run: RunSettings) -> tuple[RecipeFile, str]:
    """The accepted recipe, parsed, and the url it runs on; a RefinementError when either
    is missing or unusable."""
    if not run.url:
        raise RefinementError("the session has no test url to re-run the recipe on")
    try:
        return parse_recipe(artifact_recipe(artifact), "the accepted recipe"), run.url
    except RecipeError as exc:
        raise RefinementError(str(exc).splitlines()[0]) from None


def rerun_plan(
    state: SessionState, name: str, version: int, settings: Settings, run: RunSettings
) -> RunPlan | None:
    """What accepting `version` of `name` runs again, to approve first; None when the session
    was recorded here (nothing to approve). A RefinementError when it cannot run again."""
    artifact = candidate_to_decide(state, name, version)
    action = f"accept {name} v{version}: it runs again and its items replace the session's"
    if name == "recipe":
        _rerun_recipe(artifact, run)
    else:
        source = code_source(state)
    if not run.imported:
        return None
    if name == "recipe":
        max_items = state.params.get("max_items")
        return recipe_plan(state, run, action=action, recipe=artifact.content, max_items=max_items)
    return code_plan(
        state,
        run,
        settings,
        action=action,
        code=artifact.content,
        prelude=source.prelude,
        timeout=source.timeout,
    )


async def decide(
    state: SessionState,
    name: str,
    version: int,
    accepted: bool,
    *,
    settings: Settings,
    reason: str = "",
    run: RunSettings | None = None,
) -> AsyncGenerator[Event, None]:
    """VersionDecided for `version` of artifact `name`; on accept, the re-run's events (with
    the page and network of `run`, by default the session's checked) end with
    ItemsExtracted(replace=True) and OutputAnalyzed (or a Log saying why they did not).
    What would stop the re-run is a RefinementError before anything is recorded."""
    artifact = candidate_to_decide(state, name, version)
    if not accepted:
        yield VersionDecided(name=name, version=version, accepted=False, reason=reason)
        return
    run = run or run_settings(state)
    if name == "recipe":
        recipe, url = _rerun_recipe(artifact, run)
        yield VersionDecided(name=name, version=version, accepted=True, reason=reason)
        max_items = state.params.get("max_items")
        async for event in rerun_recipe(recipe, url, settings=settings, max_items=max_items):
            yield event
        return
    code_source(state)  # a session with no code to run again says so now
    yield VersionDecided(name=name, version=version, accepted=True, reason=reason)
    async for event in rerun_code(state, artifact.content, settings=settings, run=run):
        yield event
