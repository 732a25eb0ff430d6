"""Resolution checks: every rule of check_feedback, and regressions()."""

from __future__ import annotations

from typing import Any

import pytest

from tui_agent.analysis import analyze_output
from tui_agent.analysis.resolution import FieldCheck, check_feedback, judge, regressions
from tui_agent.analysis.shapes import FeedbackExample, FieldFeedback


def check(
    feedback: FieldFeedback, before: list[Any], after: list[Any], **options: Any
) -> FieldCheck:
    return check_feedback(feedback, analyze_output(before), analyze_output(after), after, **options)


def rows(field: str, values: list[Any], **extra: Any) -> list[dict[str, Any]]:
    return [{"id": i, field: value, **extra} for i, value in enumerate(values)]


# -- missing ----------------------------------------------------------------------------------


def test_missing_is_fixed_when_coverage_reaches_the_target() -> None:
    result = check(
        FieldFeedback(field="title", issue="missing"),
        rows("title", [None] * 5),
        rows("title", ["a", "b", "c", "d", None]),
    )
    assert result.resolved
    assert (result.before, result.after) == (0.0, 0.8)
    assert result.detail == "title (missing): 0% -> 80%, fixed"


def test_missing_below_the_target_is_not_fixed() -> None:
    result = check(
        FieldFeedback(field="title", issue="missing"),
        rows("title", [None] * 5),
        rows("title", ["a", "b", "c", None, None]),
    )
    assert not result.resolved
    assert "coverage 60% is below the 80% target" in result.detail


def test_the_target_can_be_changed() -> None:
    feedback = FieldFeedback(field="title", issue="missing")
    before, after = rows("title", [None] * 4), rows("title", ["a", "b", None, None])
    assert not check(feedback, before, after).resolved
    assert check(feedback, before, after, target_coverage=0.5).resolved


def test_a_field_absent_from_the_output_counts_as_zero_coverage() -> None:
    result = check(FieldFeedback(field="title", issue="missing"), rows("x", [1]), rows("x", [1]))
    assert (result.resolved, result.before, result.after) == (False, 0.0, 0.0)


def test_missing_also_needs_the_given_examples() -> None:
    feedback = FieldFeedback(
        field="title", issue="missing", examples=[FeedbackExample(expected_output="Oak desk")]
    )
    before = rows("title", [None, None])
    assert not check(feedback, before, rows("title", ["x", "y"])).resolved
    assert check(feedback, before, rows("title", ["Oak desk", "y"])).resolved


# -- wrong / format ---------------------------------------------------------------------------


def test_wrong_is_fixed_when_the_expected_output_appears_for_its_input() -> None:
    feedback = FieldFeedback(
        field="price",
        issue="wrong",
        examples=[FeedbackExample(input="Oak desk", expected_output="249.00")],
    )
    before = [{"title": "Oak desk", "price": "$1"}, {"title": "Lamp", "price": "$2"}]
    fixed = [{"title": "Oak desk", "price": 249.0}, {"title": "Lamp", "price": 89.5}]
    elsewhere = [{"title": "Oak desk", "price": 89.5}, {"title": "Lamp", "price": 249.0}]
    assert check(feedback, before, fixed).resolved
    result = check(feedback, before, elsewhere)
    assert not result.resolved
    assert "expected '249.00' for 'Oak desk'" in result.detail


def test_an_example_whose_input_is_in_no_item_needs_its_output_anywhere() -> None:
    feedback = FieldFeedback(
        field="date",
        issue="format",
        examples=[FeedbackExample(input="5 Jan 2024", expected_output="2024-01-05")],
    )
    before = rows("date", ["5 Jan 2024", "6 Jan 2024"])
    assert check(feedback, before, rows("date", ["2024-01-05", "2024-01-06"])).resolved
    assert not check(feedback, before, rows("date", ["05/01/2024", "06/01/2024"])).resolved


def test_wrong_needs_the_correct_value() -> None:
    feedback = FieldFeedback(field="currency", issue="wrong", correct_value="EUR")
    before = rows("currency", ["$", "$"])
    assert check(feedback, before, rows("currency", ["EUR", "EUR"])).resolved
    result = check(feedback, before, rows("currency", ["USD", "USD"]))
    assert not result.resolved and "'EUR' does not appear" in result.detail


def test_format_needs_every_value_to_match_the_pattern() -> None:
    feedback = FieldFeedback(field="price", issue="format", correct_pattern=r"\d+\.\d{2}")
    before = rows("price", ["$1", "$2", "$3"])
    assert check(feedback, before, rows("price", ["1.00", "2.50", "3.99"])).resolved
    result = check(feedback, before, rows("price", ["1.00", "2.5", "3.99"]))
    assert not result.resolved
    assert "1 of 3 values do not match" in result.detail and "'2.5'" in result.detail


def test_a_broken_pattern_is_reported_not_raised() -> None:
    feedback = FieldFeedback(field="price", issue="format", correct_pattern="(")
    result = check(feedback, rows("price", ["1"]), rows("price", ["1"]))
    assert not result.resolved and "not a valid regular expression" in result.detail


def test_format_needs_consistent_kinds() -> None:
    feedback = FieldFeedback(field="link", issue="format", notes="absolute urls")
    before = rows("link", ["/p/1", "/p/2"])
    result = check(feedback, before, rows("link", ["https://shop.test/p/1", "/p/2"]))
    assert not result.resolved and "mixed kinds" in result.detail
    assert check(
        feedback, before, rows("link", ["https://shop.test/p/1", "https://shop.test/p/2"])
    ).resolved


def test_wrong_without_evidence_needs_changed_values() -> None:
    feedback = FieldFeedback(field="title", issue="wrong", notes="the product name, not the shop")
    before = rows("title", ["Shop", "Shop"])
    result = check(feedback, before, rows("title", ["Shop", "Shop"]))
    assert not result.resolved and "did not change" in result.detail
    assert result.verdict == "not fixed"


def test_a_change_with_nothing_to_check_against_is_changed_not_verified_never_fixed() -> None:
    feedback = FieldFeedback(field="title", issue="wrong", notes="the product name, not the shop")
    before, after = rows("title", ["Shop", "Shop"]), rows("title", ["Oak desk", "Lamp"])
    result = check_feedback(
        feedback, analyze_output(before), analyze_output(after), after, before_items=before
    )
    assert result.resolved and not result.verified
    assert result.verdict == "changed, not verified"
    assert result.samples == (("Shop", "Oak desk"), ("Shop", "Lamp"))
    assert result.detail == (
        "title (wrong): 100% -> 100%, changed, not verified "
        "('Shop' -> 'Oak desk'; 'Shop' -> 'Lamp')"
    )
    assert "fixed" not in result.detail


def test_a_change_past_the_first_examples_is_seen_item_by_item() -> None:
    feedback = FieldFeedback(field="title", issue="wrong")
    before = rows("title", ["a", "b", "c", "d", "e", "f"])
    after = rows("title", ["a", "b", "c", "d", "e", "F"])
    assert (
        analyze_output(before).field("title").examples
        == analyze_output(after).field("title").examples
    )  # the analyses alone cannot tell
    result = check_feedback(
        feedback, analyze_output(before), analyze_output(after), after, before_items=before
    )
    assert result.verdict == "changed, not verified"
    assert result.samples[0] == ("f", "F")


def test_an_unverified_change_reads_as_its_values_in_the_versions_summary() -> None:
    from tui_agent.agents.refine.base import version_summary

    feedback = FieldFeedback(field="category", issue="wrong", correct_selector=".field-seller")
    before = rows("category", ["Kitchen", "Home", "Garden"])
    after = rows("category", ["Northwind Goods", "x" * 60, "Granite Works"])
    unverified = check_feedback(
        feedback, analyze_output(before), analyze_output(after), after, before_items=before
    )
    fixed = check(FieldFeedback(field="id", issue="missing"), before, after)
    assert version_summary([unverified, fixed]) == (
        "category 100% -> 100% (changed, not verified: 'Kitchen' -> 'Northwind Goods', "
        f"'Home' -> '{'x' * 38}…, 'Garden' -> 'Granite Works'); id 100% -> 100% (fixed)"
    )


def test_wrong_may_not_lower_the_fields_coverage() -> None:
    feedback = FieldFeedback(field="price", issue="wrong", correct_value="249")
    before = rows("price", ["1", "2", "3", "4"])
    result = check(feedback, before, rows("price", ["249", None, None, None]))
    assert not result.resolved and "coverage fell (100% -> 25%)" in result.detail


# -- partial ----------------------------------------------------------------------------------


def test_partial_is_fixed_when_coverage_rises_and_kinds_agree() -> None:
    feedback = FieldFeedback(field="rating", issue="partial")
    before = rows("rating", [4.5, None, None, None])
    assert check(feedback, before, rows("rating", [4.5, 3.0, None, None])).resolved
    same = check(feedback, before, rows("rating", [4.5, None, None, None]))
    assert not same.resolved and "did not rise (25% -> 25%)" in same.detail


def test_partial_with_mixed_kinds_is_not_fixed() -> None:
    feedback = FieldFeedback(field="rating", issue="partial")
    before = rows("rating", [4.5, None, None])
    result = check(feedback, before, rows("rating", [4.5, "four", 3]))
    assert not result.resolved and "mixed kinds" in result.detail


def test_partial_at_full_coverage_is_fixed_once_the_kinds_agree() -> None:
    feedback = FieldFeedback(field="rating", issue="partial")
    before = rows("rating", [4.5, "four", 3])
    assert check(feedback, before, rows("rating", [4.5, 4, 3])).resolved


def test_nested_fields_are_checked_by_their_dotted_name() -> None:
    feedback = FieldFeedback(
        field="seller.name", issue="wrong", examples=[FeedbackExample(expected_output="Ana")]
    )
    before = [{"seller": {"name": "?"}}]
    assert check(feedback, before, [{"seller": {"name": "Ana"}}]).resolved


def test_no_prior_analysis_counts_as_zero_coverage() -> None:
    after = rows("title", ["a"])
    result = check_feedback(
        FieldFeedback(field="title", issue="missing"), None, analyze_output(after), after
    )
    assert result.resolved and result.before == 0.0


@pytest.mark.parametrize(
    ("value", "expected", "same"),
    [("249", 249.0, True), (" Oak ", "Oak", True), (True, "true", True), ("1", 2, False)],
)
def test_values_compare_loosely(value: Any, expected: Any, same: bool) -> None:
    feedback = FieldFeedback(
        field="v", issue="wrong", examples=[FeedbackExample(expected_output=expected)]
    )
    assert check(feedback, rows("v", ["x"]), rows("v", [value])).resolved is same


# -- regressions ------------------------------------------------------------------------------


def test_regressions_name_fields_whose_coverage_fell() -> None:
    before = analyze_output([{"a": 1, "b": 2, "c": 3}, {"a": 1, "b": 2, "c": None}])
    after = analyze_output([{"a": 1, "b": None, "c": 3}, {"a": 1, "b": 2, "c": 3}])
    assert regressions(before, after) == ["b"]


def test_regressions_count_a_vanished_field_and_skip_ignored_ones() -> None:
    before = analyze_output([{"a": 1, "b": 2}])
    after = analyze_output([{"a": None}])
    assert regressions(before, after) == ["a", "b"]
    assert regressions(before, after, ignore=["a"]) == ["b"]


def test_no_regression_without_a_baseline_or_with_more_items() -> None:
    after = analyze_output([{"a": None}])
    assert regressions(None, after) == []
    before = analyze_output([{"a": 1}, {"a": None}])
    assert regressions(before, analyze_output([{"a": 1}, {"a": 2}, {"a": None}])) == []


# -- a candidate's per-field changes (what the review screen shows) --------------------------


def test_a_candidate_keeps_each_fields_verdict_and_values_before_and_after() -> None:
    from tui_agent.agents.refine.base import field_changes

    before = rows("price", [None, None, "3", "4"], title="t")
    fixed_price = rows("price", ["1", "2", "3", "4"], title="t")
    price = check(FieldFeedback(field="price", issue="missing"), before, fixed_price)
    lost = rows("title", ["t", None, None, None])
    title = check(FieldFeedback(field="title", issue="wrong"), before, lost)
    changes = field_changes([price, title], before, fixed_price)
    assert [(c.field, c.verdict) for c in changes] == [("price", "fixed"), ("title", "worse")]
    assert changes[0].samples[:2] == [(None, "1"), (None, "2")]
    assert (changes[1].before, changes[1].after) == (1.0, 0.25)


# -- a correct expression over the items' fields ----------------------------------------------

ORDERS = [
    {"qty": 1, "price": 100.0},
    {"qty": 3, "price": 19.99},
    {"qty": 1, "price": 120.0},
    {"qty": 4, "price": 12.5},
]


def orders(totals: list[Any]) -> list[dict[str, Any]]:
    return [{**order, "total": total} for order, total in zip(ORDERS, totals, strict=True)]


def checked(feedback: FieldFeedback, before: list[Any], after: list[Any]) -> FieldCheck:
    """check_feedback with the items before (as a refinement calls it)."""
    return check_feedback(
        feedback, analyze_output(before), analyze_output(after), after, before_items=before
    )


HALF = orders([100.0, None, 120.0, None])
COMPUTED = orders([100.0, 3 * 19.99, 120.0, 50.0])


def test_an_expression_is_computed_per_item_and_fixes_the_field() -> None:
    feedback = FieldFeedback(field="total", issue="missing", correct_expression="qty * price")
    result = checked(feedback, HALF, COMPUTED)
    assert result.resolved and result.verdict == "fixed"
    assert result.matched == (2, 4)
    assert result.detail == "total (missing): 50% -> 100%, fixed"


def test_the_same_value_given_as_text_is_not_fixed_but_improved_never_not_fixed() -> None:
    literal = FieldFeedback(field="total", issue="missing", correct_value="qty * price")
    result = checked(literal, HALF, COMPUTED)
    assert not result.resolved and result.verdict == "improved"
    assert result.detail == (
        "total (missing): 50% -> 100%, improved: the correct value 'qty * price' does not appear"
    )


def test_items_that_do_not_hold_the_expression_are_counted_and_shown() -> None:
    feedback = FieldFeedback(field="total", issue="wrong", correct_expression="qty * price")
    result = checked(feedback, orders([1, 2, 3, 4]), orders([100.0, 59.97, 120.0, 12.5]))
    assert not result.resolved and result.verdict == "improved"  # 0 -> 3 items agree
    assert result.matched == (0, 3)
    assert "1 of 4 items do not hold qty * price (e.g. item 4: 12.5, expected 50.0)" in (
        result.detail
    )


def test_fewer_items_agreeing_is_worse_even_at_the_same_coverage() -> None:
    feedback = FieldFeedback(field="total", issue="wrong", correct_expression="qty * price")
    result = checked(feedback, COMPUTED, orders([100.0, 1.0, 1.0, 50.0]))
    assert result.verdict == "worse" and result.matched == (4, 2)


def test_items_it_cannot_be_computed_for_are_skipped_and_none_at_all_is_a_problem() -> None:
    feedback = FieldFeedback(field="total", issue="missing", correct_expression="qty * price")
    some = [*COMPUTED[:3], {"qty": None, "price": 1.0, "total": 7}]
    assert checked(feedback, HALF, some).resolved
    nothing = [{"qty": None, "price": 1.0, "total": 7}]
    result = checked(feedback, [{"qty": None, "price": 1.0, "total": None}], nothing)
    assert not result.resolved
    assert "qty * price could not be computed for any item (TypeError" in result.detail


def test_an_expression_over_other_names_is_guidance_only() -> None:
    feedback = FieldFeedback(
        field="total", issue="wrong", correct_expression="row['qty'] * row['price']"
    )
    result = checked(feedback, orders([1, 2, 3, 4]), orders([5, 6, 7, 8]))
    assert result.verdict == "changed, not verified"  # nothing checkable: as with notes only
    typo = FieldFeedback(field="total", issue="missing", correct_expression="qty * prcie")
    assert checked(typo, HALF, COMPUTED).resolved  # coverage alone decides a missing field


# -- the verdict: one rule --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("resolved", "verified", "before", "after", "matched", "verdict"),
    [
        (True, True, 0.5, 1.0, None, "fixed"),
        (True, False, 1.0, 1.0, None, "changed, not verified"),
        (False, True, 0.5, 1.0, None, "improved"),
        (False, True, 0.5, 0.5, None, "not fixed"),
        (False, True, 1.0, 0.5, None, "worse"),
        (False, True, 0.5, 0.5, (1, 3), "improved"),
        (False, True, 1.0, 0.5, (1, 3), "improved"),  # more items hold the wanted value
        (False, True, 0.5, 1.0, (3, 1), "worse"),
        (False, True, 0.5, 1.0, (2, 2), "improved"),  # agreement unchanged: coverage decides
    ],
)
def test_judge(
    resolved: bool,
    verified: bool,
    before: float,
    after: float,
    matched: tuple[int, int] | None,
    verdict: str,
) -> None:
    assert judge(resolved, verified, before, after, matched) == verdict


def test_a_missing_field_below_the_target_that_rose_is_improved() -> None:
    result = check(
        FieldFeedback(field="title", issue="missing"),
        rows("title", [None] * 5),
        rows("title", ["a", "b", None, None, None]),
    )
    assert result.verdict == "improved"
    assert result.detail.startswith("title (missing): 0% -> 40%, improved: coverage 40%")
