"""A program's tool calls in the event stream: ToolCall.run_step nests them under the step
whose program made them; the agent's own calls stay on the timeline; older events still read."""

from tui_agent.events import (
    SCHEMA_VERSION,
    CodeProposed,
    ExecutionStarted,
    SessionStarted,
    ToolCall,
    ToolResult,
    dump_event,
    parse_event,
)
from tui_agent.report import build_report
from tui_agent.session import StepState, ToolCallState, fold


def events():
    return [
        SessionStarted(kind="toolcode", title="t", seq=1),
        ToolCall(call_id="d1", name="discover_code_files", step=1, seq=2),
        ToolResult(call_id="d1", name="discover_code_files", output="{}", seq=3),
        CodeProposed(step=2, code="...", action="write_code", seq=4),
        ExecutionStarted(step=2, backend="docker", seq=5),
        ToolCall(call_id="c1", name="shop.get_price", arguments={"sku": "x"}, step=2, run_step=2),
        ToolResult(call_id="c1", name="shop.get_price", output="Error: no product", ok=False),
    ]


def test_a_programs_calls_live_in_its_step_and_the_agents_on_the_timeline():
    state = fold(events())
    assert [entry.call.name for entry in state.steps[2].tool_calls] == ["shop.get_price"]
    assert state.steps[2].tool_calls[0].result.output == "Error: no product"
    on_timeline = [e for e in state.timeline if isinstance(e, ToolCallState)]
    assert [entry.call.name for entry in on_timeline] == ["discover_code_files"]
    assert [type(e) for e in state.timeline] == [ToolCallState, StepState]
    assert set(state.tool_calls) == {"d1", "c1"}, "sessions show counts them all"
    [step] = build_report(state).steps
    assert step.tool_calls == [
        {
            "name": "shop.get_price",
            "arguments": {"sku": "x"},
            "ok": False,
            "output": "Error: no product",
            "duration": 0.0,
        }
    ]


def test_run_step_round_trips_and_events_written_before_it_still_read():
    call = events()[5]
    assert parse_event(dump_event(call)) == call
    old = {
        "type": "tool_call",
        "schema_version": SCHEMA_VERSION - 1,
        "call_id": "p1",
        "name": "probe_click",
        "step": 3,
    }
    parsed = parse_event(old)
    assert isinstance(parsed, ToolCall) and parsed.run_step is None
