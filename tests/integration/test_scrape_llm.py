"""`tui-agent scrape --planner llm|auto` with the scripted model: its tool calls really run.

The model's part is scripted (an OpenAI-compatible server on loopback reached through litellm);
the probes it asks for run in real Chromium on the demo shop, a selector it never verified is
refused, and the recipe it writes is dry-run and then extracts the ground truth.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.requirements import require_chromium
from support.scripted_model import ScriptedModel, ToolCallReply, text, tool_calls

from tui_agent.agents.scrape import scrape_session
from tui_agent.config import Settings
from tui_agent.events import Log
from tui_agent.session import SessionRunner, SessionState
from tui_agent.store import Store
from tui_agent.web.demo_site import DemoSite

pytestmark = pytest.mark.chromium

RECIPES = Path(__file__).resolve().parents[2] / "recipes"
STRATEGY = """I know enough now.

## PAGE UNDERSTANDING
- A shop listing products as cards; a click opens a details panel beside the list

## STRATEGY

### VERIFIED SELECTORS
- LIST_ITEM: `li.card`
- CLICK_BEHAVIOR: shows_panel
- DETAILS_PANEL: `#details-panel`
- DETAILS_FIELDS:
  - title: `#details-panel .field-title`
  - price: `#details-panel .field-price`
  - seller: `#details-panel .seller-name-guess`
- PAGINATION_BUTTON: none

### AUTOMATION PLAN
1. Click each card and read the panel
2. NEEDED GENERATORS: None
"""


@pytest.fixture(scope="module")
def demo_site():
    with DemoSite() as site:
        yield site


async def scrape(tmp_path: Path, model: ScriptedModel, url: str, **options: Any) -> SessionState:
    require_chromium()
    settings = Settings(
        db=tmp_path / "sessions.db", model=ScriptedModel.model(), api_base=model.api_base
    )
    started, agent = scrape_session(url, "Extract 3 items", settings=settings, **options)
    async with await Store.open(settings.db) as store:
        return await SessionRunner(store).run(started, agent)


async def test_llm_planner_probes_the_page_and_its_unverified_selector_is_refused(
    tmp_path, demo_site
):
    recipe = json.loads((RECIPES / "demo-panel.json").read_text())
    replies = [
        tool_calls(ToolCallReply("probe_click", {"selector": "li.card"})),
        tool_calls(ToolCallReply("describe_element", {"selector": "#details-panel"})),
        text(STRATEGY),
        text(STRATEGY),  # sent back to verify `.seller-name-guess`; it insists, so it is dropped
        text(json.dumps(recipe)),
    ]
    with ScriptedModel(replies) as model:
        state = await scrape(tmp_path, model, demo_site.url("panel"), planner="llm")
        assert model.remaining == 0
        first = model.requests[0]
    assert state.status == "completed", [e.message for e in state.errors]
    assert first.tools  # the probes are offered as tools
    names = [entry.call.name for entry in state.tool_calls.values()]
    assert names[:2] == ["probe_click", "describe_element"]
    clicked = next(iter(state.tool_calls.values())).result
    assert clicked is not None and clicked.facts["behavior"] == "shows_panel"
    warnings = [e.message for e in state.timeline if isinstance(e, Log) and e.level == "warning"]
    assert any(
        "refused unverified selector `#details-panel .seller-name-guess`" in w for w in warnings
    )
    strategy = state.artifact("strategy")
    assert strategy is not None and "seller-name-guess" not in strategy.content
    assert strategy.origin.startswith("model planner")
    assert [item["title"] for item in state.items] == [
        record["title"] for record in demo_site.ground_truth("panel")[:3]
    ]
    assert state.llm_calls == len(replies) and state.total_tokens > 0


async def test_auto_planner_gives_the_model_the_offline_findings(tmp_path, demo_site):
    recipe = json.loads((RECIPES / "demo-panel.json").read_text())
    with ScriptedModel([text(STRATEGY), text(STRATEGY), text(json.dumps(recipe))]) as model:
        state = await scrape(tmp_path, model, demo_site.url("panel"), planner="auto")
        planner_prompt = model.requests[0].messages[-1]["content"]
    assert state.status == "completed", [e.message for e in state.errors]
    # The offline planner ran first and its verified selectors count for the model too.
    assert any(call.startswith("offline-") for call in state.tool_calls)
    assert "li.card" in planner_prompt and "hint" in planner_prompt.lower()
    assert len(state.items) == 3
