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
from tui_agent.demo_site import DemoSite
from tui_agent.events import Log
from tui_agent.recorder import SessionRunner
from tui_agent.session import SessionState
from tui_agent.store import Store

pytestmark = pytest.mark.chromium

RECIPES = Path(__file__).resolve().parents[2] / "recipes"
STRATEGIES = {
    "panel": """
- LIST_ITEM: `li.card`
- CLICK_BEHAVIOR: shows_panel
- DETAILS_PANEL: `#details-panel`
- DETAILS_FIELDS:
  - title: `#details-panel .field-title`
  - price: `#details-panel .field-price`
  - seller: `#details-panel .seller-name-guess`
""",
    "navigate": """
- LIST_ITEM: `li.card`
- CLICK_BEHAVIOR: navigates
- DETAILS_PANEL: `#product`
- DETAILS_FIELDS:
  - title: `#product .field-title`
  - price: `#product .field-price`
  - seller: `#product .seller-name-guess`
""",
    "inline": """
- LIST_ITEM: `li.card`
- CLICK_BEHAVIOR: inline
- DETAILS_PANEL: `.card-details`
- DETAILS_FIELDS:
  - price: `li.card .card-details .field-price`
  - seller: `li.card .card-details .seller-name-guess`
""",
}
"""Per layout: the selectors the scripted model reports; `.seller-name-guess` it never verified."""


def answer_for(layout: str) -> str:
    """The scripted model's final answer for `layout`, in the spec's format."""
    return (
        "I know enough now.\n\n## PAGE UNDERSTANDING\n- A shop listing products as cards\n\n"
        f"## STRATEGY\n\n### VERIFIED SELECTORS\n{STRATEGIES[layout].strip()}\n"
        "- PAGINATION_BUTTON: none\n\n### AUTOMATION PLAN\n1. Click each card and read it\n"
        "2. NEEDED GENERATORS: None\n"
    )


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


@pytest.mark.parametrize(
    ("layout", "behavior"),
    [("panel", "shows_panel"), ("navigate", "navigates"), ("inline", "inline")],
)
async def test_llm_planner_probes_the_page_and_its_unverified_selector_is_refused(
    tmp_path, demo_site, layout, behavior
):
    recipe = json.loads((RECIPES / f"demo-{layout}.json").read_text())
    replies = [
        tool_calls(ToolCallReply("probe_click", {"selector": "li.card"})),
        tool_calls(ToolCallReply("scroll_and_observe", {"target": "page"})),
        text(answer_for(layout)),
        text(answer_for(layout)),  # sent back to verify `.seller-name-guess`; it insists: dropped
        text(json.dumps(recipe)),
    ]
    with ScriptedModel(replies) as model:
        state = await scrape(tmp_path, model, demo_site.url(layout), planner="llm")
        assert model.remaining == 0
        first = model.requests[0]
    assert state.status == "completed", [e.message for e in state.errors]
    assert first.tools  # the probes are offered as tools
    names = [entry.call.name for entry in state.tool_calls.values()]
    assert names[:2] == ["probe_click", "scroll_and_observe"]
    clicked = next(iter(state.tool_calls.values())).result
    assert clicked is not None and clicked.facts["behavior"] == behavior
    warnings = [e.message for e in state.timeline if isinstance(e, Log) and e.level == "warning"]
    assert any("refused unverified selector" in w and "seller-name-guess" in w for w in warnings)
    strategy = state.artifact("strategy")
    assert strategy is not None and "seller-name-guess" not in strategy.content
    assert strategy.origin.startswith("model planner")
    assert [item["title"] for item in state.items] == [
        record["title"] for record in demo_site.ground_truth(layout)[:3]
    ]
    assert state.llm_calls == len(replies) and state.total_tokens > 0


async def test_auto_planner_gives_the_model_the_offline_findings(tmp_path, demo_site):
    recipe = json.loads((RECIPES / "demo-panel.json").read_text())
    answer = answer_for("panel")
    with ScriptedModel([text(answer), text(answer), text(json.dumps(recipe))]) as model:
        state = await scrape(tmp_path, model, demo_site.url("panel"), planner="auto")
        planner_prompt = model.requests[0].messages[-1]["content"]
    assert state.status == "completed", [e.message for e in state.errors]
    # The offline planner ran first and its verified selectors count for the model too.
    assert any(call.startswith("offline-") for call in state.tool_calls)
    assert "li.card" in planner_prompt and "hint" in planner_prompt.lower()
    assert len(state.items) == 3
