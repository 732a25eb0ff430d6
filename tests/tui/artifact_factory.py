"""Sessions with artifacts for the TUI tests: a scrape run that records its strategy and recipe,
and a refinement of it whose candidate recipe waits for the user's decision (one that fixes the
price, one whose change of the title nothing could verify)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tui_agent.agents.refine.base import version_summary
from tui_agent.analysis import analyze_output
from tui_agent.analysis.resolution import check_feedback
from tui_agent.analysis.shapes import FieldFeedback
from tui_agent.events import (
    Artifact,
    Event,
    FeedbackSubmitted,
    FieldChange,
    ItemsExtracted,
    OutputAnalyzed,
    PhaseFinished,
    PhaseStarted,
    RefinementProgress,
    SessionStarted,
    ToolCall,
    ToolResult,
)
from tui_agent.web.plan import Strategy, StrategyField

RECIPES = Path(__file__).resolve().parents[2] / "recipes"
URL = "http://127.0.0.1:8000/panel"
REFINED = "5c4a9e0000b8"
"""The id of the refined scrape session of the `refined_db` fixture."""

STRATEGY = Strategy(
    understanding=[
        "A product list of 12 cards; clicking a card opens a details panel on the right.",
        "The panel shows the title, price and seller of the clicked product.",
    ],
    list_container="#product-list",
    list_item="li.card",
    click_behavior="shows_panel",
    details_panel="#details",
    details_loaded="#details .title",
    details_fields={
        "title": StrategyField(selector="#details .title"),
        "price": StrategyField(selector="#details .price"),
        "url": StrategyField(selector="#details a.permalink", attribute="href"),
    },
    pagination_button="a.next",
    plan=[
        "Wait for the list",
        "For each card: click it, wait for the panel, extract the fields",
        "Follow the next-page link",
    ],
)

ITEMS: list[dict[str, Any]] = [
    {"title": "Oak desk", "price": "", "url": "/p/1"},
    {"title": "Pine shelf", "price": "", "url": "/p/2"},
    {"title": "Lamp", "price": "", "url": "/p/3"},
]
FIXED_ITEMS: list[dict[str, Any]] = [
    {"title": "Oak desk", "price": "249.00", "url": "/p/1"},
    {"title": "Pine shelf", "price": "89.50", "url": "/p/2"},
    {"title": "Lamp", "price": "35.00", "url": "/p/3"},
]


def recipe_document(price_selector: str = ".field-cost") -> dict[str, Any]:
    """The demo panel recipe with its price bound to `price_selector`."""
    document = json.loads((RECIPES / "demo-panel.json").read_text())
    document["bindings"]["DETAILS_FIELDS"]["price"] = price_selector
    return document


def scrape_started() -> SessionStarted:
    return SessionStarted(
        kind="scrape",
        title="Extract the products of the panel page",
        agent_type="scraper",
        test_context={"url": URL, "recipe": recipe_document()},
    )


def scrape_with_artifacts() -> list[Event]:
    """A scrape run: plan (one probe), the strategy, the recipe, the extraction."""
    recipe = json.dumps(recipe_document())
    return [
        PhaseStarted(phase="plan", detail="offline planner"),
        ToolCall(call_id="p1", name="probe_click", arguments={"selector": "li.card"}),
        ToolResult(
            call_id="p1",
            name="probe_click",
            output="The click showed #details (1 element); the URL did not change.",
            duration=0.31,
        ),
        PhaseFinished(phase="plan", duration=1.8, summary="5 verified selectors"),
        Artifact(
            name="strategy", format="markdown", content=STRATEGY.to_markdown(), origin="planner"
        ),
        Artifact(name="recipe", format="json", content=recipe, origin="recipe generator"),
        ItemsExtracted(items=ITEMS),
        OutputAnalyzed(analysis=analyze_output(ITEMS)),
    ]


def refinement_of_price() -> list[Event]:
    """Feedback on the empty price, one attempt that fixes it, the candidate recipe."""
    feedback = FieldFeedback(field="price", issue="missing", correct_selector=".field-price")
    candidate = json.dumps(recipe_document(".field-price"))
    return [
        FeedbackSubmitted(feedback=[feedback]),
        RefinementProgress(
            attempt=1, max_attempts=5, message="Patching the price binding", remaining=["price"]
        ),
        RefinementProgress(attempt=1, max_attempts=5, message="Fixed 1 field", fixed=["price"]),
        Artifact(
            name="recipe",
            format="json",
            content=candidate,
            version=2,
            origin="refinement attempt 1",
            candidate=True,
            summary="price 0% -> 100% (fixed); title 100% -> 100%",
            changes=[
                FieldChange(
                    field="price",
                    issue="missing",
                    before=0.0,
                    after=1.0,
                    verdict="fixed",
                    samples=[(None, "$249.00"), (None, "$89.50"), (None, "$34.00")],
                ),
                FieldChange(
                    field="title",
                    before=1.0,
                    after=1.0,
                    verdict="not fixed",
                    samples=[("Oak desk", "Oak desk")],
                ),
            ],
        ),
        RefinementProgress(attempt=1, max_attempts=5, message="Fixed 1 field", fixed=["price"]),
    ]


SELLERS = ["Northwind Goods", "Harbor Lights", "Granite Works"]


def unverified_title_change() -> list[Event]:
    """Feedback that the title is wrong with only a selector to try: the candidate changes
    every title (to the sellers' names), and nothing the user gave can verify it."""
    feedback = FieldFeedback(field="title", issue="wrong", correct_selector=".field-seller")
    document = recipe_document()
    document["bindings"]["DETAILS_FIELDS"]["title"] = ".field-seller"
    after = [{**item, "title": seller} for item, seller in zip(ITEMS, SELLERS, strict=True)]
    check = check_feedback(
        feedback, analyze_output(ITEMS), analyze_output(after), after, before_items=ITEMS
    )
    message = "Fixed 0 fields; changed, not verified: title"
    return [
        FeedbackSubmitted(feedback=[feedback]),
        RefinementProgress(
            attempt=1, max_attempts=5, message="Patching the title binding", remaining=["title"]
        ),
        Artifact(
            name="recipe",
            format="json",
            content=json.dumps(document),
            version=2,
            origin="refinement attempt 1",
            candidate=True,
            summary=version_summary([check]),
        ),
        RefinementProgress(attempt=1, max_attempts=5, message=message, unverified=["title"]),
    ]
