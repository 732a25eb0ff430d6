"""The refinement prompt per agent type: base, evidence, type-specific context, history."""

from __future__ import annotations

from typing import Any

import pytest

from tui_agent.agents.refine.prompts import (
    HTML_LIMIT,
    RefinePrompt,
    build_refinement_prompt,
    refinement_messages,
    sample_items,
)
from tui_agent.analysis import analyze_output
from tui_agent.analysis.shapes import FeedbackExample, FieldFeedback

CODE = """\
def main(rows):
    out = []
    for row in rows:
        out.append({"name": row["n"], "total": None})
    return out
"""
ITEMS: list[dict[str, Any]] = [
    {"name": "a", "total": None},
    {"name": "b", "total": None},
    {"name": "c", "total": 3},
]


def prompt(agent_type: str, context: dict[str, Any], **options: Any) -> str:
    feedback = options.pop(
        "feedback",
        [FieldFeedback(field="total", issue="missing", correct_expression="row['q'] * row['p']")],
    )
    return build_refinement_prompt(
        RefinePrompt(
            agent_type=agent_type,
            code=CODE,
            analysis=analyze_output(ITEMS),
            feedback=feedback,
            test_context=context,
            items=ITEMS,
            **options,
        )
    )


def test_the_base_prompt_holds_code_analysis_feedback_logic_and_samples() -> None:
    text = prompt("transformer", {"args": [[{"n": "a", "q": 2, "p": 3}]]})
    assert text.startswith("You are refining transformer code based on user feedback.")
    assert "```python\ndef main(rows):" in text
    assert "- Total items: 3" in text
    assert "- Fields detected: name (100% populated), total (33% populated)" in text
    assert '- Field "total": missing (No data extracted)' in text
    assert "Correct expression: row['q'] * row['p']" in text
    # the current logic comes from field_logic: the line naming the field, numbered
    assert '       4          out.append({"name": row["n"], "total": None})' in text
    # a sample of the items where the field is empty
    assert "Items where it is empty (2 of 3 items):" in text
    assert '{"name": "a", "total": null}' in text and '{"name": "c"' not in text


def test_scraper_prompt_has_the_url_the_html_and_the_selector_instructions() -> None:
    html = "<html><script>var x = 1;</script><div class='p'><h2>Oak</h2></div></html>"
    feedback = [FieldFeedback(field="total", issue="wrong", correct_selector=".p h2")]
    text = prompt("scraper", {"url": "https://shop.test/", "html": html}, feedback=feedback)
    assert "TEST URL: https://shop.test/" in text
    assert "Correct selector: .p h2" in text
    assert "<div class='p'><h2>Oak</h2></div>" in text and "var x = 1" not in text
    assert "1. If a correct selector is provided: Use that selector directly" in text
    assert "Return the complete improved scraper code that fixes the feedback issues." in text
    # wrong: the sample shows the items as extracted now
    assert "Items where it is as extracted now (3 of 3 items):" in text


def test_long_html_is_cut() -> None:
    html = "<p>" + "x" * (HTML_LIMIT * 2) + "</p>"
    text = prompt("scraper", {"html": html})
    assert f"first {HTML_LIMIT:,} of {len(html):,} characters" in text
    assert len(text) < HTML_LIMIT + 5000


def test_transformer_prompt_has_the_sample_input() -> None:
    text = prompt("transformer", {"args": [[{"n": "a", "q": 2}]]})
    assert 'SAMPLE INPUT: [\n  [\n    {\n      "n": "a",' in text
    assert "2. If examples provided: Match the input→output pattern" in text
    assert "Return the complete improved transformer code." in text


def test_analyzer_prompt_has_the_analysis_context() -> None:
    text = prompt("analyzer", {"args": [], "context": {"text": "Invoice 42 due 2024-05-01"}})
    assert '"text": "Invoice 42 due 2024-05-01"' in text
    assert text.count("ANALYSIS CONTEXT:") == 1
    assert "Return the complete improved analyzer code." in text


def test_api_client_prompt_has_the_endpoint_and_mappings() -> None:
    feedback = [
        FieldFeedback(
            field="total",
            issue="missing",
            request_parameters="expand=totals",
            response_mapping="data.totals.gross",
        )
    ]
    text = prompt(
        "api-client", {"context": {"endpoint": "https://api.test/orders"}}, feedback=feedback
    )
    assert "ENDPOINT: https://api.test/orders" in text
    assert "Request parameters: expand=totals" in text
    assert "Response mapping: data.totals.gross" in text
    assert "Return the complete improved API client code." in text


def test_generic_prompt_is_the_base_with_run_notes() -> None:
    text = prompt("generic", {"args": []})
    assert "INSTRUCTIONS" not in text
    assert "HOW THE CODE RUNS:" in text and "`main(*args)`" in text


def test_an_expression_over_the_items_fields_is_said_to_be_checked_per_item() -> None:
    feedback = [FieldFeedback(field="total", issue="wrong", correct_expression="len(name) * 2")]
    text = prompt("generic", {"args": []}, feedback=feedback)
    assert (
        "  Correct expression over the item's fields (each item's value must equal it, computed"
        " on that item): len(name) * 2" in text
    )


def test_history_of_failed_attempts_is_named() -> None:
    history = ["attempt 1: the code failed: KeyError: 'q'", "attempt 2: refused: lowers name"]
    text = prompt("generic", {"args": []}, history=history)
    assert "EARLIER ATTEMPTS" in text
    assert "- attempt 1: the code failed: KeyError: 'q'\n- attempt 2: refused" in text


def test_examples_and_task_appear() -> None:
    feedback = [
        FieldFeedback(
            field="total",
            issue="wrong",
            examples=[FeedbackExample(input="b", expected_output=6)],
            notes="quantity times price",
        )
    ]
    text = prompt("transformer", {"args": []}, feedback=feedback, task="sum the orders")
    assert "THE CODE'S TASK: sum the orders" in text
    assert 'Expected: [{"input": "b", "expected_output": 6}]' in text
    assert "Notes: quantity times price" in text


def test_messages_are_a_system_prompt_asking_for_json_and_the_prompt() -> None:
    request = RefinePrompt("generic", CODE, None, [FieldFeedback(field="x", issue="missing")], {})
    system, user = refinement_messages(request)
    assert system["role"] == "system" and '"action": "execute_code"' in system["content"]
    assert user["role"] == "user" and "- no output analysed yet" in user["content"]
    assert "Current logic: (no line of the code names it)" in user["content"]


@pytest.mark.parametrize("issue", ["wrong", "format"])
def test_wrong_samples_put_the_examples_items_first(issue: str) -> None:
    feedback = FieldFeedback(
        field="total", issue=issue, examples=[FeedbackExample(input="c", expected_output=9)]
    )
    sample, total = sample_items(ITEMS, feedback, limit=2)
    assert total == 3
    assert [row["name"] for row in sample] == ["c", "a"]


def test_sample_values_are_cut() -> None:
    sample, _ = sample_items(
        [{"name": "x" * 500, "total": None}], FieldFeedback(field="total", issue="missing")
    )
    assert len(sample[0]["name"]) == 121 and sample[0]["name"].endswith("…")
