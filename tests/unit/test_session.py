"""The session fold: state is a pure function of the events."""

from tui_agent.analysis.shapes import FieldFeedback, OutputAnalysis
from tui_agent.events import (
    CodeProposed,
    Error,
    ExecutionFinished,
    ExecutionStarted,
    FeedbackSubmitted,
    FinalAnswer,
    ItemsExtracted,
    LLMCall,
    OutputAnalyzed,
    PhaseFinished,
    PhaseStarted,
    SessionEnded,
    SessionStarted,
    Thought,
    ThoughtDelta,
    ToolCall,
    ToolResult,
)
from tui_agent.session import PhaseState, StepState, ToolCallState, fold


def stamp(events):
    return [
        e.model_copy(update={"session_id": "s1", "seq": i, "ts": 100.0 + i})
        for i, e in enumerate(events, 1)
    ]


EVENTS = stamp(
    [
        SessionStarted(kind="code", title="interest", model="openai/scripted"),
        ThoughtDelta(step=1, text="I need "),
        ThoughtDelta(step=1, text="the formula"),
        CodeProposed(step=1, code="x"),
        ExecutionStarted(step=1, backend="docker"),
        LLMCall(model="m", prompt_tokens=10, completion_tokens=5, cost=0.5),
        ExecutionFinished(step=1, success=False),
        Thought(step=2, text="fix"),
        LLMCall(model="m", prompt_tokens=1, completion_tokens=1, cost=None),
        ItemsExtracted(items=[{"a": 1}, {"a": 2}]),
        ItemsExtracted(items=[{"a": 3}]),
        OutputAnalyzed(analysis=OutputAnalysis(type="array", item_count=3)),
        FeedbackSubmitted(feedback=[FieldFeedback(field="a", issue="missing")]),
        PhaseStarted(phase="plan"),
        ToolCall(call_id="c1", name="probe_click", arguments={"selector": "a"}),
        ToolResult(call_id="c1", name="probe_click", output="URL changed"),
        PhaseFinished(phase="plan", duration=1.5),
        FinalAnswer(step=3, text="42"),
        SessionEnded(status="completed"),
    ]
)


def test_fold_builds_steps_items_and_totals():
    state = fold(EVENTS)
    assert state.session_id == "s1" and state.kind == "code" and state.status == "completed"
    assert state.steps[1].thought == "I need the formula"
    assert not state.steps[1].thought_complete and state.steps[2].thought_complete
    assert state.steps[1].execution is EVENTS[6] and not state.steps[1].running
    assert state.items == [{"a": 1}, {"a": 2}, {"a": 3}]
    assert state.analysis is not None and state.analysis.item_count == 3
    assert [f.field for f in state.feedback] == ["a"]
    assert (state.prompt_tokens, state.completion_tokens, state.total_tokens) == (11, 6, 17)
    assert state.cost == 0.5 and state.unknown_cost_calls == 1
    assert state.final_answer == "42"
    assert state.duration == EVENTS[-1].ts - EVENTS[0].ts
    assert state.phases[0].finished is EVENTS[16]
    assert state.tool_calls["c1"].result is EVENTS[15]


def test_timeline_keeps_first_appearance_order():
    kinds = [type(entry) for entry in fold(EVENTS).timeline]
    assert kinds == [StepState, StepState, FeedbackSubmitted, PhaseState, ToolCallState, StepState]


def test_summary_reports_partial_and_unknown_cost():
    summary = fold(EVENTS).summary()
    assert summary.cost == 0.5 and not summary.cost_complete
    assert summary.item_count == 3 and summary.step_count == 3 and summary.event_count == 19
    only_unknown = fold(stamp([SessionStarted(kind="task", title="t"), LLMCall(model="m")]))
    assert only_unknown.cost is None
    assert fold(stamp([SessionStarted(kind="task", title="t")])).cost is None


def test_replace_items_and_running_state():
    state = fold(
        stamp(
            [
                SessionStarted(kind="exec", title="t"),
                ItemsExtracted(items=[1, 2]),
                ItemsExtracted(items=[3], replace=True),
                ExecutionStarted(step=1, backend="local", isolated=False),
                Error(message="boom"),
            ]
        )
    )
    assert state.items == [3]
    assert state.steps[1].running and not state.steps[1].isolated
    assert state.status == "running" and state.errors[0].message == "boom"


def test_fold_of_a_prefix_equals_incremental_application():
    for n in range(len(EVENTS) + 1):
        incremental = fold(EVENTS[: max(0, n - 1)])
        if n:
            incremental.apply(EVENTS[n - 1])
        assert incremental.summary() == fold(EVENTS[:n]).summary()


def test_an_interrupted_session_ends_where_its_last_event_was():
    events = stamp(
        [
            SessionStarted(kind="exec", title="t"),
            ItemsExtracted(items=[1]),
            SessionEnded(status="interrupted", stopped_reason="process_gone"),
        ]
    )
    events[-1] = events[-1].model_copy(update={"ts": events[-2].ts})  # as the store stamps it
    summary = fold(events).summary()
    assert (summary.status, summary.stopped_reason) == ("interrupted", "process_gone")
    assert summary.ended_at == events[1].ts and summary.duration == events[1].ts - events[0].ts
    assert summary.item_count == 1


def test_model_calls_are_counted_per_step_even_before_the_step_shows() -> None:
    from tui_agent.events import LLMCall, Thought

    state = fold(
        [
            LLMCall(model="m", step=2, purpose="action"),  # a reply with no thought streamed
            LLMCall(model="m", step=2, purpose="repair"),
            Thought(step=2, text="I'll run it."),
            LLMCall(model="m", step=3),
            Thought(step=3, text="Again."),
            LLMCall(model="m", step=3),
            LLMCall(model="m"),  # a call that belongs to no step
        ]
    )
    assert {i: s.model_calls for i, s in state.steps.items()} == {2: 2, 3: 2}
    assert state.llm_calls == 5
