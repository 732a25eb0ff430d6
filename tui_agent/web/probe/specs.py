"""The planner's tools as the model is told of them: names, descriptions, parameters."""

from typing import Any

TOOLS = ("probe_click", "describe_element", "scroll_and_observe")

SELECTOR_PARAMETER = {
    "type": "object",
    "properties": {
        "selector": {
            "type": "string",
            "description": "A CSS selector (querySelectorAll syntax); the first match is used.",
        }
    },
    "required": ["selector"],
}

TOOL_SPECS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "probe_click",
            "description": (
                "Click the first element matching a CSS selector, the way a user would, and "
                "report what happened: whether the URL changed (the page navigates: the detail "
                "page's content container and verified content selectors are reported, then "
                "the browser goes back), whether a details panel appeared outside the item "
                "(with its verified selector), whether content expanded inside the clicked "
                "item (inline), or nothing. For a panel or dialog it says whether it covers the "
                "list (a modal) and names its verified close control (CLOSE_DETAILS). Also "
                "lists other changes and whether the page was restored afterwards. Use it on a "
                "list item to learn the click behaviour."
            ),
            "parameters": SELECTOR_PARAMETER,
        },
    },
    {
        "type": "function",
        "function": {
            "name": "describe_element",
            "description": (
                "Describe the first element matching a CSS selector: how many elements match, "
                "its text, its direct children with selectors, and VERIFIED CONTENT SELECTORS "
                "for the meaningful content inside it (headings, class-named values, links, "
                "images, labelled values such as dt/dd), each tested in the page with its "
                "match count. Only selectors verified by a tool may appear in the strategy."
            ),
            "parameters": SELECTOR_PARAMETER,
        },
    },
    {
        "type": "function",
        "function": {
            "name": "scroll_and_observe",
            "description": (
                "Scroll the page (or the list's own scroll box) to the end a few times and "
                "report the list item count before and after (does scrolling load more "
                "items?), whether the end was reached, and any pagination control (Next) or "
                "load-more button, with verified selectors."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "target": {
                        "type": "string",
                        "enum": ["page", "list"],
                        "description": "Scroll the whole page, or the list's scroll container.",
                    }
                },
                "required": ["target"],
            },
        },
    },
]
