"""Starting the web kinds: a scrape and a recipe run, each in a Chromium of its own.

Checked before anything is recorded: the start page (a scheme the settings allow, a server
that answers), the model a planner or the details parser needs (set, known, its key present),
the folder a recipe is saved to.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tui_agent.agents.browsing import browser_for
from tui_agent.agents.launch.checks import ModelOptions, model_for, start_page
from tui_agent.agents.launch.prepared import Launch, Provided
from tui_agent.agents.recipe_run import recipe_started, run_recipe
from tui_agent.agents.requests import RecipeRunRequest, RequestError, ScrapeRequest
from tui_agent.agents.scrape import ScrapeAgent, page_name
from tui_agent.events import SessionStarted
from tui_agent.llm import LLM
from tui_agent.web.browser import Browser, find_chromium
from tui_agent.web.plan import parse_intent
from tui_agent.web.recipe import DetailsCache, DetailsParser, parse_recipe

if TYPE_CHECKING:
    from tui_agent.config import Settings


def details_cache(settings: Settings) -> DetailsCache:
    """Where parsed details are kept: beside the session database."""
    return DetailsCache(Path(settings.db).parent / "details-cache")


def _browser(url: str, settings: Settings) -> Browser:
    return browser_for(settings, url, settings.chromium or find_chromium())


def start_scrape(request: ScrapeRequest, settings: Settings, provided: Provided) -> Launch:
    """The phases of a scrape: load, plan, generators, recipe, list (see agents/scrape.py)."""
    if not request.model and request.planner == "llm":
        raise RequestError("model", "{planner} llm needs a model", unset=True)
    if not request.model and request.parse_details:
        raise RequestError("model", "{parse_details} needs a model", unset=True)
    save = request.save_recipe
    if save is not None and not save.resolve().parent.is_dir():
        raise RequestError("save_recipe", f"cannot save the recipe to {save}: no such folder")
    url = start_page(request.url, settings)
    browser = provided.browser or _browser(url, settings)
    llm: LLM | None = None
    if request.planner != "offline" and request.model:
        llm = model_for(request.model, ModelOptions.of(request))
    intent = parse_intent(request.task)
    limit = request.max_items if request.max_items is not None else intent.max_items
    started = SessionStarted(
        kind="scrape",
        title=f"scrape {page_name(url)}: {request.task.strip()}",
        model=llm.model if llm else None,
        agent_type="scraper",
        params={
            "task": request.task,
            "max_items": limit,
            "planner": request.planner if llm or request.planner == "offline" else "offline",
            "save_recipe": str(save) if save else None,
            "wait": request.wait,
            "parse_details": request.parse_details,
        },
        test_context={"url": url, "task": request.task},
        request=request.to_json(),
    )
    agent = ScrapeAgent(
        url,
        request.task,
        llm=llm,
        offline_first=request.planner != "llm",
        max_items=limit,
        max_items_given=request.max_items is not None,
        save_recipe=save,
        max_tool_calls=request.max_tool_calls,
        wait=request.wait,
        parse_details=request.parse_details,
        cache=details_cache(settings),
    )
    return Launch(request, started, agent.run(browser), provided.session_id)


def start_recipe(request: RecipeRunRequest, settings: Settings, provided: Provided) -> Launch:
    """A recipe run. A recipe that parses the details with a model uses the request's model
    (and the details cache beside the database); without one its items keep their text."""
    recipe = parse_recipe(request.recipe, request.recipe_file or "the recipe")
    url = start_page(request.url, settings)
    browser = provided.browser or _browser(url, settings)
    parser = None
    if recipe.bindings.DETAILS_SCHEMA and request.model:
        llm = model_for(request.model, ModelOptions.of(request))
        parser = DetailsParser(llm, details_cache(settings))
    path = Path(request.recipe_file) if request.recipe_file else None
    started = recipe_started(recipe, url, request.max_items, path, stored=request.to_json())
    events = run_recipe(
        recipe,
        url,
        max_items=request.max_items,
        browser=browser,
        wait=request.wait,
        parser=parser,
    )
    return Launch(request, started, events, provided.session_id)
