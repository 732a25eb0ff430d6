"""A task in a language the offline patterns do not read, read by the model instead.

`intent_prompt(task)` asks for the task's count, filters, order and search as one JSON object;
`read_intent` checks the answer (the order one of SORT_KEYS, a positive count) into a
`TaskIntent`, or None when it is not usable.
"""

from __future__ import annotations

from tui_agent.llm.json_object import json_object_in
from tui_agent.web.plan.task_intent import SORT_KEYS, TaskIntent

SYSTEM = """\
You read what a web scraping task asks of a list page. Reply with one JSON object and \
nothing else."""

USER = """\
Task: {task}

Answer {{"max_items": <how many items, or null>, "filters": [<values to narrow the list to, \
as the page would show them, in the task's language>], "sort": <one of {sorts}, or null>, \
"search": <text to search for, or null>}}."""


def intent_prompt(task: str) -> list[dict[str, str]]:
    """The messages asking the model to read `task`."""
    sorts = ", ".join(f'"{key}"' for key in SORT_KEYS)
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": USER.format(task=task.strip(), sorts=sorts)},
    ]


def read_intent(text: str) -> TaskIntent | None:
    """The TaskIntent in the model's answer; None when it is not a usable JSON object."""
    data = json_object_in(text)
    if data is None:
        return None
    count = data.get("max_items")
    if isinstance(count, str) and count.strip().isdigit():
        count = int(count)
    if not (isinstance(count, int) and not isinstance(count, bool) and count > 0):
        count = None
    filters = data.get("filters") or []
    if isinstance(filters, str):
        filters = [filters]
    kept = [str(value).strip().lower() for value in filters if str(value).strip()]
    sort = data.get("sort")
    search = data.get("search")
    return TaskIntent(
        max_items=count,
        filters=list(dict.fromkeys(kept)) if isinstance(filters, list) else [],
        sort=sort if sort in SORT_KEYS else None,
        search=str(search).strip() or None if search else None,
    )
