"""One action turn streamed through litellm: field deltas, call records, re-asks, outcome."""

import asyncio
import json

from support.scripted_model import text

from tui_agent.events import LLMCall
from tui_agent.llm import (
    ActionOutcome,
    FieldComplete,
    FieldDelta,
    InvalidReply,
    next_action,
    stream_action,
)

TASK = [{"role": "user", "content": "Calculate compound interest at 15k, 6%, semi-annual, 6y"}]
TURN = {
    "thought": "I need the compound interest formula A = P(1 + r/n)^(nt) with n = 2 and t = 6.",
    "action": "execute_code",
    "code": "principal = 15000\nrate = 0.06\nprint(principal * (1 + rate / 2) ** 12)",
}


async def test_the_thought_streams_then_the_code_then_the_record_and_the_outcome(server, make_llm):
    server.push(text(json.dumps(TURN), chunk_size=6))
    items = [item async for item in stream_action(make_llm(), TASK, step=1)]
    kinds = [type(item).__name__ for item in items]
    assert kinds[-2:] == ["LLMCall", "ActionOutcome"]
    deltas = [i for i in items if isinstance(i, FieldDelta)]
    thought = [d.text for d in deltas if d.field == "thought"]
    assert len(thought) >= 10  # progressively, not in one piece
    assert "".join(thought) == TURN["thought"]
    assert "".join(d.text for d in deltas if d.field == "code") == TURN["code"]
    completes = [i for i in items if isinstance(i, FieldComplete)]
    assert [(c.field, c.value) for c in completes] == list(TURN.items())
    thought_done = items.index(FieldComplete("thought", TURN["thought"]))
    first_code = next(n for n, i in enumerate(items) if getattr(i, "field", "") == "code")
    assert thought_done < first_code
    outcome = items[-1]
    assert outcome.ok and outcome.error is None and outcome.repairs == ()
    assert outcome.action.model_dump(exclude_none=True) == TURN
    call = items[-2]
    assert isinstance(call, LLMCall)
    assert (call.purpose, call.step, call.model) == ("action", 1, "openai/scripted")
    assert outcome.calls == (call,)
    assert server.requests[0].response_format == {"type": "json_object"}


async def test_a_reask_restarts_the_fields_after_an_invalid_reply(server, make_llm):
    broken = json.dumps({"thought": "first try", "action": "execute_code"})
    server.push(text(broken, chunk_size=5), text(json.dumps(TURN), chunk_size=50))
    items = [item async for item in stream_action(make_llm(), TASK, step=2)]
    invalid = next(i for i in items if isinstance(i, InvalidReply))
    assert invalid == InvalidReply(0, "code is required when action is execute_code", True)
    cut = items.index(invalid)
    before = "".join(
        i.text for i in items[:cut] if isinstance(i, FieldDelta) and i.field == "thought"
    )
    after = "".join(
        i.text for i in items[cut:] if isinstance(i, FieldDelta) and i.field == "thought"
    )
    assert (before, after) == ("first try", TURN["thought"])
    calls = [i for i in items if isinstance(i, LLMCall)]
    assert [c.purpose for c in calls] == ["action", "repair"]
    assert isinstance(items[-1], ActionOutcome) and items[-1].ok
    assert [a.error for a in items[-1].attempts] == [invalid.error, None]


async def test_next_action_feeds_deltas_to_a_sync_or_async_callback(server, make_llm):
    answer = {"thought": "Done.", "action": "provide_answer", "final_answer": "$21,386.41"}
    server.push(text(json.dumps(answer), chunk_size=4), text(json.dumps(answer), chunk_size=4))
    seen: list[FieldDelta] = []
    outcome = await next_action(make_llm(), TASK, seen.append)
    assert outcome.action.final_answer == "$21,386.41"
    assert "".join(d.text for d in seen if d.field == "final_answer") == "$21,386.41"

    async_seen: list[str] = []

    async def on_delta(delta: FieldDelta) -> None:
        await asyncio.sleep(0)
        async_seen.append(delta.text)

    await next_action(make_llm(), TASK, on_delta)
    assert "".join(async_seen) == "".join(d.text for d in seen)


async def test_cancelling_a_turn_mid_stream_leaves_the_client_usable(server, make_llm):
    server.push(text(json.dumps(TURN), chunk_size=2, chunk_delay=0.02), json.dumps(TURN))
    llm = make_llm()
    first_delta = asyncio.Event()

    async def consume() -> None:
        async for item in stream_action(llm, TASK):
            if isinstance(item, FieldDelta):
                first_delta.set()

    task = asyncio.create_task(consume())
    await first_delta.wait()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert task.cancelled()
    outcome = await next_action(llm, TASK)
    assert outcome.ok and len(server.requests) == 2
