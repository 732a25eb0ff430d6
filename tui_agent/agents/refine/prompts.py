"""The refinement prompt per agent type, with the evidence the model needs.

The base prompt holds the current code, the output analysis and the user's feedback; each
feedback item also carries the current logic for its field (`field_logic`) and a sample of the
items where the field is empty or wrong. Then come the type's test context and instructions
(scraper, transformer, analyzer, api-client; generic has none of its own), how the code is run,
and what went wrong in earlier attempts.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from tui_agent.analysis.flatten import flatten_item, is_empty
from tui_agent.analysis.logic import field_logic
from tui_agent.analysis.resolution import evidence_expression
from tui_agent.analysis.shapes import FEEDBACK_ISSUE_LABELS, FieldFeedback, OutputAnalysis
from tui_agent.llm import JSON_FORM, Message, ReplyForm, ReplyFormName

SAMPLE_ITEMS = 5
VALUE_LIMIT = 120
HTML_LIMIT = 12_000
CONTEXT_LIMIT = 4_000
CHECKED_EXPRESSION = (
    "Correct expression over the item's fields (each item's value must equal it, computed on "
    "that item)"
)
_NOISE = re.compile(r"<(script|style|svg|noscript)\b.*?</\1\s*>|<!--.*?-->", re.DOTALL | re.I)

SYSTEM_PROMPT = """\
You improve existing Python code so that the fields a user flagged come out right, without \
breaking the fields that already work. Your code runs in a sandbox with no network, with the \
same inputs as the current code. {answer}"""
ANSWERS: dict[ReplyFormName, str] = {
    "json": """Answer with exactly one JSON object and nothing else:
{"thought": "what was wrong and how you fix it", "action": "execute_code", \
"code": "the complete improved code"}""",
    "fenced": """Answer with a line "Thought: what was wrong and how you fix it", then the \
complete improved code in one ```python block, and nothing else.""",
}
"""How to answer, in each reply form (llm/reply_forms.py)."""

RUN_NOTES = """\
HOW THE CODE RUNS:
- The variables `html`, `url` and `context` hold the test context ({given}).
- If the code defines `main`, `main(*args)` is called with the test arguments; otherwise the \
value of the variable `result`, else of a final bare expression, is the output.
- The output must be the list of records (dicts), one per item, with the same field names."""

SCRAPER = """\
TEST URL: {url}
{html}
INSTRUCTIONS:
For each feedback item:
1. If a correct selector is provided: Use that selector directly
2. If notes provided: Analyze the HTML structure and find elements matching the description
3. Update the field extraction logic in the code
4. Ensure selectors are specific enough to avoid false positives

Return the complete improved scraper code that fixes the feedback issues."""

TRANSFORMER = """\
SAMPLE INPUT: {sample}

INSTRUCTIONS:
For each feedback item:
1. If a correct expression is provided: Use that transformation logic
2. If examples provided: Match the input→output pattern
3. Update the transformation logic for that field
4. Test with sample input to verify correctness

Return the complete improved transformer code."""

ANALYZER = """\
ANALYSIS CONTEXT: {context}

INSTRUCTIONS:
For each feedback item:
1. If examples provided: Match the expected analysis pattern
2. If notes provided: Adjust analysis criteria accordingly
3. Update the analysis logic for that field

Return the complete improved analyzer code."""

API_CLIENT = """\
ENDPOINT: {endpoint}

INSTRUCTIONS:
For each feedback item:
1. If request parameters are provided: Send them with the request
2. If a response mapping is provided: Read the field from that place in the response
3. Update the request or the response mapping for that field

Return the complete improved API client code."""


@dataclass(frozen=True)
class RefinePrompt:
    """Everything one refinement prompt is built from."""

    agent_type: str
    code: str
    analysis: OutputAnalysis | None
    feedback: list[FieldFeedback]
    test_context: dict[str, Any]
    items: list[Any] = field(default_factory=list)
    history: list[str] = field(default_factory=list)
    """One line per failed attempt: what went wrong (errors, regressions, checks)."""
    task: str | None = None


def refinement_messages(prompt: RefinePrompt, form: ReplyForm = JSON_FORM) -> list[Message]:
    """The conversation for one attempt: the system prompt (asking for `form`) and the
    refinement prompt."""
    return [
        {"role": "system", "content": SYSTEM_PROMPT.format(answer=ANSWERS[form.name])},
        {"role": "user", "content": build_refinement_prompt(prompt)},
    ]


def build_refinement_prompt(prompt: RefinePrompt) -> str:
    """The base prompt, the agent type's context and instructions, then the run notes."""
    parts = [_base(prompt)]
    specific = _type_specific(prompt.agent_type, prompt.test_context)
    if specific:
        parts.append(specific)
    given = [key for key in ("html", "url", "context") if prompt.test_context.get(key)]
    parts.append(
        RUN_NOTES.format(given=f"set here: {', '.join(given)}" if given else "none is set here")
    )
    if prompt.history:
        lines = "\n".join(f"- {line}" for line in prompt.history)
        parts.append(f"EARLIER ATTEMPTS (they were not accepted; avoid their mistakes):\n{lines}")
    return "\n\n".join(parts)


def _base(prompt: RefinePrompt) -> str:
    lines = [f"You are refining {prompt.agent_type} code based on user feedback."]
    if prompt.task:
        lines += ["", f"THE CODE'S TASK: {prompt.task}"]
    lines += ["", "CURRENT CODE:", "```python", prompt.code.rstrip(), "```", ""]
    lines += ["OUTPUT ANALYSIS:", *_analysis_lines(prompt.analysis), "", "USER FEEDBACK:"]
    for feedback in prompt.feedback:
        lines += _feedback_lines(feedback, prompt.code, prompt.items)
    return "\n".join(lines)


def _analysis_lines(analysis: OutputAnalysis | None) -> list[str]:
    if analysis is None:
        return ["- no output analysed yet"]
    fields = ", ".join(f"{f.name} ({f.coverage}% populated)" for f in analysis.fields)
    return [f"- Total items: {analysis.item_count}", f"- Fields detected: {fields or 'none'}"]


def _feedback_lines(feedback: FieldFeedback, code: str, items: list[Any]) -> list[str]:
    label = FEEDBACK_ISSUE_LABELS.get(feedback.issue, feedback.issue)
    lines = [f'- Field "{feedback.field}": {feedback.issue} ({label})']
    logic = field_logic(code, feedback.field)
    lines.append("  Current logic:" if logic else "  Current logic: (no line of the code names it)")
    if logic:
        lines += [f"    {line}" for line in logic.splitlines()]
    records = [flatten_item(item) for item in items if isinstance(item, dict)]
    checked = evidence_expression(feedback, records) is not None
    given = [
        ("Notes", feedback.notes),
        ("Correct selector", feedback.correct_selector),
        (CHECKED_EXPRESSION if checked else "Correct expression", feedback.correct_expression),
        ("Correct value", feedback.correct_value),
        ("Correct pattern (every value must fully match)", feedback.correct_pattern),
        ("What the values should look like", feedback.value_description),
        ("Request parameters", feedback.request_parameters),
        ("Response mapping", feedback.response_mapping),
    ]
    lines += [f"  {name}: {value}" for name, value in given if value]
    if feedback.examples:
        examples = [e.model_dump(mode="json") for e in feedback.examples]
        lines.append(f"  Expected: {json.dumps(examples, ensure_ascii=False)}")
    sample, count = sample_items(items, feedback)
    if sample:
        which = "empty" if feedback.issue in ("missing", "partial") else "as extracted now"
        shown = f", first {len(sample)} shown" if count > len(sample) else ""
        lines.append(f"  Items where it is {which} ({count} of {len(items)} items{shown}):")
        lines += [f"    {json.dumps(item, ensure_ascii=False, default=str)}" for item in sample]
    return lines


def sample_items(
    items: list[Any], feedback: FieldFeedback, limit: int = SAMPLE_ITEMS
) -> tuple[list[dict[str, Any]], int]:
    """Up to `limit` flattened items showing the problem, and how many items show it.

    missing / partial: the items where the field is empty. wrong / format: the items holding
    an example's input first, then the others (their values are what the user calls wrong).
    Long values are cut to VALUE_LIMIT characters.
    """
    records = [flatten_item(item) for item in items if isinstance(item, dict)]
    name = feedback.field
    if feedback.issue in ("missing", "partial"):
        chosen = [r for r in records if is_empty(r.get(name))]
    else:
        inputs = {_text(e.input) for e in feedback.examples if not is_empty(e.input)}
        holders = [r for r in records if inputs & {_text(v) for v in r.values()}]
        chosen = holders + [r for r in records if r not in holders]
    return [_cut_values(r) for r in chosen[:limit]], len(chosen)


def _type_specific(agent_type: str, context: dict[str, Any]) -> str:
    if agent_type == "scraper":
        return SCRAPER.format(
            url=context.get("url") or "(none: the html is given)", html=_html(context)
        )
    if agent_type == "transformer":
        sample = context.get("sample_input", context.get("args") or context.get("context"))
        return TRANSFORMER.format(sample=_json(sample, indent=2))
    if agent_type == "analyzer":
        return ANALYZER.format(context=_json(context.get("context"), indent=2))
    if agent_type == "api-client":
        endpoint = context.get("endpoint") or (context.get("context") or {}).get("endpoint")
        return API_CLIENT.format(endpoint=endpoint or context.get("url") or "(not recorded)")
    return ""


def _html(context: dict[str, Any]) -> str:
    html = context.get("html")
    if not html:
        return "(the page is rendered when the code runs and passed in as `html`)\n"
    text = _NOISE.sub("", html)
    cut = f" (first {HTML_LIMIT:,} of {len(text):,} characters)" if len(text) > HTML_LIMIT else ""
    return f"PAGE HTML{cut}, without scripts and styles:\n```html\n{text[:HTML_LIMIT]}\n```\n"


def _json(value: Any, indent: int | None = None) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str, indent=indent)
    return text if len(text) <= CONTEXT_LIMIT else text[:CONTEXT_LIMIT] + " …[cut]"


def _text(value: Any) -> str:
    return str(value).strip()


def _cut_values(record: dict[str, Any]) -> dict[str, Any]:
    return {
        key: value[:VALUE_LIMIT] + "…"
        if isinstance(value, str) and len(value) > VALUE_LIMIT
        else value
        for key, value in record.items()
    }
