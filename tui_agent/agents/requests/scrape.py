"""The requests of the web kinds: a scrape (plan a page, write a verified recipe, extract) and a
recipe run (a recipe on a page, no model needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import field_validator, model_validator

from tui_agent.agents.requests.base import (
    Count,
    Option,
    Planner,
    RequestBase,
    RequestError,
    WaitSeconds,
    non_blank,
)
from tui_agent.agents.requests.fields import (
    ApiBase,
    ContextTokens,
    MaxTokens,
    Model,
    ModelOffForm,
    Temperature,
    TopP,
)

MaxItems = Annotated[
    Count | None,
    Option(
        "stop after N items (default: from the task)",
        flag="--max-items",
        metavar="N",
        label="Max items (optional)",
        row="plan",
    ),
]


class ScrapeRequest(RequestBase):
    """`tui-agent scrape URL --task "..."`: explore a list page, write a verified recipe and
    extract its items."""

    kind: Literal["scrape"] = "scrape"
    summary: ClassVar[str] = "plan a list page, write a verified recipe, extract its items"

    model: Model = None
    api_base: ApiBase = None
    url: Annotated[
        str,
        Option(
            "the list page (http:// or https://; file:// with --allow-file-urls)",
            metavar="URL",
            label="List page URL",
            placeholder="http://127.0.0.1:8000/panel",
            url=True,
        ),
        non_blank(
            "no page given. Which page? A URL (http://, https://, file://) or a host and path."
        ),
    ]
    task: Annotated[
        str,
        Option(
            'what to extract, in words (e.g. "Extract 20 items")',
            flag="--task",
            label="What to extract",
            placeholder="Extract 20 items",
        ),
        non_blank("the task is empty. What should be extracted? e.g. Extract 20 items"),
    ]
    planner: Annotated[
        Planner,
        Option(
            "auto: the model when one is configured (given the offline findings), else the "
            "offline planner; llm: the model only; offline: no model at all",
            flag="--planner",
            label="Planner (auto: the model if set)",
            row="plan",
        ),
    ] = "auto"
    max_items: MaxItems = None
    save_recipe: Annotated[
        Path | None,
        Option(
            "write the recipe here, for `tui-agent recipe run` (no model needed)",
            flag="--save-recipe",
            metavar="FILE",
        ),
    ] = None
    max_tool_calls: Annotated[
        Count,
        Option(
            "probe calls the model planner may make ({default})",
            flag="--max-tool-calls",
            metavar="N",
        ),
    ] = 16
    wait: Annotated[
        WaitSeconds,
        Option(
            "wait at most S seconds for the page to render (its content and requests quiet) "
            "after load, clicks and page changes ({default:g})",
            flag="--wait",
            metavar="S",
        ),
    ] = 15.0
    parse_details: Annotated[
        bool,
        Option(
            "have the model read named fields from each item's details text, even when "
            "selectors name some (needs a model; without this it does so only when none do)",
            flag="--parse-details",
        ),
    ] = False
    context_tokens: ContextTokens = None
    temperature: Temperature = None
    max_tokens: MaxTokens = None
    top_p: TopP = None

    @model_validator(mode="after")
    def _details_need_a_planner_with_a_model(self) -> Self:
        if self.parse_details and self.planner == "offline":
            raise RequestError(
                "parse_details", "{parse_details} needs a model, and {planner} offline uses none"
            )
        return self


class RecipeRunRequest(RequestBase):
    """`tui-agent recipe run RECIPE.json --url URL`: a recipe drives Chromium, no model."""

    kind: Literal["recipe"] = "recipe"
    summary: ClassVar[str] = "run a recipe (bindings + commands) on a page"

    recipe: Annotated[
        dict[str, Any],
        Option(
            "the recipe: bindings + commands (see `tui-agent recipe schema`)",
            metavar="RECIPE.json",
            reader="recipe_file",
            keeps_path="recipe_file",
        ),
    ]
    recipe_file: str | None = None
    url: Annotated[str, Option("the list page to run the recipe on", flag="--url", url=True)]
    max_items: Annotated[
        Count | None,
        Option(
            "stop after N items (overrides the recipe's config.maxItems)",
            flag="--max-items",
            metavar="N",
        ),
    ] = None
    wait: Annotated[
        WaitSeconds,
        Option(
            "wait at most S seconds for a page to render after load and page changes ({default:g})",
            flag="--wait",
            metavar="S",
        ),
    ] = 15.0
    api_base: ApiBase = None
    context_tokens: ContextTokens = None
    temperature: Temperature = None
    max_tokens: MaxTokens = None
    top_p: TopP = None
    model: ModelOffForm = None

    @field_validator("recipe")
    @classmethod
    def _a_valid_recipe(cls, recipe: dict[str, Any]) -> dict[str, Any]:
        from tui_agent.web.recipe import RecipeError, parse_recipe  # Playwright: only here

        try:
            parse_recipe(recipe)
        except RecipeError as exc:
            raise RequestError("recipe", str(exc)) from None
        return recipe
