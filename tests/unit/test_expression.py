"""Expressions over an item's fields: what is accepted, what it computes, what is refused."""

from __future__ import annotations

from typing import Any

import pytest

from tui_agent.analysis.expression import (
    ExpressionError,
    field_expression,
    first_value,
    parse_expression,
)

ITEM = {"qty": 3, "price": "19.99", "name": "Oak desk", "offer.price": 12.5, "sold": False}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("qty * price", 59.97),
        ("round(qty * price, 1)", 60.0),
        ("offer.price + 1", 13.5),
        ("len(name) >= 3 and not sold", True),
        ("'big' if qty > 2 else 'small'", "big"),
        ("name + ' x' + str(qty)", "Oak desk x3"),
        ("max(qty, 10) - abs(-2)", 8),
        ("qty in (1, 2, 3)", True),
        ("price", "19.99"),
        ("sold or name", "Oak desk"),
    ],
)
def test_allowed_expressions_compute_over_the_item(text: str, value: Any) -> None:
    computed = parse_expression(text).evaluate(ITEM)
    assert computed == pytest.approx(value) if isinstance(value, float) else computed == value


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("__import__('os').system('true')", "may be called"),
        ("open('x')", "may be called"),
        ("(1).real", "attributes are not allowed"),
        ("str.upper(name)", "may be called"),
        ("name[0]", "Subscript is not allowed"),
        ("lambda: 1", "Lambda is not allowed"),
        ("[x for x in name]", "ListComp is not allowed"),
        ("f'{name}'", "JoinedStr is not allowed"),
        ("round(qty, ndigits=2)", "plain arguments"),
        ("max(*name)", r"\* is not allowed"),
        ("qty is None", "compare"),
        ("x := 1", "not an expression"),
        ("len", "is a function"),
        ("qty *", "not an expression"),
        ("a\nb", "one-line"),
    ],
)
def test_anything_else_is_refused_before_it_runs(text: str, why: str) -> None:
    with pytest.raises(ExpressionError, match=why):
        parse_expression(text)


def test_it_names_the_fields_it_reads_once_in_order() -> None:
    expression = parse_expression("qty * price + qty + offer.price")
    assert expression.names == ("qty", "price", "offer.price")
    assert expression.unknown(["qty", "price"]) == ["offer.price"]
    assert parse_expression("1 + 2").is_literal and parse_expression("'EUR'").is_literal


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("missing * 2", "no field missing"),
        ("name / 2", "TypeError"),
        ("qty / 0", "ZeroDivisionError"),
        ("9 ** 9 ** 9", "too large"),
        ("'ab' * 100000", "too long"),
        ("qty ** 500000", "too large"),
        ("int(name)", "ValueError"),
    ],
)
def test_an_item_it_cannot_be_computed_for_raises_expression_error(text: str, why: str) -> None:
    with pytest.raises(ExpressionError, match=why):
        parse_expression(text).evaluate(ITEM)


def test_numbers_written_as_text_count_as_numbers_but_text_plus_text_joins() -> None:
    assert parse_expression("a * b").evaluate({"a": "3", "b": "2.5"}) == 7.5
    assert parse_expression("a + b").evaluate({"a": "3", "b": "4"}) == "34"
    assert parse_expression("a + b").evaluate({"a": "3", "b": 4}) == 7
    assert parse_expression("a < b").evaluate({"a": "10", "b": 9}) is False


def test_an_expression_over_fields_reads_only_fields() -> None:
    fields = ["qty", "price"]
    assert field_expression("qty * price", fields) is not None
    assert field_expression("qty * prcie", fields) is None  # a typo: not over the fields
    assert field_expression("42", fields) is None  # a literal
    assert field_expression("row['q'] * row['p']", fields) is None  # code, not allowed


def test_the_first_item_it_computes_for() -> None:
    expression = parse_expression("qty * price")
    records = [{"qty": None, "price": 1}, {"qty": 2, "price": 4}]
    assert first_value(expression, records) == (1, 8)
    assert first_value(expression, [{"qty": 1}]) is None
