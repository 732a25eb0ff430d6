"""The strategy's Markdown: CLOSE_DETAILS written and read back, and counted among its selectors."""

from tui_agent.web.plan import Strategy, StrategyField, parse_strategy

MODAL = Strategy(
    understanding=["Details open in a dialog over the list."],
    list_container="#results",
    list_item="li.card",
    click_behavior="shows_panel",
    details_panel="div.modal-backdrop",
    details_loaded="div.modal-backdrop h2",
    close_details="button.modal-close",
    details_fields={"title": StrategyField(selector="div.modal-backdrop h2")},
)


def test_close_details_round_trips_through_the_markdown():
    text = MODAL.to_markdown()
    assert "- CLOSE_DETAILS: `button.modal-close`\n" in text
    assert parse_strategy(text) == MODAL
    assert "button.modal-close" in MODAL.selectors()


def test_a_strategy_without_close_details_writes_no_such_line():
    plain = MODAL.model_copy(update={"close_details": None})
    assert "CLOSE_DETAILS" not in plain.to_markdown()
    assert parse_strategy(plain.to_markdown()).close_details is None
    assert "button.modal-close" not in plain.selectors()


def test_close_details_is_read_in_the_forms_models_write_it():
    base = "### VERIFIED SELECTORS\n- LIST_ITEM: `li.card`\n"
    assert parse_strategy(base + "- CLOSE_DETAILS: none\n").close_details is None
    assert parse_strategy(base + "- **CLOSE_DETAILS**: `.x-close`\n").close_details == ".x-close"
    assert parse_strategy(base + "- CLOSE_BUTTON: `[aria-label=Close]`").close_details == (
        "[aria-label=Close]"
    )


SPREAD = Strategy(
    understanding=["Each item is a title row and a row of tags; only Escape closes details."],
    list_container="table.listing tbody",
    list_item="table.listing tbody > tr:has(span.price)",
    list_item_siblings=1,
    click_behavior="shows_panel",
    click_target="a",
    details_panel="dialog",
    details_loaded="dialog h2",
    close_key="Escape",
    item_fields={
        "categoría": StrategyField(selector="p:nth-of-type(2)", prefix="Categoría:"),
        "価格": StrategyField(selector="dd"),
        "url": StrategyField(selector="a", attribute="href"),
    },
    pagination_button="table.listing a",
    pagination_text='Next "→"',
)


def test_new_keys_round_trip_through_the_markdown():
    text = SPREAD.to_markdown()
    assert "- LIST_ITEM_SIBLINGS: 1\n" in text
    assert "- CLICK_TARGET: `a`\n" in text
    assert "- CLOSE_DETAILS: PRESS Escape\n" in text
    assert '  - categoría: `p:nth-of-type(2)` after "Categoría:"\n' in text
    assert '- PAGINATION_TEXT: "Next \\"→\\""\n' in text
    assert parse_strategy(text) == SPREAD
    siblings = SPREAD.model_copy(update={"list_item_siblings": "tr:has(span)"})
    assert parse_strategy(siblings.to_markdown()).list_item_siblings == "tr:has(span)"
    assert "tr:has(span)" in siblings.selectors()


def test_models_may_write_the_new_keys_loosely():
    base = "### VERIFIED SELECTORS\n- LIST_ITEM: `li`\n"
    assert parse_strategy(base + "- CLOSE_DETAILS: key Escape\n").close_key == "Escape"
    assert parse_strategy(base + "- CLOSE_DETAILS: PRESS `Escape`\n").close_key == "Escape"
    assert parse_strategy(base + "- PAGINATION_TEXT: Siguiente\n").pagination_text == "Siguiente"
    assert parse_strategy(base + "- PAGINATION_NUMBERED: yes\n").pagination_numbered
    assert parse_strategy(base + "- LIST_ITEM_SIBLINGS: none\n").list_item_siblings is None
