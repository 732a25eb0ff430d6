"""Output analysis: the spec's behaviour (seed 000 section 2), issue 2's changes, invariants."""

import math
from collections import Counter
from datetime import date, datetime
from decimal import Decimal
from fractions import Fraction
from itertools import chain

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui_agent.analysis import analyze_output, flatten_item, is_empty
from tui_agent.analysis.kinds import is_date_text, majority_kind, value_kind
from tui_agent.analysis.shapes import OutputAnalysis


def only_field(items):
    [field] = analyze_output(items).fields
    return field


# --- shape of the result (the spec's early returns) ---------------------------------------


@pytest.mark.parametrize("result", ["text", 42, 1.5, None, True, date(2024, 1, 1)])
def test_non_list_is_a_primitive_with_no_items(result):
    analysis = analyze_output(result)
    assert (analysis.type, analysis.is_structured, analysis.item_count) == ("primitive", False, 0)
    assert analysis.fields == []


def test_dict_is_an_object_with_no_items():
    analysis = analyze_output({"a": 1, "b": [1, 2]})
    assert (analysis.type, analysis.is_structured, analysis.item_count) == ("object", False, 0)


def test_empty_list_is_an_unstructured_array():
    analysis = analyze_output([])
    assert (analysis.type, analysis.is_structured, analysis.item_count) == ("array", False, 0)


@pytest.mark.parametrize(
    "result",
    [[1, 2, 3], [{"a": 1}, 2, {"a": 3}], [{"a": 1}, None, {"a": 3}], [{"a": 1}, [1], {"a": 2}]],
)
def test_list_not_all_dicts_is_an_unstructured_array_counting_its_items(result):
    analysis = analyze_output(result)
    assert (analysis.type, analysis.is_structured, analysis.item_count) == ("array", False, 3)
    assert analysis.fields == []


def test_list_of_dicts_is_structured_with_fields_in_first_seen_order():
    analysis = analyze_output(
        [{"title": "Lamp", "price": 10}, {"price": 0, "url": "https://x.test/1"}, {"title": "A"}]
    )
    assert (analysis.type, analysis.is_structured, analysis.item_count) == ("array", True, 3)
    assert [f.name for f in analysis.fields] == ["title", "price", "url"]
    assert analysis.field("url").populated == 1
    assert analysis.field("nothing") is None


def test_tuple_of_dicts_is_an_array_too():
    assert analyze_output(({"a": 1}, {"a": 2})).item_count == 2


def test_list_of_empty_dicts_is_structured_with_no_fields():
    analysis = analyze_output([{}, {}])
    assert (analysis.is_structured, analysis.item_count, analysis.fields) == (True, 2, [])


# --- coverage, required, populated, examples ----------------------------------------------


def records(populated: int, total: int) -> list[dict]:
    return [{"v": "x"}] * populated + [{"v": None}] * (total - populated)


@pytest.mark.parametrize(
    ("populated", "total", "coverage"),
    [
        (1, 8, 13),  # 12.5 rounds up, not to the even 12
        (3, 8, 38),  # 37.5
        (5, 8, 63),  # 62.5
        (7, 8, 88),  # 87.5
        (1, 200, 1),  # 0.5 -> 1, as Math.round(0.5)
        (1, 201, 0),  # 0.497...
        (1, 3, 33),
        (2, 3, 67),
        (0, 5, 0),
        (5, 5, 100),
        (199, 200, 100),  # 99.5
    ],
)
def test_coverage_rounds_half_up_like_math_round(populated, total, coverage):
    field = only_field(records(populated, total))
    assert (field.coverage, field.populated) == (coverage, populated)


@pytest.mark.parametrize(
    ("populated", "total", "required"),
    [(7, 10, False), (8, 10, True), (70, 100, False), (71, 100, True), (21, 30, False),
     (22, 30, True), (1, 1, True), (0, 1, False)],
)  # fmt: skip
def test_required_means_more_than_70_percent_exactly(populated, total, required):
    # 21/30 is exactly 70 %; JavaScript's 30 * 0.7 = 20.999... would call it required.
    assert only_field(records(populated, total)).required is required


def test_examples_are_the_first_three_populated_values_in_record_order():
    items = [{"v": None}, {"v": "a"}, {"v": ""}, {"v": 0}, {"v": False}, {"v": "d"}, {"v": "e"}]
    assert only_field(items).examples == ["a", 0, False]


def test_missing_key_counts_as_empty():
    items = [{"a": 1, "b": "x"}, {"a": 2}, {"a": 3}, {"a": 4}]
    field = analyze_output(items).field("b")
    assert (field.populated, field.coverage, field.required) == (1, 25, False)


@pytest.mark.parametrize("empty", [None, "", "   ", "\t\n ", [], {}, (), math.nan, ["", None, " "],
                                   [[], {}], Decimal("NaN")])  # fmt: skip
def test_empty_values_are_not_populated(empty):
    assert is_empty(empty)
    field = only_field([{"v": empty}, {"v": empty}])
    assert (field.populated, field.coverage, field.type_counts, field.examples) == (0, 0, {}, [])
    assert field.type == "string"


@pytest.mark.parametrize("value", [0, 0.0, False, "0", "false", [0], [False], -1, math.inf])
def test_zero_and_false_are_values(value):
    # Unlike the spec's JavaScript truthiness test, 0 and False count as data.
    assert not is_empty(value)
    field = only_field([{"v": value}, {"v": None}])
    assert (field.populated, field.coverage, field.examples) == (1, 50, [value])


def test_dict_holding_only_zero_is_flattened_and_populated():
    field = only_field([{"v": {"k": 0}}])
    assert (field.name, field.populated, field.type) == ("v.k", 1, "number")


# --- kinds ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (True, "boolean"),
        (False, "boolean"),
        (1, "number"),
        (-2.5, "number"),
        (math.inf, "number"),
        (Decimal("1.10"), "number"),
        (Fraction(1, 3), "number"),
        ("42", "string"),  # numeric text stays text (ids, zip codes)
        ("19.99", "string"),
        ("hello", "string"),
        ("https://example.com/a?b=1", "url"),
        ("http://x", "url"),
        ("HTTPS://EXAMPLE.COM", "url"),
        ("  https://padded.test  ", "url"),
        ("Http://mixed.case", "string"),
        ("ftp://example.com", "string"),
        ("www.example.com", "string"),
        ("2024-01-31", "date"),
        (" 2024-01-31 ", "date"),
        ("2024-01-31T10:20:30Z", "date"),
        ("2024-01-31T10:20:30.123+02:00", "date"),
        ("2024-01-31 10:20", "date"),
        ("2024-02-30", "string"),  # not a calendar date
        ("2024-01-31x10:20", "string"),
        ("2024-01-31T25:00", "string"),
        ("20240131", "string"),
        ("31/01/2024", "date"),  # day first
        ("01/31/2024", "date"),  # month first
        ("1/2/2024", "date"),
        ("2024/1/31", "date"),
        ("13/13/2024", "string"),
        ("31/31/2024", "string"),
        ("1/2/24", "string"),
        ("Jan 31, 2024", "string"),
        (date(2024, 1, 31), "date"),
        (datetime(2024, 1, 31, 10, 0), "date"),
        (["https://a.test", "https://b.test"], "url"),
        (["a", 1, 2], "number"),
        (["a", 1], "string"),  # tie: the more general kind
        ([None, "", 3], "number"),
        ([{"a": 1}, {"b": 2}], "string"),
        ([["2024-01-01"], "2024-01-02"], "date"),
        (object(), "string"),
    ],
)
def test_value_kind(value, kind):
    assert value_kind(value) == kind
    if not isinstance(value, list):
        assert only_field([{"v": value}]).type == kind


def test_date_text_needs_iso_or_slash_form():
    assert is_date_text("2024-12-31T23:59:59")
    assert not is_date_text("2024-1-31")
    assert not is_date_text("0000-01-01")
    assert not is_date_text("12/31/1999/")


def test_type_is_the_majority_kind_with_counts_and_mixed_flag():
    items = [{"v": "a"}, {"v": 1}, {"v": 2}, {"v": "https://x.test"}, {"v": None}]
    field = only_field(items)
    assert field.type == "number"
    assert field.type_counts == {"string": 1, "number": 2, "url": 1}
    assert field.mixed
    assert field.populated == 4


def test_single_kind_is_not_mixed():
    field = only_field([{"v": 1}, {"v": 2.5}, {"v": None}])
    assert (field.type, field.type_counts, field.mixed) == ("number", {"number": 2}, False)


@pytest.mark.parametrize(
    ("values", "kind"),
    [
        (["a", 1], "string"),
        ([1, "2024-01-01"], "number"),
        (["2024-01-01", "https://a.test"], "date"),
        (["https://a.test", True], "url"),
        ([True, False, 1, 2], "number"),
    ],
)
def test_ties_go_to_the_more_general_kind(values, kind):
    assert only_field([{"v": v} for v in values]).type == kind
    assert only_field([{"v": v} for v in reversed(values)]).type == kind


def test_bool_is_never_counted_as_number():
    field = only_field([{"v": True}, {"v": False}, {"v": 1}])
    assert field.type_counts == {"number": 1, "boolean": 2}


def test_list_of_scalars_is_one_field_typed_by_its_members():
    items = [{"images": ["https://a.test/1.png", "https://a.test/2.png"]}, {"images": []},
             {"images": ["https://a.test/3.png"]}, {"images": ["", None]}]  # fmt: skip
    field = only_field(items)
    assert (field.name, field.type, field.populated, field.coverage) == ("images", "url", 2, 50)
    assert field.examples == [["https://a.test/1.png", "https://a.test/2.png"],
                              ["https://a.test/3.png"]]  # fmt: skip


def test_repeated_text_lists_are_counted_per_record():
    items = [{"tags": ["a", "b"]}] * 3 + [{"tags": ["2024-01-01"]}] * 2 + [{"tags": [" "]}]
    field = only_field(items)
    assert (field.type_counts, field.populated) == ({"string": 3, "date": 2}, 5)


def test_list_of_dicts_is_one_field_not_flattened():
    items = [{"offers": [{"price": 1}, {"price": 2}]}, {"offers": [{}]}]
    field = only_field(items)
    assert (field.name, field.type, field.populated) == ("offers", "string", 1)


# --- flattening -----------------------------------------------------------------------------


def test_flatten_item_makes_dotted_names_recursively_in_depth_first_order():
    item = {"a": 1, "seller": {"name": "Ann", "address": {"city": "Oslo"}}, "b": [1, {"c": 2}]}
    assert flatten_item(item) == {
        "a": 1,
        "seller.name": "Ann",
        "seller.address.city": "Oslo",
        "b": [1, {"c": 2}],
    }
    assert list(flatten_item(item)) == ["a", "seller.name", "seller.address.city", "b"]


def test_flatten_item_keeps_an_empty_dict_as_a_value():
    assert flatten_item({"seller": {}, "x": {"y": {}}}) == {"seller": {}, "x.y": {}}


def test_flatten_item_escapes_dots_and_backslashes_in_keys():
    item = {"a.b": 1, "a": {"b": 2}, "c\\": {"d": 3}, "c\\.d": 4}
    assert flatten_item(item) == {"a\\.b": 1, "a.b": 2, "c\\\\.d": 3, "c\\\\\\.d": 4}


def test_flatten_item_names_other_keys_with_str_and_the_later_key_wins():
    assert flatten_item({1: "a", None: "b", "1": "c"}) == {"1": "c", "None": "b"}


def test_nested_fields_are_analysed_under_dotted_names_in_their_parents_place():
    items = [
        {"a": 1, "seller": {"name": "Ann", "url": "https://s.test/1"}, "b": True},
        {"a": 2, "seller": {"name": "", "rating": 4.5}},
        {"a": 3, "seller": None},
        {"a": 4},
    ]
    analysis = analyze_output(items)
    names = [f.name for f in analysis.fields]
    assert names == ["a", "seller", "seller.name", "seller.url", "seller.rating", "b"]
    assert analysis.field("seller").populated == 0  # only None where it is not a dict
    name = analysis.field("seller.name")
    assert (name.populated, name.coverage, name.examples) == (1, 25, ["Ann"])
    assert analysis.field("seller.url").type == "url"
    assert analysis.field("seller.rating").type_counts == {"number": 1}


def test_key_always_holding_objects_has_no_field_of_its_own():
    analysis = analyze_output([{"s": {"x": 1}}, {"s": {"x": 2, "y": "z"}}])
    assert [f.name for f in analysis.fields] == ["s.x", "s.y"]


def test_key_holding_objects_and_values_has_both():
    analysis = analyze_output([{"s": "plain"}, {"s": {"x": 1}}, {"s": {}}])
    assert [(f.name, f.populated) for f in analysis.fields] == [("s", 1), ("s.x", 1)]
    assert analysis.field("s").examples == ["plain"]


def test_dotted_keys_and_nested_keys_stay_apart():
    analysis = analyze_output([{"a.b": "literal", "a": {"b": 5}}])
    assert {f.name: f.type for f in analysis.fields} == {"a\\.b": "string", "a.b": "number"}


def test_non_string_keys_are_named_like_flatten_item():
    analysis = analyze_output([{1: "x", "2": 2}, {1: "y"}])
    assert [(f.name, f.populated) for f in analysis.fields] == [("1", 2), ("2", 1)]


# --- properties -----------------------------------------------------------------------------

texts = st.sampled_from(["", " ", "\t", "a", " b ", "42", "https://x.test/p", "HTTP://Y",
                         "2024-02-29", "2023-02-29", "2024-01-31T10:00Z", "31/12/2024",
                         "12/31/2024", "2024/2/3", "Http://no"]) | st.text(max_size=6)  # fmt: skip
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(allow_nan=True, allow_infinity=True)
    | texts
    | st.dates(min_value=date(2000, 1, 1), max_value=date(2030, 1, 1))
)
keys = st.sampled_from(["a", "b", "c", "d.e", "f\\", "g\\.", 1, "1"])
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=6,
)
record_lists = st.lists(st.dictionaries(keys, values, max_size=5), min_size=1, max_size=12)
# No per-example deadline: these run on busy CI machines next to other suites.
properties = settings(deadline=None)


def reference_fields(items):
    """A naive record-by-record analysis built on flatten_item, is_empty and value_kind."""
    flats = [flatten_item(item) for item in items]
    fields = {}
    for name in dict.fromkeys(chain.from_iterable(flats)):
        populated = [f[name] for f in flats if name in f and not is_empty(f[name])]
        counts = Counter(map(value_kind, populated))
        fields[name] = {
            "type": majority_kind(counts),
            "type_counts": dict(counts),
            "populated": len(populated),
            "examples": populated[:3],
        }
    return fields


@properties
@given(record_lists)
def test_bulk_analysis_equals_the_naive_record_by_record_one(items):
    analysis = analyze_output(items)
    got = {
        f.name: {
            "type": f.type,
            "type_counts": f.type_counts,
            "populated": f.populated,
            "examples": f.examples,
        }
        for f in analysis.fields
    }
    assert len(got) == len(analysis.fields)  # no name twice
    assert got == reference_fields(items)


@properties
@given(record_lists)
def test_field_invariants(items):
    analysis = analyze_output(items)
    total = len(items)
    assert analysis.is_structured and analysis.item_count == total
    for field in analysis.fields:
        assert 0 <= field.coverage <= 100
        assert 0 <= field.populated <= total
        assert sum(field.type_counts.values()) == field.populated
        assert all(count > 0 for count in field.type_counts.values())
        assert field.mixed == (len(field.type_counts) > 1)
        assert field.type in field.type_counts or (field.populated == 0 and field.type == "string")
        assert field.type_counts.get(field.type, 0) == max(field.type_counts.values(), default=0)
        assert len(field.examples) == min(3, field.populated)
        assert not any(map(is_empty, field.examples))
        assert field.required == (Fraction(field.populated, total) > Fraction(7, 10))
        assert field.coverage == math.floor(Fraction(field.populated * 100, total) + Fraction(1, 2))
    names = {f.name for f in analysis.fields}
    assert names == set(chain.from_iterable(map(flatten_item, items)))


@properties
@given(st.lists(st.dictionaries(st.sampled_from("abcdef"), scalars, max_size=4), min_size=1,
                max_size=12))  # fmt: skip
def test_flat_records_keep_first_seen_key_order(items):
    names = [f.name for f in analyze_output(items).fields]
    assert names == list(dict.fromkeys(chain.from_iterable(items)))


@properties
@given(record_lists, st.randoms(use_true_random=False))
def test_counts_do_not_depend_on_record_order(items, random):
    shuffled = random.sample(items, len(items))

    def summary(analysis):
        return {
            f.name: (f.type, f.type_counts, f.coverage, f.populated, f.required, f.mixed)
            for f in analysis.fields
        }

    assert summary(analyze_output(shuffled)) == summary(analyze_output(items))


@properties
@given(record_lists)
def test_analysis_survives_a_json_round_trip(items):
    analysis = analyze_output(items)
    restored = OutputAnalysis.model_validate_json(analysis.model_dump_json())
    assert [(f.name, f.type_counts, f.coverage) for f in restored.fields] == [
        (f.name, f.type_counts, f.coverage) for f in analysis.fields
    ]
