"""The headless printer on the events of a scrape with artifacts and a refinement: the strategy
in full, the recipe cut with a hint, the attempts and the decision."""

from __future__ import annotations

import io

from artifact_factory import STRATEGY, refinement_of_price, scrape_started, scrape_with_artifacts
from rich.console import Console

from tui_agent.events import Artifact, VersionDecided
from tui_agent.formatting import artifact_text
from tui_agent.printer import PRINTED_ARTIFACT_LINES, EventPrinter, session_report
from tui_agent.session import fold


def printed(*events: object) -> str:
    out = io.StringIO()
    printer = EventPrinter(Console(file=out, width=100, color_system=None))
    for event in events:
        printer(event)  # type: ignore[arg-type]
    return out.getvalue()


def test_the_strategy_is_printed_whole_and_the_recipe_cut_with_a_hint() -> None:
    strategy, recipe = [e for e in scrape_with_artifacts() if isinstance(e, Artifact)]
    recipe = recipe.model_copy(update={"session_id": "5c4a9e0000a7"})
    text = printed(strategy, recipe)
    assert "📄 strategy v1 · planner" in text
    for step in STRATEGY.plan:
        assert step in text
    assert "NEEDED GENERATORS: None" in text
    lines = artifact_text(recipe).split("\n")
    assert "📄 recipe v1 · recipe generator" in text
    assert lines[PRINTED_ARTIFACT_LINES - 1].strip() in text
    hidden = len(lines) - PRINTED_ARTIFACT_LINES
    assert (
        f"… {hidden} more lines (the whole recipe: tui-agent sessions export 5c4a9e00 -o FILE)"
        in text
    )


def test_short_code_is_printed_whole() -> None:
    code = Artifact(name="code", format="python", content="rows = []\nrows\n", version=3)
    text = printed(code)
    assert "📄 code v3" in text and "rows = []" in text and "more lines" not in text


def test_attempts_the_candidate_and_the_decision() -> None:
    text = printed(
        *refinement_of_price(),
        VersionDecided(name="recipe", version=2, accepted=True),
        VersionDecided(name="code", version=3, accepted=False, reason="keeps the old format"),
    )
    assert "🔁 attempt 1/5: Patching the price binding\n   remaining: price" in text
    assert "🔁 attempt 1/5: Fixed 1 field\n   fixed: price" in text
    assert "📄 recipe v2 · refinement attempt 1 · candidate, awaiting a decision" in text
    assert "price 0% -> 100% (fixed); title 100% -> 100%" in text
    assert "✅ accepted recipe v2" in text
    assert "❎ rejected code v3: keeps the old format" in text


def test_json_that_does_not_parse_is_printed_as_written() -> None:
    broken = Artifact(name="recipe", format="json", content="{not json")
    assert artifact_text(broken) == "{not json"


def test_the_session_report_lists_the_bindings_of_the_recipe_in_use() -> None:
    state = fold([scrape_started(), *scrape_with_artifacts(), *refinement_of_price()])
    before = printed_renderable(session_report(state))
    assert ".field-cost" in before and ".field-price" not in before
    state.apply(VersionDecided(name="recipe", version=2, accepted=True))
    after = printed_renderable(session_report(state))
    assert ".field-price" in after and ".field-cost" not in after


def printed_renderable(renderable: object) -> str:
    out = io.StringIO()
    Console(file=out, width=120, color_system=None).print(renderable)
    return out.getvalue()


def test_the_session_report_carries_the_planner_output() -> None:
    state = fold([scrape_started(), *scrape_with_artifacts()])
    report = printed_renderable(session_report(state))
    assert "Strategy (planner)" in report
    assert "VERIFIED SELECTORS" in report
    assert all(step in report for step in STRATEGY.plan)
