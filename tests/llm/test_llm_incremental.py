"""Incremental extraction of the action's string fields while the JSON is still arriving."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from tui_agent.llm import FieldComplete, FieldDelta, IncrementalFields

ACTION = {
    "thought": 'Use A = P(1 + r/n)^(nt) with "n" = 2\nthen print — café ✓ 😀',
    "action": "execute_code",
    "code": 'p = 15000\nprint(f"{p * (1 + 0.06/2) ** 12:.2f}")\t# \\ done',
}


def feed_all(text: str, size: int) -> tuple[IncrementalFields, list]:
    fields = IncrementalFields()
    events = []
    for start in range(0, len(text), size):
        events.extend(fields.feed(text[start : start + size]))
    return fields, events


def streamed(events: list, field: str) -> str:
    return "".join(e.text for e in events if isinstance(e, FieldDelta) and e.field == field)


def test_every_chunking_gives_the_decoded_values():
    for ensure_ascii in (True, False):
        text = json.dumps(ACTION, ensure_ascii=ensure_ascii)
        for size in range(1, 12):
            fields, events = feed_all(text, size)
            assert fields.values == ACTION, (ensure_ascii, size)
            assert fields.done
            for name, value in ACTION.items():
                assert streamed(events, name) == value
                assert FieldComplete(name, value) in events


def test_the_thought_arrives_progressively_and_completes_before_the_code_starts():
    _, events = feed_all(json.dumps(ACTION), 5)
    thought = [i for i, e in enumerate(events) if e.field == "thought"]
    first_code = next(i for i, e in enumerate(events) if e.field == "code")
    assert len(thought) > 5
    assert events[thought[-1]] == FieldComplete("thought", ACTION["thought"])
    assert thought[-1] < first_code
    partial = ""
    for event in events[: thought[-1]]:
        partial += event.text
        assert ACTION["thought"].startswith(partial)


def test_a_surrogate_pair_split_between_chunks_is_one_character():
    text = '{"thought": "smile \\ud83d\\ude00 done"}'
    cut = text.index("\\ude00") + 2
    fields = IncrementalFields()
    events = fields.feed(text[:cut]) + fields.feed(text[cut:])
    assert [e.text for e in events if isinstance(e, FieldDelta)] == ["smile ", "😀 done"]
    assert fields.values == {"thought": "smile 😀 done"}


def test_prose_and_fences_before_the_object_are_skipped_and_text_after_it_ignored():
    text = 'Sure! Here it is:\n```json\n{"thought": "t", "code": "x"}\n```\n{"thought": "later"}'
    fields, _ = feed_all(text, 3)
    assert fields.values == {"thought": "t", "code": "x"}


def test_nested_values_and_non_strings_are_skipped():
    text = json.dumps(
        {
            "meta": {"thought": "nested, not top level", "list": ["a", "}", "{"]},
            "n": 3,
            "ok": True,
            "thought": "top",
        }
    )
    fields, events = feed_all(text, 4)
    assert fields.values == {"thought": "top"}
    assert {e.field for e in events} == {"thought"}


def test_literal_newlines_and_invalid_escapes_do_not_stop_the_stream():
    fields, _ = feed_all('{"thought": "line one\nline two", "code": "C:\\qpath"}', 2)
    assert fields.values == {"thought": "line one\nline two", "code": "C:\\qpath"}


def test_text_without_json_yields_nothing():
    fields, events = feed_all("I cannot do that, sorry.", 4)
    assert events == [] and fields.values == {} and not fields.done


def test_a_truncated_object_streams_what_arrived():
    fields, events = feed_all('{"thought": "half a thou', 4)
    assert streamed(events, "thought") == "half a thou"
    assert fields.values == {} and not fields.done


@settings(max_examples=150, deadline=None)
@given(
    values=st.dictionaries(
        st.sampled_from(["thought", "action", "code", "final_answer", "x y", 'q"k']),
        st.text(),
        min_size=1,
    ),
    sizes=st.lists(st.integers(min_value=1, max_value=9), min_size=1, max_size=30),
    ensure_ascii=st.booleans(),
)
def test_any_object_in_any_chunking_matches_json_loads(values, sizes, ensure_ascii):
    text = json.dumps(values, ensure_ascii=ensure_ascii)
    fields, events, pos, k = IncrementalFields(), [], 0, 0
    while pos < len(text):
        size = sizes[k % len(sizes)]
        events.extend(fields.feed(text[pos : pos + size]))
        pos, k = pos + size, k + 1
    expected = json.loads(text)
    assert fields.values == expected
    for name, value in expected.items():
        assert streamed(events, name) == value
