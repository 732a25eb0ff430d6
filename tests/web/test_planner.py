"""The strategy planner with a scripted model whose tool calls really run in Chromium.

The scripted server plays the model; every probe it asks for runs on the demo site, and the
tests check both sides: the events and Strategy the planner produced, and the requests the
server received (tools offered or not, tool results sent back, re-asks). The demo site's
anatomy is the truth the selectors are compared with.
"""

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest
from support.scripted_model import Reply, ScriptedModel, ToolCallReply, error, text, tool_calls

from tui_agent.demo_site.anatomy import ANATOMY, INLINE_DETAILS, ITEM, PANEL
from tui_agent.events import Event, LLMCall, Log, Thought, ThoughtDelta, ToolCall, ToolResult
from tui_agent.llm import LLM, RetryPolicy
from tui_agent.llm.errors import LLMError
from tui_agent.session import fold
from tui_agent.web.browser import Browser
from tui_agent.web.phase import collect
from tui_agent.web.plan import (
    OfflinePlanner,
    PlanOutcome,
    Strategy,
    StrategyField,
    StrategyPlanner,
)
from tui_agent.web.plan.prompts import (
    TEXT_PROTOCOL,
    cap_message,
    not_run_text,
    reparse_message,
    verify_message,
)
from tui_agent.web.probe import TOOL_SPECS, Probes

pytestmark = [pytest.mark.chromium, pytest.mark.asyncio(loop_scope="module")]

TASK = "Extract 20 products with their prices"
TOOL_NAMES = [spec["function"]["name"] for spec in TOOL_SPECS]


def answer(selectors: str, lead: str = "") -> str:
    """A final answer in the spec's format around a VERIFIED SELECTORS body."""
    return (
        f"{lead}\n\n## PAGE UNDERSTANDING\n- A shop listing products as cards\n\n"
        f"## STRATEGY\n\n### VERIFIED SELECTORS\n{selectors.strip()}\n\n"
        "### AUTOMATION PLAN\n1. Iterate through the cards\n2. Read each one's details\n"
        "3. NEEDED GENERATORS: None\n"
    )


PANEL_ANSWER = answer(
    """
- LIST: none
- LIST_ITEM: `li.card`
- CLICK_BEHAVIOR: shows_panel
- DETAILS_PANEL: `#details-panel`
- DETAILS_LOADED: `#details-panel .field-title`
- DETAILS_FIELDS:
  - title: `#details-panel .field-title`
  - price: `#details-panel .field-price`
  - url: `#details-panel .field-url` @href
- ITEM_FIELDS:
  - title: `.card-title`
  - price: `.price`
- PAGINATION_BUTTON: none
- SCROLL_LOADS_MORE: no
""",
    lead="I know enough to write the strategy.",
)


@dataclass
class Planned:
    """One planner run: the planner, its events and the requests the model server got."""

    planner: StrategyPlanner
    events: list[Event]
    outcome: PlanOutcome
    requests: list[Any]

    @property
    def strategy(self) -> Strategy:
        assert self.outcome.strategy is not None, self.outcome.failure
        return self.outcome.strategy

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    @property
    def warnings(self) -> list[str]:
        return [e.message for e in self.of(Log) if e.level == "warning"]

    @property
    def purposes(self) -> list[str]:
        return [e.purpose for e in self.of(LLMCall)]

    @property
    def streamed(self) -> dict[int, str]:
        """Each step's ThoughtDelta texts, joined."""
        joined: dict[int, str] = {}
        for delta in self.of(ThoughtDelta):
            joined[delta.step] = joined.get(delta.step, "") + delta.text
        return joined

    def check_thought_order(self) -> None:
        """A step's deltas all come before its one Thought, which comes before its LLMCall."""
        for step in self.streamed:
            kinds = [
                type(e)
                for e in self.events
                if isinstance(e, ThoughtDelta | Thought | LLMCall) and e.step == step
            ]
            deltas = kinds.count(ThoughtDelta)
            assert kinds == [ThoughtDelta] * deltas + [Thought, LLMCall], kinds


async def plan(
    browser: Browser,
    url: str,
    replies: list[Reply],
    *,
    before: Callable[[Probes, ScriptedModel], Awaitable[dict[str, Any]]] | None = None,
    **options: Any,
) -> Planned:
    """Run a StrategyPlanner on `url` against a scripted model playing `replies`; `before`
    may work the probes and extend the script first, and returns more planner options."""
    page = await browser.page()
    try:
        await page.goto(url)
        probes = Probes(page)
        with ScriptedModel(replies) as model:
            if before is not None:
                options |= await before(probes, model)
            llm = LLM(
                ScriptedModel.model(),
                api_base=model.api_base,
                api_key="sk-test-dummy-0123456789",
                retry=RetryPolicy(attempts=1),
            )
            planner = StrategyPlanner(llm, probes, TASK, url, **options)
            events, outcome = await collect(planner.run(), PlanOutcome)
            assert model.remaining == 0, "the planner stopped before the script ended"
        planned = Planned(planner, events, outcome, model.requests)
        planned.check_thought_order()
        return planned
    finally:
        await page.context.close()


def describe(selector: str) -> ToolCallReply:
    return ToolCallReply("describe_element", {"selector": selector})


def click(selector: str) -> ToolCallReply:
    return ToolCallReply("probe_click", {"selector": selector})


# --- native tool calls ----------------------------------------------------------------------


async def test_a_scripted_session_explores_the_panel_layout_and_writes_its_strategy(
    browser, demo_site
):
    url = demo_site.url("panel")
    planned = await plan(
        browser,
        url,
        [
            tool_calls(
                describe("li.card"),
                click("li.card"),
                content="The cards look like the list items; what does a click do?",
            ),
            tool_calls(describe("#details-panel")),
            text(PANEL_ANSWER),
        ],
    )
    anatomy = ANATOMY["panel"]
    planner, strategy = planned.planner, planned.strategy
    assert planner.use_tools  # an unknown model on a custom api_base is offered tools
    assert (planned.outcome.failure, planned.outcome.refused, planned.outcome.tool_calls) == (
        None,
        [],
        3,
    )
    assert planned.outcome.output == strategy.to_markdown()
    assert planner.probes.item_selector == ITEM

    # The strategy is the layout's own structure.
    assert strategy.list_item == ITEM
    assert strategy.click_behavior == anatomy.click_behavior
    assert strategy.details_panel == PANEL
    assert strategy.details_loaded == anatomy.details_loaded
    assert strategy.details_fields == {
        "title": StrategyField(selector=anatomy.details_fields["title"]),
        "price": StrategyField(selector=anatomy.details_fields["price"]),
        "url": StrategyField(selector=f"{PANEL} .field-url", attribute="href"),
    }
    assert strategy.item_fields == {
        name: StrategyField(selector=selector) for name, selector in anatomy.card_fields.items()
    }
    assert strategy.plan == ["Iterate through the cards", "Read each one's details"]

    # The tool calls really ran: the click showed the panel, and they are traced in order.
    calls, results = planned.of(ToolCall), planned.of(ToolResult)
    assert [(c.name, c.arguments["selector"], c.step) for c in calls] == [
        ("describe_element", "li.card", 1),
        ("probe_click", "li.card", 1),
        ("describe_element", "#details-panel", 2),
    ]
    assert [r.call_id for r in results] == [c.call_id for c in calls]
    assert all(r.ok for r in results)
    assert results[1].facts["behavior"] == "shows_panel"
    assert results[1].facts["appeared"] == PANEL
    assert f"{PANEL} .field-price" in results[2].output

    # Each reply's text streamed live, in pieces, as it arrived; then the prose became the
    # thought of its turn, replacing what streamed; every model call is recorded.
    opening = "The cards look like the list items; what does a click do?"
    assert planned.streamed == {1: opening, 3: PANEL_ANSWER}
    assert len([d for d in planned.of(ThoughtDelta) if d.step == 3]) > 1
    assert [(t.step, t.text) for t in planned.of(Thought)] == [
        (1, opening),
        (3, "I know enough to write the strategy."),
    ]
    assert [(c.step, c.purpose) for c in planned.of(LLMCall)] == [
        (1, "plan"),
        (2, "plan"),
        (3, "plan"),
    ]

    # What the model server saw: tools offered each time, the task, then the tool results.
    requests = planned.requests
    assert len(requests) == 3
    assert all([t["function"]["name"] for t in r.tools] == TOOL_NAMES for r in requests)
    system, user = requests[0].messages
    assert "VERIFIED SELECTORS ONLY" in system["content"]
    assert TEXT_PROTOCOL not in system["content"]
    assert f"TASK: {TASK}" in user["content"]
    assert f"URL: {url}" in user["content"]
    assert "[LIST ITEM `li.card`]" in user["content"]  # the DOM snapshot
    assistant, *answered = requests[1].messages[2:]
    assert [c["function"]["name"] for c in assistant["tool_calls"]] == [
        "describe_element",
        "probe_click",
    ]
    assert [(m["role"], m["tool_call_id"], m["content"]) for m in answered] == [
        ("tool", assistant["tool_calls"][0]["id"], results[0].output),
        ("tool", assistant["tool_calls"][1]["id"], results[1].output),
    ]
    assert requests[2].messages[-1]["content"] == results[2].output


async def test_an_unverified_selector_is_sent_back_then_dropped_and_recorded(browser, demo_site):
    guessed = answer(
        """
- LIST: `ul#product-list`
- LIST_ITEM: `li.card`
- CLICK_BEHAVIOR: shows_panel
- DETAILS_PANEL: `#details-panel`
- DETAILS_FIELDS:
  - title: `#details-panel .field-title`
  - price: `#details-panel .price-tag`
"""
    )
    planned = await plan(
        browser,
        demo_site.url("panel"),
        [
            tool_calls(click("li.card")),
            text(guessed),
            tool_calls(describe("ul#product-list")),  # verifies one of the two, not the other
            text(guessed),
        ],
    )
    # Sent back once, with each selector and where it was used.
    sent_back = planned.requests[2].messages[-1]["content"]
    assert sent_back == verify_message(
        [("ul#product-list", "LIST"), ("#details-panel .price-tag", "DETAILS_FIELDS.price")], 15
    )
    assert planned.purposes == ["plan", "plan", "verify", "plan"]
    # The one a tool then verified stays; the other is dropped and recorded.
    strategy = planned.strategy
    assert strategy.list_container == "ul#product-list"
    assert strategy.details_fields == {"title": StrategyField(selector=f"{PANEL} .field-title")}
    assert planned.outcome.refused == ["#details-panel .price-tag"]
    assert planned.warnings == [
        "refused unverified selector `#details-panel .price-tag` (DETAILS_FIELDS.price)"
    ]
    assert "price-tag" not in planned.outcome.output


async def test_an_unverified_list_item_fails_the_plan(browser, demo_site):
    guessed = answer("- LIST_ITEM: `li.product`\n- ITEM_FIELDS:\n  - price: `.price`")
    planned = await plan(browser, demo_site.url("panel"), [text(guessed), text(guessed)])
    assert planned.outcome.strategy is None
    assert planned.outcome.failure == (
        "LIST_ITEM `li.product` was never verified by a tool call, so the strategy cannot be used"
    )
    assert planned.outcome.refused == ["li.product", ".price"]
    assert "refused unverified selector `li.product` (LIST_ITEM)" in planned.warnings
    assert planned.outcome.tool_calls == 0


# --- the text protocol ----------------------------------------------------------------------


async def test_the_text_protocol_runs_call_lines_on_the_inline_layout(browser, demo_site):
    final = answer(
        """
- LIST_ITEM: `li.card`
- CLICK_BEHAVIOR: inline
- DETAILS_PANEL: `.card-details`
- DETAILS_LOADED: `.card-details`
- DETAILS_FIELDS:
  - title: `.card-title`
  - price: `.card-details .field-price`
  - seller: `.field-seller`
- ITEM_FIELDS:
  - url: `.details-link` @href
"""
    )
    asking = (
        "Cards are the items. Let me look inside one and click it.\n"
        'CALL describe_element {"selector": "li.card"}\n'
        'CALL probeClick("li.card")'
    )
    planned = await plan(
        browser, demo_site.url("inline"), [text(asking), text(final)], use_tools=False
    )
    planner, strategy = planned.planner, planned.strategy
    assert not planner.use_tools
    assert (planned.outcome.failure, planned.outcome.refused, planned.outcome.tool_calls) == (
        None,
        [],
        2,
    )
    # Relative selectors count as verified through the item they are read in.
    assert strategy.click_behavior == "inline"
    assert strategy.details_panel == INLINE_DETAILS
    assert set(strategy.details_fields) == {"title", "price", "seller"}
    assert strategy.item_fields["url"] == StrategyField(selector=".details-link", attribute="href")

    calls, results = planned.of(ToolCall), planned.of(ToolResult)
    assert [(c.name, c.arguments) for c in calls] == [
        ("describe_element", {"selector": "li.card"}),
        ("probe_click", {"selector": "li.card"}),
    ]
    assert results[1].facts["behavior"] == "inline"
    # The raw replies streamed, CALL lines and strategy included; the thoughts that replace
    # them are the prose (the final answer has none before its first heading).
    assert planned.streamed == {1: asking, 2: final}
    assert [t.text for t in planned.of(Thought)] == [
        "Cards are the items. Let me look inside one and click it.",
        "",
    ]
    steps = fold(planned.events).steps
    assert [(steps[i].thought, steps[i].thought_complete) for i in (1, 2)] == [
        ("Cards are the items. Let me look inside one and click it.", True),
        ("", True),
    ]

    # No tools offered; the protocol is in the prompt; results came back as RESULT blocks.
    first, second = planned.requests
    assert first.tools is None and second.tools is None
    assert first.messages[0]["content"].endswith(TEXT_PROTOCOL)
    assistant, results_message = second.messages[2:]
    assert assistant == {"role": "assistant", "content": asking}
    assert results_message["role"] == "user"
    assert results_message["content"] == (
        f'RESULT describe_element {{"selector": "li.card"}}\n{results[0].output}\n\n'
        f'RESULT probe_click {{"selector": "li.card"}}\n{results[1].output}\n\n'
        "(14 tool calls left.)"
    )


# --- limits and failures --------------------------------------------------------------------


async def test_the_cap_stops_tool_calls_and_asks_for_the_strategy(browser, demo_site):
    minimal = answer("- LIST_ITEM: `li.card`\n- ITEM_FIELDS:\n  - price: `.price`")
    planned = await plan(
        browser,
        demo_site.url("panel"),
        [
            tool_calls(
                describe("li.card"),
                ToolCallReply("probe_click", "{not json"),
                describe("#details-panel"),
            ),
            tool_calls(describe(".price")),
            text(minimal),
        ],
        max_tool_calls=2,
    )
    assert planned.outcome.tool_calls == 2
    assert planned.strategy.item_fields == {"price": StrategyField(selector=".price")}
    # Two calls counted (one with unreadable arguments, answered with why); none after.
    calls, results = planned.of(ToolCall), planned.of(ToolResult)
    assert [c.name for c in calls] == ["describe_element", "probe_click"]
    assert calls[1].arguments == {"raw": "{not json"}
    assert [r.ok for r in results] == [True, False]
    assert results[1].output.startswith("the arguments of probe_click are not a JSON object")
    # The third call and the next round were answered "not run", with the cap message.
    first_round = planned.requests[1].messages[3:]
    assert [m.get("content") for m in first_round] == [
        results[0].output,
        results[1].output,
        not_run_text(2),
        cap_message(2),
    ]
    assert [m["content"] for m in planned.requests[2].messages[-2:]] == [
        not_run_text(2),
        cap_message(2),
    ]
    assert planned.warnings == ["the model called 1 tool(s) after its limit of 2: not run"]


async def test_a_model_that_keeps_calling_tools_past_the_cap_ends_with_an_error(browser, demo_site):
    calling = tool_calls(describe("li.card"))
    planned = await plan(
        browser, demo_site.url("panel"), [calling, calling, calling], max_tool_calls=0
    )
    assert planned.outcome.strategy is None
    assert planned.outcome.failure == "the model kept calling tools after its limit of 0 tool calls"
    assert planned.of(ToolCall) == []


async def test_an_unparseable_answer_is_reasked_once_then_is_an_error(browser, demo_site):
    planned = await plan(
        browser,
        demo_site.url("panel"),
        [text("The page is a shop with cards."), text("It has cards and a panel.")],
    )
    problem = 'no "### VERIFIED SELECTORS" section in the planner output'
    assert planned.outcome.strategy is None
    assert planned.outcome.failure == f"the model's answer is not a strategy: {problem}"
    assert planned.outcome.output == "It has cards and a panel."
    assert planned.purposes == ["plan", "reparse"]
    reask = planned.requests[1].messages[-2:]
    assert reask == [
        {"role": "assistant", "content": "The page is a shop with cards."},
        {"role": "user", "content": reparse_message(problem)},
    ]


async def test_an_unreadable_last_answer_keeps_the_previous_strategy(browser, demo_site):
    async def count_items(probes: Probes, model: ScriptedModel) -> dict[str, Any]:
        assert await probes.count(ITEM) == 240  # verified in this session, as hints would be
        return {}

    first = answer("- LIST: `ul#product-list`\n- LIST_ITEM: `li.card`")
    planned = await plan(
        browser,
        demo_site.url("panel"),
        [text(first), text("Sorry, which format?"), text("I cannot.")],
        before=count_items,
    )
    assert planned.purposes == ["plan", "verify", "reparse"]
    assert planned.strategy.list_item == ITEM
    assert planned.strategy.list_container is None
    assert planned.outcome.refused == ["ul#product-list"]
    assert planned.warnings[-2:] == [
        'the model\'s last answer is not a strategy (no "### VERIFIED SELECTORS" section in '
        "the planner output); keeping its previous one",
        "refused unverified selector `ul#product-list` (LIST)",
    ]


async def test_a_provider_failure_propagates(browser, demo_site):
    with pytest.raises(LLMError, match="refused the request"):
        await plan(browser, demo_site.url("panel"), [error(400, "bad request")])


# --- with the offline planner's findings ----------------------------------------------------


async def test_offline_findings_are_hints_whose_selectors_count_as_verified(browser, demo_site):
    url = demo_site.url("panel")

    async def offline_first(probes: Probes, model: ScriptedModel) -> dict[str, Any]:
        _, offline = await collect(OfflinePlanner(probes, TASK, url).run(), PlanOutcome)
        assert offline.strategy is not None, offline.failure
        # The model checks nothing and hands the hints back as its strategy.
        model.push(text(offline.strategy.to_markdown()))
        return {"hints": offline.strategy}

    planned = await plan(browser, url, [], before=offline_first)
    hints = planned.planner.hints
    assert hints is not None
    # The offline planner's probes share the registry: every hinted selector is verified.
    assert (planned.outcome.failure, planned.outcome.refused) == (None, [])
    assert planned.strategy == hints
    assert planned.outcome.tool_calls == 0
    assert hints.to_markdown() in planned.requests[0].messages[1]["content"]


# --- a server that cannot do tool calls -----------------------------------------------------


def fallback_lines(planned: Planned) -> list[str]:
    return [line for line in planned.warnings if "text protocol" in line]


async def test_a_server_refusing_tools_moves_the_run_to_call_lines(browser, demo_site):
    async def refusing(probes: Probes, model: ScriptedModel) -> dict[str, Any]:
        model.refuse_tools = "registry.ollama.ai/library/tiny does not support tools"
        return {}

    asking = (
        "Let me look at the cards.\n"
        'CALL describe_element {"selector": "li.card"}\n'
        'CALL probe_click {"selector": "li.card"}\n'
        'CALL describe_element {"selector": "#details-panel"}'
    )
    planned = await plan(
        browser,
        demo_site.url("panel"),
        [text(asking), text(PANEL_ANSWER)],
        before=refusing,
    )
    assert not planned.planner.use_tools
    assert planned.strategy.list_item == ITEM and planned.outcome.tool_calls == 3
    refused, *after = planned.requests
    assert refused.tools and all(r.tools is None for r in after)
    assert TEXT_PROTOCOL.strip().splitlines()[0] in after[0].messages[0]["content"]
    assert after[1].messages[-1]["content"].startswith("RESULT describe_element")
    [said] = fallback_lines(planned)
    assert "cannot do tool calls" in said
    assert [c.step for c in planned.of(LLMCall)] == [1, 2]


async def test_a_server_ignoring_tools_has_the_calls_written_as_text_run(browser, demo_site):
    def call(name: str, selector: str) -> str:
        body = json.dumps({"name": name, "arguments": {"selector": selector}})
        return f"<tool_call>\n{body}\n</tool_call>"

    asking = "\n".join(
        [
            "The cards look like the items.",
            call("describe_element", "li.card"),
            call("probe_click", "li.card"),
            call("describe_element", "#details-panel"),
        ]
    )
    planned = await plan(browser, demo_site.url("panel"), [text(asking), text(PANEL_ANSWER)])
    assert not planned.planner.use_tools
    assert planned.strategy.list_item == ITEM and planned.outcome.tool_calls == 3
    assert [(c.name, c.arguments["selector"]) for c in planned.of(ToolCall)] == [
        ("describe_element", "li.card"),
        ("probe_click", "li.card"),
        ("describe_element", "#details-panel"),
    ]
    first, second = planned.requests
    assert first.tools and second.tools is None
    assert second.messages[-1]["content"].startswith("RESULT describe_element")
    assert planned.of(Thought)[0].text == "The cards look like the items."
    [said] = fallback_lines(planned)
    assert "ignored the tools" in said
