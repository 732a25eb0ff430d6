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
