"""The strategy planner's text protocol, prompts and tool-support decision, without a browser."""

import pytest

from tui_agent.llm.provider import tools_supported
from tui_agent.llm.text_calls import parse_text_calls, snake_name
from tui_agent.web.plan import parse_strategy
from tui_agent.web.plan.prompts import (
    OUTPUT_FORMAT,
    TEXT_PROTOCOL,
    system_prompt,
    task_message,
    verify_message,
)
from tui_agent.web.probe import TOOL_SPECS

TOOL_NAMES = [spec["function"]["name"] for spec in TOOL_SPECS]


def calls(text):
    return [(c.name, c.arguments, c.error) for c in parse_text_calls(text, TOOL_SPECS).calls]


def test_the_tools_are_the_specs_three_probes():
    assert set(TOOL_NAMES) == {"probe_click", "describe_element", "scroll_and_observe"}


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('CALL probe_click {"selector": "li.card"}', ("probe_click", {"selector": "li.card"})),
        ('CALL probeClick {"selector": "li.card"}', ("probe_click", {"selector": "li.card"})),
        ('`CALL describe_element {"selector": "#a"}`', ("describe_element", {"selector": "#a"})),
        ('- CALL: describe_element {"selector": "#a"}', ("describe_element", {"selector": "#a"})),
        ("CALL probe_click {'selector': 'li'}", ("probe_click", {"selector": "li"})),
        (
            "CALL probe_click(\"a[href*='/view/']\")",
            ("probe_click", {"selector": "a[href*='/view/']"}),
        ),
        ('CALL probe_click({"selector": "a"})', ("probe_click", {"selector": "a"})),
        ('CALL scroll_and_observe(target="list")', ("scroll_and_observe", {"target": "list"})),
        ("CALL scrollAndObserve page", ("scroll_and_observe", {"target": "page"})),
        (
            "CALL describe_element #panel .price",
            ("describe_element", {"selector": "#panel .price"}),
        ),
        (
            "CALL describe_element li:nth-child(2)",
            ("describe_element", {"selector": "li:nth-child(2)"}),
        ),
        ("CALL describe_element li[data-x=1]", ("describe_element", {"selector": "li[data-x=1]"})),
        ("CALL scroll_and_observe", ("scroll_and_observe", {})),
        ('call describe_element "ul.list"', ("describe_element", {"selector": "ul.list"})),
    ],
)
def test_a_call_line_in_any_of_its_forms(line, expected):
    assert calls(line) == [(*expected, None)]


def test_json_arguments_may_span_lines_and_prose_surrounds_the_calls():
    reply = (
        "The cards look like list items.\n"
        "```\n"
        "CALL describe_element {\n"
        '  "selector": "li.card"\n'
        "}\n"
        'CALL probe_click {"selector": "li.card a"}\n'
        "```\n"
        "Waiting for the results."
    )
    turn = parse_text_calls(reply, TOOL_SPECS)
    assert [(c.name, c.arguments) for c in turn.calls] == [
        ("describe_element", {"selector": "li.card"}),
        ("probe_click", {"selector": "li.card a"}),
    ]
    assert turn.prose == "The cards look like list items.\nWaiting for the results."


def test_an_invented_result_ends_the_calls():
    reply = (
        'CALL probe_click {"selector": "li.card"}\n'
        "RESULT probe_click: a panel appeared (#details)\n"
        'CALL describe_element {"selector": "#details"}'
    )
    assert calls(reply) == [("probe_click", {"selector": "li.card"}, None)]


def test_bad_arguments_and_unknown_tools_become_calls_with_an_error():
    [(name, arguments, error)] = calls("CALL probe_click {selector: li.card")
    assert (name, arguments) == ("probe_click", {})
    assert error.startswith("the arguments of probe_click are not a JSON object")
    [(name, _, error)] = calls('CALL click_everything {"selector": "a"}')
    assert name == "click_everything"
    assert "unknown tool 'click_everything'" in error
    assert "probe_click" in error


@pytest.mark.parametrize(
    "reply",
    [
        "I will call describe_element next to check the panel.",
        "Call me when ready",
        "call describe_element next",
        "## PAGE UNDERSTANDING\n- a shop\n### VERIFIED SELECTORS\n- LIST_ITEM: `li.card`",
        "",
    ],
)
def test_prose_and_final_answers_call_nothing(reply):
    assert calls(reply) == []


def test_snake_names():
    assert snake_name("probeClick") == "probe_click"
    assert snake_name("describe_element") == "describe_element"


def test_the_system_prompt_names_the_tools_the_format_and_the_rule():
    native = system_prompt(TOOL_SPECS, text_protocol=False)
    text = system_prompt(TOOL_SPECS, text_protocol=True)
    for name in TOOL_NAMES:
        assert f"- {name}(" in native
    assert OUTPUT_FORMAT in native
    assert "VERIFIED SELECTORS ONLY" in native
    assert TEXT_PROTOCOL not in native
    assert text.endswith(TEXT_PROTOCOL)
    # The documented CALL examples are read by the parser as the calls they show.
    assert [c.name for c in parse_text_calls(TEXT_PROTOCOL, TOOL_SPECS).calls] == [
        "probe_click",
        "describe_element",
        "scroll_and_observe",
    ]


def test_the_output_format_template_is_a_strategy_the_parser_reads():
    template = parse_strategy(OUTPUT_FORMAT)
    assert template.list_item == "selector matching every item, and only the items"
    assert set(template.details_fields) == {"name", "url"}
    assert template.details_fields["url"].attribute == "href"


def test_the_task_message_carries_task_url_snapshot_and_hints():
    message = task_message("Extract 5 items", "http://x/", "<ul>…</ul>", "## STRATEGY", 7)
    assert "TASK: Extract 5 items" in message
    assert "URL: http://x/" in message
    assert "<ul>…</ul>" in message
    assert "at most 7 tool calls" in message
    assert message.endswith("## STRATEGY")
    assert "HINTS" not in task_message("t", "u", "s", None, 7)


def test_the_verify_message_lists_each_selector_and_the_calls_left():
    message = verify_message([(".price", "DETAILS_FIELDS.price"), ("nav a", "LIST")], 3)
    assert "- `.price` (DETAILS_FIELDS.price)" in message
    assert "- `nav a` (LIST)" in message
    assert "3 tool calls left" in message
    assert "no tool calls left: drop them" in verify_message([("a", "LIST")], 0)


@pytest.mark.parametrize(
    ("model", "api_base", "expected"),
    [
        ("gpt-4o-mini", None, True),  # litellm knows it calls tools
        ("openai/scripted", "http://127.0.0.1:9/v1", True),  # unknown model on a custom server
        ("openai/scripted", None, False),  # unknown model, no server to vouch for it
        ("deepseek/deepseek-reasoner", "http://127.0.0.1:9/v1", False),  # litellm says no
        ("ollama/llama2", None, False),
    ],
)
def test_whether_tools_are_offered(model, api_base, expected):
    assert tools_supported(model, api_base) is expected
