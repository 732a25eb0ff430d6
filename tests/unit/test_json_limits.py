"""JSON nesting is measured on the text, without recursion, brackets in strings left out."""

import json

import pytest

from tui_agent.json_limits import JsonTooDeep, check_depth, loads, nesting_depth


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ("1", 0),
        ("[]", 1),
        ('{"a": [1, {"b": []}]}', 4),
        ('["[[[[", "\\"[[[", {"k]": "}}}"}]', 2),
        ('"\\\\"', 0),
    ],
)
def test_nesting_depth_counts_arrays_and_objects_outside_strings(text: str, depth: int) -> None:
    json.loads(text)  # every case is valid JSON
    assert nesting_depth(text) == depth


def test_loads_refuses_deep_nesting_whatever_parses_it() -> None:
    assert loads("[" * 100 + "]" * 100) == json.loads("[" * 100 + "]" * 100)
    for depth in (101, 150, 100_000):  # Python's parser: fine, fine, RecursionError
        with pytest.raises(JsonTooDeep, match=r"^JSON nested more than 100 levels deep$"):
            loads("[" * depth + "]" * depth)
    with pytest.raises(JsonTooDeep):
        check_depth('{"a": ' * 20 + "1" + "}" * 20, limit=10)
    check_depth('["' + "[" * 500 + '"]', limit=10)  # brackets in a string do not nest


def test_loads_keeps_json_errors_as_they_are() -> None:
    with pytest.raises(json.JSONDecodeError):
        loads('"' + '\\"' * 200_000 + "[" * 200)  # unterminated: the parser says so first
