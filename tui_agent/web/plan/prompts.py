"""What the strategy planner says to its model, and the text protocol for models without tools.

The system prompt gives the planner's role (explore with tools, never guess), the tools,
the output format and the "verified selectors only" rule. Models that cannot call tools
natively write one line per call instead::

    CALL probe_click {"selector": "li.card"}

and get the results back as a user message of `RESULT` blocks. `parse_text_calls` reads such
lines tolerantly: camelCase names, a JSON object spread over lines, `name("x")`, `name(key="x")`
or a bare selector; a `RESULT` line the model invents ends its calls.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

Spec = dict[str, Any]
"""An OpenAI "tools" entry: {"type": "function", "function": {name, description, parameters}}."""

OUTPUT_FORMAT = """\
## PAGE UNDERSTANDING
- [what the page is and how it works, one point per line]

## STRATEGY

### VERIFIED SELECTORS
- LIST: `selector of the list container` or none
- LIST_ITEM: `selector matching every item, and only the items`
- LIST_ITEM_SIBLINGS: `selector of the siblings after each LIST_ITEM that belong to it` \
or a count, or none
- CLICK_BEHAVIOR: shows_panel | navigates | inline
- CLICK_TARGET: `selector inside the item that the click goes to (its link)` or none
- DETAILS_PANEL: `selector of the panel / detail page container / expanded part` or none
- DETAILS_LOADED: `selector that exists only once the clicked item's details are shown` or none
- CLOSE_DETAILS: `selector of the close button of details that cover the list (a modal)`, \
PRESS Escape (when only that key closes them), or none
- DETAILS_CONTENT:
  - `selector`
- DETAILS_FIELDS:
  - name: `selector`
  - url: `selector` @href
  - year: `selector` after "Year:" (a value written after its label in the same element)
- ITEM_FIELDS:
  - name: `selector`
- PAGINATION_BUTTON: `selector` or none
- PAGINATION_TEXT: "the next-page control's text" (when its selector also matches other \
controls, e.g. a pager's links) or none
- LOAD_MORE_BUTTON: `selector` or none
- SCROLL_LOADS_MORE: yes | no

### AUTOMATION PLAN
1. [step by step plan]
2. NEEDED GENERATORS: None | FilterGenerator | SortGenerator | SearchGenerator"""

SYSTEM_PROMPT = """\
You are the StrategyPlanner of a web automation agent. You explore one web page that shows a \
list of items (products, articles, listings, results, ...) whose details appear when an item \
is clicked, and you write a strategy that a recipe will follow to extract the items the task \
asks for. You do not guess: you probe the live page with tools and observe.

TOOLS (each runs in the real browser; probe_click restores the page and says whether it could)
{tools}

HOW TO EXPLORE
1. Find the repeated list items in the DOM snapshot; check your LIST_ITEM selector with \
describe_element (it must match every item and nothing else).
2. probe_click one item (LIST_ITEM itself, or the link inside it) to learn the CLICK_BEHAVIOR: \
shows_panel (a panel appears, the URL stays), navigates (a detail page loads) or inline (the \
item expands in place). Note the selector of what appeared: that is DETAILS_PANEL. For \
DETAILS_LOADED pick something inside it that is there only once details are shown (e.g. its \
heading), since a panel may stay on the page, empty, between items. When probe_click says the \
details cover the list (a modal dialog over a backdrop: the next item cannot be clicked until \
they are closed), write the close control it found and verified as CLOSE_DETAILS: the recipe \
clicks it after each item; when only the Escape key closes them, write CLOSE_DETAILS: PRESS \
Escape. When an item is spread over sibling elements (a title row and a tag row, a dt and \
its dds), LIST_ITEM matches each item's first element and LIST_ITEM_SIBLINGS the rest. When \
only the item's link answers a click, name it as CLICK_TARGET. When the next-page control \
has no selector of its own (a "Next" link among a pager's links), name the pager's links as \
PAGINATION_BUTTON and its text as PAGINATION_TEXT.
3. describe_element the details (and the list item) to get VERIFIED content selectors for the \
fields the task needs: title, price, date, links, images, labelled values.
4. scroll_and_observe to learn whether scrolling loads more items, and whether pagination or a \
load-more button exists.

VERIFIED SELECTORS ONLY
Write only selectors that a tool call of this session verified: a selector you passed to a \
tool that matched at least one element, or one a tool reported with its match count. Never \
invent or adapt a selector. A selector nobody verified is sent back to you and then dropped.

FIELD SELECTORS
- ITEM_FIELDS are read inside each list item: write them relative to LIST_ITEM (`:scope` is \
the item itself).
- DETAILS_FIELDS are read inside DETAILS_PANEL (shows_panel), inside the detail page \
(navigates), or inside the expanded list item (inline: relative to LIST_ITEM).
- Add ` @attribute` after a field's selector to read an attribute instead of the text \
(e.g. `a.title` @href for a link, `img` @src for an image).
- Use descriptive lower-case field names: title, price, date, url, image, ...
- NEEDED GENERATORS: FilterGenerator, SortGenerator or SearchGenerator when the task asks to \
filter, sort or search the list; otherwise None.

When you know enough, answer with the final strategy in exactly this Markdown format, \
and nothing after it:

{output_format}"""

TEXT_PROTOCOL = """\
CALLING A TOOL
You call a tool by writing a line that starts with CALL, the tool's name and its arguments as \
a JSON object, for example:
CALL probe_click {"selector": "li.card a"}
CALL describe_element {"selector": "#details"}
CALL scroll_and_observe {"target": "page"}
You may write a sentence of reasoning first and several CALL lines in one message. Then stop \
and wait: the results come back in a message of RESULT blocks. Never write RESULT yourself. \
When you need no more tools, answer with the final strategy and no CALL line."""


def tool_listing(specs: Sequence[Spec]) -> str:
    """One line per tool: `- name(param, ...): description`."""
    lines = []
    for spec in specs:
        function = spec.get("function", spec)
        params = ", ".join((function.get("parameters") or {}).get("properties") or {})
        lines.append(f"- {function['name']}({params}): {function.get('description', '')}")
    return "\n".join(lines)


def system_prompt(specs: Sequence[Spec], *, text_protocol: bool) -> str:
    """The planner's system prompt; with `text_protocol` the CALL line instructions too."""
    prompt = SYSTEM_PROMPT.format(tools=tool_listing(specs), output_format=OUTPUT_FORMAT)
    return f"{prompt}\n\n{TEXT_PROTOCOL}" if text_protocol else prompt


def task_message(task: str, url: str, snapshot: str, hints: str | None, max_calls: int) -> str:
    """The first user message: the task, the URL, the DOM snapshot and any hints."""
    parts = [
        f"TASK: {task}",
        f"URL: {url}",
        f"You have at most {max_calls} tool calls.",
        f"DOM SNAPSHOT (pruned):\n{snapshot}",
    ]
    if hints:
        parts.append(
            "HINTS from an offline analysis of this page (its selectors were verified by the "
            "same tools in this session). Check what matters for the task with a tool, correct "
            f"what is wrong and complete what is missing:\n{hints}"
        )
    return "\n\n".join(parts)


def result_block(name: str, arguments: dict[str, Any] | str, text: str) -> str:
    """One tool result in the text protocol."""
    shown = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return f"RESULT {name} {shown}\n{text.strip()}"


def calls_left_line(left: int) -> str:
    return f"({left} tool call{'' if left == 1 else 's'} left.)"


def not_run_text(limit: int) -> str:
    """The result of a call made after the limit."""
    return f"Not run: the limit of {limit} tool calls is reached."


def cap_message(limit: int) -> str:
    """Sent once the model has used all its tool calls."""
    return (
        f"You have used all {limit} tool calls. Write your final strategy now, in the output "
        "format, with only the selectors the tools verified. Do not call any tool."
    )


def reparse_message(error: str) -> str:
    """The re-ask after an answer that is not a strategy."""
    return (
        f"Your answer could not be read as a strategy: {error}. Write the final strategy "
        "again, exactly in the output format (## PAGE UNDERSTANDING, ## STRATEGY, "
        "### VERIFIED SELECTORS with a LIST_ITEM, ### AUTOMATION PLAN)."
    )


def verify_message(unverified: Sequence[tuple[str, str]], calls_left: int) -> str:
    """Send back the selectors no tool call verified: (selector, where it was used) pairs."""
    listed = "\n".join(f"- `{selector}` ({where})" for selector, where in unverified)
    if calls_left > 0:
        how = (
            f"Verify each with a tool (describe_element or probe_click; {calls_left} tool calls "
            "left) or drop it"
        )
    else:
        how = "You have no tool calls left: drop them"
    return (
        "These selectors in your strategy were not verified by any tool call in this session:\n"
        f"{listed}\n{how}, then write the whole strategy again in the output format. "
        "Selectors still unverified will be dropped."
    )


# --- reading CALL lines ----------------------------------------------------------------------


@dataclass(frozen=True)
class TextCall:
    """One CALL the model wrote; `error` says why its arguments could not be read."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    raw: str = ""
    error: str | None = None


@dataclass(frozen=True)
class TextTurn:
    """A reply read in the text protocol: its calls and the prose around them."""

    calls: list[TextCall]
    prose: str


_CALL = re.compile(
    r"^[\s>*`-]*(?P<keyword>CALL|call|Call)\b\s*:?\s*`?(?P<name>[A-Za-z_]\w*)`?(?P<rest>.*)$"
)
_RESULT = re.compile(r"^[\s>*`-]*RESULT\b")
_FENCE = re.compile(r"^\s*```")
_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")
_KEYWORD_ARG = re.compile(r"\s*(\w+)\s*[=:]\s*(\"[^\"]*\"|'[^']*'|[^,]*?)\s*(?:,|$)")


def tool_params(specs: Sequence[Spec]) -> dict[str, list[str]]:
    """Tool name -> its parameter names (the first is what a bare argument stands for)."""
    params = {}
    for spec in specs:
        function = spec.get("function", spec)
        params[function["name"]] = list((function.get("parameters") or {}).get("properties") or {})
    return params


def snake_name(name: str) -> str:
    """probeClick -> probe_click (models often use camelCase names)."""
    return _CAMEL.sub(r"_\1", name).lower()


def parse_text_calls(text: str, specs: Sequence[Spec]) -> TextTurn:
    """The CALL lines of a reply (in order) and its prose; never raises."""
    params = tool_params(specs)
    lines = text.splitlines()
    calls: list[TextCall] = []
    prose: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if calls and _RESULT.match(line):
            break  # the model invented a result: what follows is fiction
        call, used = _read_call(line, lines[index:], params)
        index += used
        if call is not None:
            calls.append(call)
        elif not _FENCE.match(line):
            prose.append(line)
    return TextTurn(calls, "\n".join(prose).strip())


def _read_call(
    line: str, following: list[str], params: dict[str, list[str]]
) -> tuple[TextCall | None, int]:
    """The call `line` makes (None: it is prose) and how many following lines it used."""
    match = _CALL.match(line)
    if match is None:
        return None, 0
    name = snake_name(match.group("name"))
    strict = match.group("keyword") == "CALL"
    if name not in params and not strict:
        return None, 0
    rest = match.group("rest").strip().rstrip("`").strip()
    used = 0
    call: TextCall | None
    if rest.startswith(("{", "({")):
        call, used = _json_call(name, "\n".join([rest, *following]))
    else:
        call = _inline_call(name, rest, params.get(name) or [""], strict)
    if call is not None and name not in params:
        known = ", ".join(params)
        call = TextCall(name, {}, call.raw, f"unknown tool {name!r} (tools: {known})")
    return call, used


def _json_call(name: str, text: str) -> tuple[TextCall, int]:
    """A call whose arguments open with `{` (maybe over several lines); lines consumed."""
    start = text.index("{")
    try:
        value, end = json.JSONDecoder().raw_decode(text, start)
    except json.JSONDecodeError:
        line = text.splitlines()[0]
        value, end = _literal(line[start:].rstrip(")").strip()), len(line)
    raw = text[start:end]
    if not isinstance(value, dict):
        error = f"the arguments of {name} are not a JSON object: {raw[:120]}"
        return TextCall(name, {}, raw, error), 0
    return TextCall(name, value, raw), text.count("\n", 0, end)


def _inline_call(name: str, rest: str, params: list[str], strict: bool) -> TextCall | None:
    """`name("x")`, `name(key="x", ...)`, `name "x"`, `name x`, or `name` with no arguments."""
    inner = rest[1:-1].strip() if rest.startswith("(") and rest.endswith(")") else rest
    if not inner:
        return TextCall(name, {}, rest) if strict or rest else None
    quoted = _unquote(inner)
    if quoted is not None:
        return TextCall(name, {params[0]: quoted}, rest)
    keywords = _keyword_args(inner, params)
    if keywords:
        return TextCall(name, keywords, rest)
    if not strict:
        return None  # "call describe_element next" is prose, not a call
    return TextCall(name, {params[0]: inner}, rest)


def _keyword_args(text: str, params: list[str]) -> dict[str, str] | None:
    """`selector="x", target=page` when the pairs cover all of `text` and name real params."""
    found: dict[str, str] = {}
    position = 0
    while position < len(text):
        match = _KEYWORD_ARG.match(text, position)
        if not match or match.end() == position or match.group(1) not in params:
            return None
        value = match.group(2).strip()
        unquoted = _unquote(value)
        found[match.group(1)] = value if unquoted is None else unquoted
        position = match.end()
    return found or None


def _unquote(text: str) -> str | None:
    for quote in ('"', "'", "`"):
        if len(text) >= 2 and text[0] == quote and text[-1] == quote:
            return text[1:-1]
    return None


def _literal(text: str) -> Any:
    """A Python-style dict ({'selector': 'x'}), or None."""
    try:
        return ast.literal_eval(text) if len(text) < 10_000 else None
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
