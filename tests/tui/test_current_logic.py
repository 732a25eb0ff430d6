"""What the feedback modal shows as the current logic: the recipe binding or the code's lines,
always of the version in use."""

from __future__ import annotations

import json
from typing import Any

from artifact_factory import recipe_document, refinement_of_price, scrape_started
from session_factory import started

from tui_agent.events import Artifact, CodeProposed, Event, ExecutionFinished, VersionDecided
from tui_agent.session import fold
from tui_agent.tui.current_logic import current_logic, recipe_binding

INLINE: dict[str, Any] = {
    "bindings": {
        "LIST_ITEM": "li.card",
        "CLICK_BEHAVIOR": "inline",
        "ITEM_FIELDS": {"title": "h3"},
        "DETAILS_FIELDS": {"url": {"selector": "a.more", "attribute": "href"}},
        "DETAILS_CONTENT": [".description"],
    }
}


def test_item_and_details_fields_say_where_they_are_read() -> None:
    assert recipe_binding(INLINE, "title") == (
        'ITEM_FIELDS["title"] = "h3"\n  (read inside each LIST_ITEM li.card)'
    )
    assert recipe_binding(INLINE, "url") == (
        'DETAILS_FIELDS["url"] = {"selector": "a.more", "attribute": "href"}\n'
        "  (read inside the clicked LIST_ITEM li.card)"
    )
    assert recipe_binding(INLINE, "content") == (
        'DETAILS_CONTENT = [".description"]\n  (read inside the clicked LIST_ITEM li.card)'
    )
    assert recipe_binding(INLINE, "price") is None
    assert recipe_binding({"bindings": "broken"}, "title") is None


def test_a_recipe_session_shows_the_binding_of_the_version_in_use() -> None:
    events = [scrape_started(), *refinement_of_price()]
    state = fold(events)
    panel = "(read in DETAILS_PANEL #details-panel after clicking the item)"
    assert current_logic(state, "price") == f'DETAILS_FIELDS["price"] = ".field-cost"\n  {panel}'
    state.apply(VersionDecided(name="recipe", version=2, accepted=True))
    assert current_logic(state, "price") == f'DETAILS_FIELDS["price"] = ".field-price"\n  {panel}'


def test_the_recipe_artifact_wins_over_the_test_context() -> None:
    state = fold([scrape_started()])
    state.apply(Artifact(name="recipe", format="json", content=json.dumps(recipe_document("b"))))
    assert current_logic(state, "price") is not None
    assert '= "b"' in (current_logic(state, "price") or "")


def ran(step: int, code: str, success: bool = True) -> list[Event]:
    return [
        CodeProposed(step=step, code=code),
        ExecutionFinished(step=step, success=success, result=[{"price": 1}] if success else None),
    ]


def test_code_sessions_show_the_lines_of_the_code_in_use() -> None:
    state = fold(
        [
            started(),
            *ran(1, "rows = [{'price': p} for p in prices]"),
            *ran(2, "rows = [{'price': None}]", success=False),
        ]
    )
    assert current_logic(state, "price") == "   1  rows = [{'price': p} for p in prices]"
    state.apply(Artifact(name="code", format="python", content="x = 1\nrow = {'price': 2}"))
    for event in ran(3, "row = {'price': 'a rejected attempt'}"):
        state.apply(event)
    assert current_logic(state, "price") == "   2  row = {'price': 2}"
    assert current_logic(state, "nothing") is None


def test_a_code_session_shows_the_line_computing_the_field_not_its_data() -> None:
    code = (
        "rows = [{'qty': 2, 'price': 3.0, 'total': None}, {'qty': 1, 'total': None}]\n"
        "for row in rows:\n"
        "    row['total'] = row['qty'] * row['price']\n"
    )
    state = fold([started(), *ran(1, code)])
    assert current_logic(state, "total") == "   3      row['total'] = row['qty'] * row['price']"


def test_records_an_earlier_step_built_show_that_steps_lines() -> None:
    build = (
        "rows = []\nfor o in orders:\n    rows.append({'id': o['id'], 'total': o['q'] * o['p']})\n"
    )
    state = fold([started(), *ran(1, build), *ran(2, "[r for r in rows if r['total']]")])
    assert current_logic(state, "total") == (
        "step 1:\n   3      rows.append({'id': o['id'], 'total': o['q'] * o['p']})"
    )
    # no step gives it a value: the lines reading it
    state = fold([started(), *ran(1, "x = 1"), *ran(2, "[r for r in rows if r['total']]")])
    assert current_logic(state, "total") == "   1  [r for r in rows if r['total']]"
