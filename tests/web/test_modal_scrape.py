"""`tui-agent scrape` with a (scripted) model on the modal layout: details in a dialog that
blocks the list until its close button is clicked.

The offline planner runs first (its findings, the close button included, are the model's hints);
the model's strategy names CLOSE_DETAILS, its recipe closes the dialog after each item, and the
items extracted are the ground truth. The offline-only path is tests/integration/test_scrape.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.requirements import require_chromium
from support.scripted_model import ScriptedModel, text
from support.sessions import launched

from tui_agent.agents.requests import ScrapeRequest
from tui_agent.config import Settings
from tui_agent.demo_site import FIELDS
from tui_agent.recorder import SessionRecorder
from tui_agent.store import Store
from tui_agent.web.plan import parse_strategy

pytestmark = pytest.mark.chromium

RECIPES = Path(__file__).resolve().parents[2] / "recipes"
ANSWER = """The cards open a dialog over the list; its close button must be clicked each time.

## PAGE UNDERSTANDING
- Product cards; a click opens the product in a modal dialog over a backdrop.

## STRATEGY

### VERIFIED SELECTORS
- LIST_ITEM: `li.card`
- CLICK_BEHAVIOR: shows_panel
- DETAILS_PANEL: `div.modal-backdrop`
- DETAILS_LOADED: `div.modal-backdrop .field-title`
- CLOSE_DETAILS: `button.modal-close`
- DETAILS_FIELDS:
  - title: `div.modal-backdrop .field-title`
  - price: `div.modal-backdrop .field-price`

### AUTOMATION PLAN
1. Click each card, read the dialog, close it
2. NEEDED GENERATORS: None
"""


async def test_auto_planner_and_model_recipe_close_the_modal_after_each_item(tmp_path, demo_site):
    require_chromium()
    recipe = (RECIPES / "demo-modal.json").read_text()
    with ScriptedModel([text(ANSWER), text(recipe)]) as model:
        settings = Settings(
            db=tmp_path / "sessions.db", model=ScriptedModel.model(), api_base=model.api_base
        )
        launch = launched(
            ScrapeRequest, settings, url=demo_site.url("modal"), task="Extract 3 items",
            planner="auto",
        )  # fmt: skip
        async with await Store.open(settings.db) as store:
            state = await SessionRecorder(store).run(launch.started, launch.events)
        assert model.remaining == 0
        planner_prompt = model.requests[0].messages[-1]["content"]
    assert state.status == "completed", [e.message for e in state.errors]
    # The offline findings the model got name the close button it then wrote.
    assert "- CLOSE_DETAILS: `button.modal-close`" in planner_prompt
    strategy = state.artifact("strategy")
    assert strategy is not None and strategy.origin.startswith("model planner")
    assert parse_strategy(strategy.content).close_details == "button.modal-close"
    saved = json.loads(state.artifact("recipe").content)
    assert saved["bindings"]["CLOSE_DETAILS"] == "#details-modal button.modal-close"
    truth = demo_site.ground_truth("modal")[:3]
    assert [{k: v for k, v in item.items() if k in FIELDS} for item in state.items] == truth
