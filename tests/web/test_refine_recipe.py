"""Recipe refinement on the demo site: real Chromium, real SQLite, the scripted model over HTTP.

A scrape session is recorded with a broken price binding; feedback then fixes it through the
fast path (the user's selector, no model) or through the model's proposals, each verified in
the browser before it is used; accepting the candidate re-runs it and refreshes the items.
"""

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from support.requirements import require_chromium
from support.scripted_model import ScriptedModel, text
from support.sessions import copy_database, record_recipe, refine_stored

from tui_agent.agents.refine import RecipeRefinement, RefinementError, decide
from tui_agent.agents.refine.selectors import parse_candidates, split_selector, user_candidates
from tui_agent.analysis import analyze_output
from tui_agent.analysis.shapes import FieldFeedback
from tui_agent.config import Settings
from tui_agent.events import (
    Artifact,
    ItemsExtracted,
    LLMCall,
    Log,
    OutputAnalyzed,
    RefinementProgress,
    SessionStarted,
    ToolCall,
    ToolResult,
)
from tui_agent.llm import LLM
from tui_agent.session import fold
from tui_agent.store import Store
from tui_agent.web.recipe import FieldSelector, parse_recipe
from tui_agent.web.recipe.view import probe_document

RECIPES = Path(__file__).resolve().parents[2] / "recipes"
MAX_ITEMS = 5


def broken_panel_recipe() -> dict[str, Any]:
    """recipes/demo-panel.json with the price read from an element that does not exist."""
    document = json.loads((RECIPES / "demo-panel.json").read_text())
    document["bindings"]["DETAILS_FIELDS"]["price"] = ".nope"
    return document


async def record_broken_session(store: Store, url: str) -> str:
    state = await record_recipe(store, parse_recipe(broken_panel_recipe()), url, MAX_ITEMS)
    assert state.status == "completed", state.errors
    return state.session_id


@pytest.fixture(scope="module")
def recorded(demo_site, tmp_path_factory) -> tuple[Path, str]:
    """A database holding one recorded session of the broken recipe, and its id (each test
    works on a copy)."""
    require_chromium()
    db = tmp_path_factory.mktemp("recorded") / "s.db"

    async def record() -> str:
        async with await Store.open(db) as store:
            return await record_broken_session(store, demo_site.url("panel"))

    return db, asyncio.run(record())


def copy_of(recorded: tuple[Path, str], tmp_path: Path) -> tuple[Settings, str]:
    """Settings whose database is a copy of the recorded one, and the session id."""
    db, session_id = recorded
    return Settings(db=copy_database(db, tmp_path), model=None), session_id


def prices(items: list[Any]) -> list[Any]:
    return [item.get("price") for item in items]


@pytest.mark.chromium
async def test_a_correct_selector_fixes_the_field_with_no_model_call(tmp_path, demo_site, recorded):
    truth = [row["price"] for row in demo_site.ground_truth("panel")[:MAX_ITEMS]]
    settings, session_id = copy_of(recorded, tmp_path)
    async with await Store.open(settings.db) as store:
        before = await store.state(session_id)
        assert before.analysis.field("price").coverage == 0
        assert prices(before.items) == [None] * MAX_ITEMS

        feedback = [FieldFeedback(field="price", issue="missing", correct_selector=".field-price")]
        recorder, refinement, events = await refine_stored(
            store, session_id, feedback, settings=settings, llm=None
        )
        assert isinstance(refinement, RecipeRefinement)
        outcome = refinement.outcome
        assert (outcome.fixed, outcome.remaining, outcome.attempts) == (["price"], [], 1)
        assert outcome.error is None
        assert prices(outcome.items) == truth
        assert outcome.analysis.field("price").coverage == 100
        assert not [e for e in events if isinstance(e, LLMCall)]

        artifacts = [e for e in events if isinstance(e, Artifact)]
        assert [(a.version, a.candidate, a.origin) for a in artifacts] == [
            (1, False, "original"),
            (2, True, "refinement attempt 1"),
        ]
        assert json.loads(artifacts[0].content) == broken_panel_recipe()
        candidate = json.loads(artifacts[1].content)
        assert candidate["bindings"]["DETAILS_FIELDS"]["price"] == ".field-price"
        assert artifacts[1].summary == "price 0% -> 100% (fixed)"
        [change] = artifacts[1].changes
        assert (change.field, change.verdict) == ("price", "fixed")
        assert change.samples and all(not before and after for before, after in change.samples)

        progress = [e for e in events if isinstance(e, RefinementProgress)]
        assert progress[-1].message == "Fixed 1 field"
        assert (progress[-1].fixed, progress[-1].remaining) == (["price"], [])
        verified = [e for e in events if isinstance(e, ToolResult) and e.name == "verify_selector"]
        assert [(r.ok, r.facts["value"]) for r in verified] == [(True, truth[0])]
        runs = [e for e in events if isinstance(e, ToolResult) and e.name == "run_recipe"]
        assert [(r.ok, r.facts["items"]) for r in runs] == [(True, MAX_ITEMS)]
        # Until the user decides, the session's items are the original run's.
        assert prices((await store.state(session_id)).items) == [None] * MAX_ITEMS

        decided = [
            await recorder.emit(e)
            async for e in decide(recorder.state, "recipe", 2, True, settings=settings)
        ]
        replaced = [e for e in decided if isinstance(e, ItemsExtracted)]
        assert [(e.replace, len(e.items)) for e in replaced] == [(True, MAX_ITEMS)]
        assert isinstance(decided[-1], OutputAnalyzed)

        final = fold(await store.events(session_id))
        assert prices(final.items) == truth
        assert prices(await store.items(session_id)) == truth
        assert final.analysis.field("price").coverage == 100
        assert final.current_versions["recipe"] == 2
        assert final.llm_calls == 0
        ids = [e.call_id for e in await store.events(session_id) if isinstance(e, ToolCall)]
        assert len(ids) == len(set(ids)), "the runs' call ids collide with the first run's"


@pytest.mark.chromium
async def test_the_model_proposes_selectors_and_only_a_verified_one_is_used(
    tmp_path, demo_site, recorded
):
    truth = [row["price"] for row in demo_site.ground_truth("panel")[:MAX_ITEMS]]
    settings, session_id = copy_of(recorded, tmp_path)
    answer = {
        "candidates": [
            {"selector": ".price-tag", "attribute": None, "why": "looks like a price"},
            {"selector": "dd.field-price", "attribute": None, "why": "the labelled price"},
        ]
    }
    with ScriptedModel([text(json.dumps(answer))]) as model:
        llm = LLM(ScriptedModel.model(), api_base=model.api_base)
        async with await Store.open(settings.db) as store:
            feedback = [
                FieldFeedback(field="price", issue="missing", notes="the price in the panel")
            ]
            _, refinement, events = await refine_stored(
                store, session_id, feedback, settings=settings, llm=llm
            )
        [request] = model.requests
    prompt = request.messages[-1]["content"]
    assert "the price in the panel" in prompt and "DETAILS_FIELDS.price" in prompt
    assert 'dd.field-price "$' in prompt  # the outline of the first item's details
    outcome = refinement.outcome
    assert (outcome.fixed, outcome.attempts) == (["price"], 1)
    assert prices(outcome.items) == truth

    calls = [e for e in events if isinstance(e, LLMCall)]
    assert len(calls) == 1 and calls[0].completion_tokens > 0
    verified = [e for e in events if isinstance(e, ToolResult) and e.name == "verify_selector"]
    assert [(r.ok, r.output.startswith("matches nothing")) for r in verified] == [
        (False, True),
        (True, False),
    ]
    warnings = [e.message for e in events if isinstance(e, Log) and e.level == "warning"]
    assert any('".price-tag" refused' in w for w in warnings)
    runs = [e for e in events if isinstance(e, ToolCall) and e.name == "run_recipe"]
    assert len(runs) == 1  # the refused selector never ran
    [candidate] = [e for e in events if isinstance(e, Artifact) and e.candidate]
    assert json.loads(candidate.content)["bindings"]["DETAILS_FIELDS"]["price"] == "dd.field-price"


def recipe_session(**options: Any):
    """A folded recipe session with items (no browser needed to construct a refinement)."""
    items = [{"title": "A", "price": None}]
    events = [
        SessionStarted(
            kind="scrape",
            title="recipe",
            agent_type="scraper",
            params={"max_items": 1},
            test_context={"url": "http://127.0.0.1:9/", "recipe": broken_panel_recipe()},
        ),
        ItemsExtracted(items=items),
        OutputAnalyzed(analysis=analyze_output(items)),
    ]
    return fold(events)


def test_without_a_selector_or_a_model_nothing_can_propose_one(tmp_path):
    with pytest.raises(RefinementError, match="no selector for price and no model"):
        RecipeRefinement(
            recipe_session(),
            [FieldFeedback(field="price", issue="missing", notes="the price")],
            settings=Settings(db=tmp_path / "s.db", model=None),
        )


def test_selectors_and_candidates_are_read_as_written():
    assert split_selector("a.more@href") == FieldSelector(selector="a.more", attribute="href")
    assert split_selector(" .price ") == FieldSelector(selector=".price")
    url = FieldSelector(selector="a.old", attribute="href")
    feedback = FieldFeedback(field="url", issue="wrong", correct_selector="a.new")
    assert user_candidates(feedback, url) == [
        FieldSelector(selector="a.new", attribute="href"),
        FieldSelector(selector="a.new"),
    ]
    noted = feedback.model_copy(update={"notes": "read its data-id attribute"})
    assert user_candidates(noted, None) == [FieldSelector(selector="a.new", attribute="data-id")]
    answer = '```json\n{"candidates": [{"selector": ".a"}, ".b@src", {"selector": ".a"}]}\n```'
    assert parse_candidates(answer) == [
        FieldSelector(selector=".a"),
        FieldSelector(selector=".b", attribute="src"),
    ]
    assert parse_candidates("I cannot help") == []


def test_the_probe_stops_at_the_first_items_details():
    probe = probe_document(broken_panel_recipe(), "DETAILS_FIELDS")
    [loop] = [c for c in probe["recipe"]["commands"] if c["type"] == "FOR_EACH_ITEM_IN_LIST"]
    assert [c["type"] for c in loop["body"]] == ["CLICK", "WAIT_FOR", "END"]
    assert probe["recipe"]["commands"][-1]["type"] == "FOR_EACH_ITEM_IN_LIST"
    item = probe_document(broken_panel_recipe(), "ITEM_FIELDS")
    assert [c["type"] for c in item["recipe"]["commands"][-1]["body"]] == ["END"]
    parse_recipe(probe)
