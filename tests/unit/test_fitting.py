"""Fitting a conversation into the model's context, counted with litellm's real tokenizer."""

import copy
import itertools
import json

import pytest

from tui_agent.agents.codeact_prompts import RESULT_PREFIX
from tui_agent.agents.step_loop.fitting import SUMMARY_HEADER, Fitted, fit_history
from tui_agent.llm import Message, context_limit, count_tokens
from tui_agent.llm.runtime import litellm

MODEL = "openai/gpt-4o-mini"
RESERVE = 256
SYSTEM: Message = {"role": "system", "content": "You solve tasks by writing Python code."}
TASK: Message = {"role": "user", "content": "Count the lines of every CSV file in /workspace."}


def output(turn: int, chars: int) -> str:
    lines = [f"row {turn}.{i}: value={(i * 37 + turn) % 101} status=ok" for i in range(chars)]
    return "\n".join(lines)[:chars]


def code(turn: int, lines: int = 3) -> str:
    body = "\n".join(f"total_{turn}_{i} = sum(range({i * 13 + turn}))" for i in range(lines))
    return json.dumps({"thought": f"step {turn}", "action": "execute_code", "code": body})


def codeact_history(turns: int, out_chars: int = 4000, code_lines: int = 3) -> list[Message]:
    messages = [SYSTEM, TASK]
    for turn in range(turns):
        messages.append({"role": "assistant", "content": code(turn, code_lines)})
        messages.append({"role": "user", "content": RESULT_PREFIX + output(turn, out_chars)})
    return messages


def toolcode_history(turns: int, out_chars: int = 3000) -> list[Message]:
    """Native tool calls: an assistant message with two calls, then one tool message each."""
    messages = [SYSTEM, TASK]
    for turn in range(turns):
        ids = [f"call_{turn}_a", f"call_{turn}_b"]
        calls = [
            {"id": i, "type": "function", "function": {"name": "read", "arguments": "{}"}}
            for i in ids
        ]
        messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        messages += [
            {"role": "tool", "tool_call_id": i, "content": output(turn, out_chars)} for i in ids
        ]
    return messages


def text_protocol_history(turns: int, out_chars: int = 3000) -> list[Message]:
    messages = [SYSTEM, TASK]
    for turn in range(turns):
        messages.append({"role": "assistant", "content": f'CALL read {{"n": {turn}}}'})
        body = f'RESULT read {{"n": {turn}}}\n' + output(turn, out_chars)
        messages.append({"role": "user", "content": body})
    return messages


def last_turns(messages: list[Message], turns: int) -> list[Message]:
    """The last `turns` turns, each starting at an assistant message."""
    starts = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    return messages[starts[-turns] :]


def same(a: list[Message], b: list[Message]) -> bool:
    return json.dumps(a) == json.dumps(b)


def assert_well_formed(messages: list[Message]) -> None:
    """Every tool message follows the assistant message that called it; every call is
    answered; no two assistant messages in a row."""
    for before, after in itertools.pairwise(messages):
        assert not (before["role"] == after["role"] == "assistant"), "two assistant messages"
    for index, message in enumerate(messages):
        if message["role"] == "assistant" and message.get("tool_calls"):
            answered = []
            for follower in messages[index + 1 :]:
                if follower["role"] != "tool":
                    break
                answered.append(follower["tool_call_id"])
            assert answered == [call["id"] for call in message["tool_calls"]]
        if message["role"] == "tool":
            owner = index - 1
            while messages[owner]["role"] == "tool":
                owner -= 1
            ids = [call["id"] for call in messages[owner].get("tool_calls") or ()]
            assert message["tool_call_id"] in ids, f"orphan tool message at {index}"


class Summariser:
    """Records what it was asked to summarise; fails when told to."""

    def __init__(self, reply: str = "They summed ranges; totals were all positive.", fail=False):
        self.reply, self.fail = reply, fail
        self.calls: list[list[Message]] = []

    async def __call__(self, messages: list[Message]) -> str:
        self.calls.append(messages)
        if self.fail:
            raise RuntimeError("the model is unreachable")
        return self.reply


# -- the model's limit and the count ---------------------------------------------------------
def test_context_limit_is_the_input_limit_from_litellm_or_the_override():
    assert context_limit(MODEL) == 128_000  # max_input_tokens, not max_tokens (16,384 out)
    assert context_limit(MODEL, override=9_000) == 9_000
    assert context_limit("openai/local") is None
    assert context_limit("openai/local", override=4096) == 4096


def test_count_tokens_uses_litellm_and_falls_back_to_characters_when_it_cannot():
    messages = codeact_history(2)
    assert count_tokens(MODEL, messages) == litellm().token_counter(model=MODEL, messages=messages)
    odd = [{"role": "user", "content": [{"type": "weird", "payload": "x" * 400}]}]
    assert count_tokens(MODEL, odd) == pytest.approx(len(json.dumps(odd)) / 4, abs=1)


# -- 0. nothing to do ----------------------------------------------------------------------------
async def test_a_history_that_fits_with_the_reserve_is_left_alone():
    messages = codeact_history(3)
    tokens = count_tokens(MODEL, messages)
    assert await fit_history(messages, model=MODEL, limit=tokens + RESERVE, reserve=RESERVE) is None
    fitted = await fit_history(messages, model=MODEL, limit=tokens + RESERVE - 1, reserve=RESERVE)
    assert fitted is not None and fitted.before == tokens


# -- 1. older outputs shortened --------------------------------------------------------------
async def test_the_oldest_output_is_shortened_first_and_nothing_else_changes():
    messages = codeact_history(8)
    original = copy.deepcopy(messages)
    summariser = Summariser()
    limit = count_tokens(MODEL, messages) + RESERVE - 50  # one excerpt is enough
    fitted = await fit_history(
        messages, model=MODEL, limit=limit, reserve=RESERVE, summarise=summariser
    )
    assert fitted is not None and (fitted.shortened, fitted.summarised, fitted.dropped) == (1, 0, 0)
    assert summariser.calls == []
    assert same(messages, original)  # the caller's history is not changed
    oldest = fitted.messages[3]["content"]
    assert oldest.startswith(RESULT_PREFIX + "row 0.0")
    assert "characters cut]" in oldest and oldest.endswith(original[3]["content"][-200:])
    assert same(fitted.messages[:3] + fitted.messages[4:], original[:3] + original[4:])
    assert fitted.after <= limit - RESERVE


async def test_outputs_go_down_to_one_line_when_excerpts_are_not_enough():
    messages = codeact_history(8)
    head_and_last = count_tokens(MODEL, messages[:2] + last_turns(messages, 4))
    middle_code = count_tokens(MODEL, [m for m in messages[2:10] if m["role"] == "assistant"])
    limit = head_and_last + middle_code + 300 + RESERVE  # room for one-line outputs only
    fitted = await fit_history(
        messages, model=MODEL, limit=limit, reserve=RESERVE, summarise=Summariser()
    )
    assert fitted is not None and (fitted.summarised, fitted.dropped) == (0, 0)
    assert fitted.messages[3]["content"] == (
        RESULT_PREFIX + "[output of an earlier run, 4,000 characters, left out]"
    )
    assert same(fitted.messages[:2], messages[:2])
    assert same(fitted.messages[-8:], last_turns(messages, 4))
    assert fitted.after <= limit - RESERVE
    assert "older outputs shortened" in fitted.describe()


# -- 2. the oldest turns summarised --------------------------------------------------------------
async def test_the_oldest_whole_turns_are_replaced_by_the_summary():
    messages = codeact_history(10, out_chars=200, code_lines=40)  # code, not output, is big
    summariser = Summariser()
    limit = count_tokens(MODEL, messages) - 1500
    fitted = await fit_history(
        messages, model=MODEL, limit=limit, reserve=RESERVE, summarise=summariser
    )
    assert fitted is not None and len(summariser.calls) == 1
    taken = summariser.calls[0]
    assert same(taken, messages[2 : 2 + len(taken)])  # the oldest, as they were
    assert messages[2 + len(taken)]["role"] == "assistant"  # whole turns
    summary = fitted.messages[2]
    assert summary == {"role": "user", "content": SUMMARY_HEADER + summariser.reply}
    rest = messages[2 + len(taken) :]  # its older outputs may have been shortened first
    assert [m["role"] for m in fitted.messages[3:]] == [m["role"] for m in rest]
    assert [m for m in fitted.messages[3:] if m["role"] == "assistant"] == [
        m for m in rest if m["role"] == "assistant"
    ]
    assert same(fitted.messages[-8:], last_turns(messages, 4))
    assert (fitted.summarised, fitted.dropped) == (len(taken), 0)
    assert fitted.after <= limit - RESERVE
    assert f"{len(taken)} messages summarised" in fitted.describe()


async def test_turns_too_long_for_the_summary_call_are_given_to_it_shortened():
    messages = codeact_history(10, code_lines=40)
    limit = count_tokens(MODEL, messages[:2] + last_turns(messages, 1)) + 1500 + RESERVE
    summariser = Summariser()
    fitted = await fit_history(
        messages, model=MODEL, limit=limit, keep_last=1, reserve=RESERVE, summarise=summariser
    )
    assert fitted is not None and fitted.summarised > 0
    taken = summariser.calls[0]
    assert taken[1]["content"].startswith(RESULT_PREFIX + "[output of an earlier run")
    assert count_tokens(MODEL, taken) < count_tokens(MODEL, messages[2 : 2 + len(taken)])
    assert fitted.after <= limit - RESERVE


# -- 3. left out with a note when no summary can be had -----------------------------------------
@pytest.mark.parametrize("summarise", [None, Summariser(fail=True), Summariser(reply="  ")])
async def test_without_a_summary_the_oldest_turns_are_left_out_with_a_note(summarise):
    messages = codeact_history(10, out_chars=200, code_lines=40)
    limit = count_tokens(MODEL, messages) // 2
    fitted = await fit_history(
        messages, model=MODEL, limit=limit, reserve=RESERVE, summarise=summarise
    )
    assert fitted is not None and fitted.summarised == 0
    note = fitted.messages[2]
    assert note == {
        "role": "user",
        "content": f"Note: {fitted.dropped} earlier messages were left out of this "
        "conversation to fit the model's context.",
    }
    assert same(fitted.messages[3:], messages[2 + fitted.dropped :])
    assert messages[2 + fitted.dropped]["role"] == "assistant"
    assert fitted.after <= limit - RESERVE
    assert f"{fitted.dropped} messages left out" in fitted.describe()


async def test_a_summary_too_long_to_fit_is_cut_and_what_still_does_not_fit_is_left_out():
    messages = codeact_history(10, out_chars=200, code_lines=40)
    head_and_last = count_tokens(MODEL, messages[:2] + last_turns(messages, 4))
    limit = head_and_last + 1200 + RESERVE
    summariser = Summariser(reply="the sums went on and on. " * 2000)
    fitted = await fit_history(
        messages, model=MODEL, limit=limit, reserve=RESERVE, summarise=summariser
    )
    assert fitted is not None
    assert fitted.after <= limit - RESERVE
    summary = fitted.messages[2]["content"]
    assert summary.startswith(SUMMARY_HEADER) and summary.endswith(" [...]")
    assert fitted.summarised + fitted.dropped == 12  # 6 middle turns, all taken out
    assert same(fitted.messages[-8:], last_turns(messages, 4))


# -- every shape, every limit: the rules hold ------------------------------------------------
@pytest.mark.parametrize("shape", [codeact_history, toolcode_history, text_protocol_history])
@pytest.mark.parametrize("summarise", [None, Summariser(fail=True), Summariser()])
async def test_at_every_limit_turns_stay_whole_and_the_result_fits(shape, summarise):
    messages = shape(10)
    head, last = messages[:2], last_turns(messages, 4)
    floor = count_tokens(MODEL, head + last) + 200  # the kept parts and a note fit
    total = count_tokens(MODEL, messages)
    for limit in range(floor + RESERVE, total + RESERVE, (total - floor) // 25):
        fitted = await fit_history(
            messages, model=MODEL, limit=limit, reserve=RESERVE, summarise=summarise
        )
        assert fitted is not None
        assert fitted.after <= limit - RESERVE, limit
        assert same(fitted.messages[:2], head) and same(fitted.messages[-len(last) :], last)
        assert_well_formed(fitted.messages)


async def test_a_head_that_ends_in_tool_calls_keeps_their_answers_with_it():
    messages = toolcode_history(8)
    fitted = await fit_history(messages, model=MODEL, limit=6000, keep_head=3, reserve=RESERVE)
    assert fitted is not None
    assert same(fitted.messages[:5], messages[:5])  # the assistant's calls and both answers
    assert_well_formed(fitted.messages)


def test_describe_is_one_line_with_what_was_done():
    fitted = Fitted([], before=41_200, after=7_900, shortened=12, summarised=18, dropped=0)
    assert fitted.describe() == (
        "history fitted: 41,200 -> 7,900 tokens (12 older outputs shortened, "
        "18 messages summarised)"
    )
    one = Fitted([], before=9_000, after=3_000, shortened=1, summarised=0, dropped=1)
    assert one.describe() == (
        "history fitted: 9,000 -> 3,000 tokens (1 older output shortened, 1 message left out)"
    )
