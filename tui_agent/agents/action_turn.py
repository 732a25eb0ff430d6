"""One model turn of a code-writing agent, streamed as the events of its step."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Mapping

from tui_agent.events import CodeProposed, Event, LLMCall, Log, Thought, ThoughtDelta
from tui_agent.llm import (
    JSON_FORM,
    LLM,
    Action,
    ActionOutcome,
    FieldComplete,
    FieldDelta,
    InvalidReply,
    Message,
    ReplyForm,
    stream_action,
)

EXECUTE = "execute_code"
"""The action a proposed code runs under when the turn names no action of its own."""
REASKED = "\n\n*(that reply could not be used; asked again)*\n\n"
"""Streamed into the thought before a re-ask's own thought, so the pane shows what happened."""


async def stream_turn(
    llm: LLM,
    messages: list[Message],
    step: int,
    *,
    code_actions: Mapping[str, str] | None = None,
    prose_answers: bool = False,
    needs_code: bool = False,
    last_code: str | None = None,
    form: ReplyForm = JSON_FORM,
) -> AsyncGenerator[Event | InvalidReply | ActionOutcome, None]:
    """One reply as ThoughtDelta / Thought on `step`, CodeProposed as soon as the code's
    string closes (again if the validated action differs), the LLMCall records and the
    InvalidReply notes (for the caller to say and act on), and last the ActionOutcome.

    With `code_actions` (the action names, as the model may write them, that run code, and
    what they are read as) code is proposed only under such an action, with its name; without,
    every code is proposed as EXECUTE. With `prose_answers` a reply that holds neither an
    action nor code is the final answer; with `needs_code` a reply with no code is re-asked;
    a re-ask shows `last_code` (the last code that ran without error); `form` is the reply
    form asked for (reply_forms.py).
    How an accepted reply was repaired is logged.
    Closing the iteration closes the model's stream.
    """
    any_code = code_actions is None
    action_name: str | None = EXECUTE if any_code else None
    early: tuple[str, str] | None = None
    thought: str | None = None
    streamed = reasked = False
    turn = stream_action(
        llm,
        messages,
        step=step,
        prose_answers=prose_answers,
        needs_code=needs_code,
        last_code=last_code,
        form=form,
    )
    async with contextlib.aclosing(turn):
        async for item in turn:
            match item:
                case FieldDelta(field="thought", text=text):
                    if reasked and streamed:
                        yield ThoughtDelta(step=step, text=REASKED)
                    reasked, streamed = False, True
                    yield ThoughtDelta(step=step, text=text)
                case FieldComplete(field="thought", value=value):
                    thought = value
                    yield Thought(step=step, text=value)
                case FieldComplete(field="action", value=value) if code_actions is not None:
                    action_name = code_actions.get(value.strip().lower())
                case FieldComplete(field="code", value=code) if action_name and code.strip():
                    early = (code, action_name)
                    yield CodeProposed(step=step, code=code, action=action_name)
                case LLMCall():
                    yield item
                case InvalidReply():
                    yield item
                    early, reasked = None, True
                    if not any_code:
                        action_name = None
                case ActionOutcome(action=Action() as action):
                    if item.repairs:
                        yield Log(message=f"step {step}: reply read as: {'; '.join(item.repairs)}")
                    if action.thought != thought:
                        yield Thought(step=step, text=action.thought)
                    name = EXECUTE if any_code else action.action
                    if action.code is not None and (action.code, name) != early:
                        yield CodeProposed(step=step, code=action.code, action=name)
                    yield item
                case ActionOutcome():
                    yield item
