"""The event union: lossless JSON round trip and schema-version guard."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from tui_agent.analysis.shapes import FieldDefinition, FieldFeedback, OutputAnalysis
from tui_agent.events import (
    SCHEMA_VERSION,
    CodeProposed,
    ErrorInfo,
    EventSchemaError,
    ExecutionFinished,
    FeedbackSubmitted,
    LLMCall,
    LogLine,
    OutputAnalyzed,
    SessionEnded,
    SessionStarted,
    ThoughtDelta,
    ToolCall,
    current_kind,
    dump_event,
    parse_event,
)
from tui_agent.session import fold

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)

SAMPLES = [
    SessionStarted(kind="code", title="t", model="m", params={"a": [1, 2.5]}),
    ThoughtDelta(step=1, text="I need"),
    CodeProposed(step=1, code="print(1)\n"),
    ExecutionFinished(
        step=1,
        success=False,
        result={"x": [1, None]},
        logs=[LogLine(stream="stderr", text="boom")],
        error=ErrorInfo(type="NameError", message="name 'n' is not defined", traceback="..."),
        timed_out=True,
        non_serializable=["context['e']: email.message.Message"],
    ),
    OutputAnalyzed(
        analysis=OutputAnalysis(
            type="array",
            is_structured=True,
            item_count=2,
            fields=[FieldDefinition(name="a.b", type="url", type_counts={"url": 1}, coverage=50)],
        )
    ),
    FeedbackSubmitted(feedback=[FieldFeedback(field="price", issue="format", notes="EUR")]),
    LLMCall(model="openai/x", prompt_tokens=3, completion_tokens=4, cost=None, latency=0.25),
    SessionEnded(status="cancelled", stopped_reason="cancelled"),
]


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: e.type)
def test_round_trip_is_lossless(event):
    text = dump_event(event)
    parsed = parse_event(text)
    assert parsed == event
    assert dump_event(parsed) == text
    assert parse_event(json.loads(text)) == event


@given(result=json_values, ts=st.floats(min_value=0, max_value=4e9), seq=st.integers(0, 10**9))
def test_any_json_result_round_trips(result, ts, seq):
    event = ExecutionFinished(step=1, success=True, result=result, ts=ts, seq=seq)
    assert parse_event(dump_event(event)) == event


def test_every_event_carries_the_schema_version():
    for event in SAMPLES:
        assert json.loads(dump_event(event))["schema_version"] == SCHEMA_VERSION


def test_newer_schema_is_refused_with_a_clear_message():
    data = json.loads(dump_event(SAMPLES[0]))
    data["schema_version"] = SCHEMA_VERSION + 1
    data["type"] = "something_new"
    with pytest.raises(EventSchemaError, match="newer than this tui-agent supports"):
        parse_event(json.dumps(data))


def test_unknown_type_and_extra_fields_are_rejected():
    with pytest.raises(ValidationError):
        parse_event('{"type": "nope", "session_id": "x"}')
    data = json.loads(dump_event(SAMPLES[1]))
    data["surprise"] = 1
    with pytest.raises(ValidationError):
        parse_event(data)


def test_older_sessions_read_under_the_current_names_and_stay_as_recorded():
    """Schema 9 recorded the command `code` as kind `codeact` and a recipe command's item in
    `step`: the fold and the item grouping read today's names, while the events themselves
    stay as recorded (an export is the imported file, byte for byte)."""
    old_start = {"type": "session_started", "schema_version": 9, "kind": "codeact", "title": "t"}
    started = parse_event(old_start)
    assert started.kind == "codeact" and current_kind(started.kind) == "code"
    assert fold([started]).kind == "code"
    assert '"kind":"codeact"' in dump_event(started)
    old_call = {"type": "tool_call", "schema_version": 9, "call_id": "c1", "name": "CLICK"}
    old = parse_event({**old_call, "step": 3})
    assert (old.step, old.item, old.recipe_item) == (3, None, 3)
    assert parse_event({**old_call, "step": 0}).recipe_item is None
    new = parse_event(dump_event(ToolCall(call_id="c2", name="run", step=2)))
    assert (new.step, new.item, new.recipe_item) == (2, None, None)
    assert parse_event(dump_event(ToolCall(call_id="c3", name="CLICK", item=4))).recipe_item == 4
    assert dump_event(parse_event(dump_event(old))) == dump_event(old)
