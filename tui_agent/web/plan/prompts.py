"""What the strategy planner says to its model, and the text protocol for models without tools.

The system prompt gives the planner's role (explore with tools, never guess), the tools,
the output format and the "verified selectors only" rule. Models that cannot call tools
natively use the text protocol of `tui_agent.llm.text_calls` (`CALL probe_click {...}` lines,
answered with `RESULT` blocks).
"""

from __future__ import annotations

from collections.abc import Sequence

from tui_agent.llm.text_calls import Spec

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
