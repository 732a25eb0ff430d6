"""One CodeAct turn: ask for an action, stream its fields, re-ask once if it cannot be used.

`stream_action` yields, in order: `FieldDelta` / `FieldComplete` as the reply streams (the
thought first, then the code or final answer), an `LLMCall` record as each call ends, an
`InvalidReply` when a reply cannot be used (a re-ask follows if any are left; fields stream
again from scratch), and last an `ActionOutcome`. Malformed model output never raises: it
ends in an outcome whose `error` says why. Provider failures raise `LLMError`.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import dataclass

from tui_agent.events import LLMCall
from tui_agent.llm.actions import Action, ActionParseError, parse_action
from tui_agent.llm.client import LLM, Message, Reply
from tui_agent.llm.incremental import FencedFields, FieldComplete, FieldDelta, IncrementalFields
from tui_agent.llm.reply_forms import JSON_FORM, ReplyForm, repair_message

MAX_REPAIRS = 1
"""Re-asks after an unusable reply: one, naming the problem; a second one ends the turn."""
ECHO_LIMIT = 4000
"""Characters of an unusable reply sent back with the re-ask (a huge reply is cut)."""


@dataclass(frozen=True)
class InvalidReply:
    """Reply number `attempt` (0-based) could not be used; `retrying` if a re-ask follows."""

    attempt: int
    error: str
    retrying: bool


@dataclass(frozen=True)
class Attempt:
    """One call of the turn: the raw reply and what became of it."""

    purpose: str
    reply: str
    finish_reason: str | None
    error: str | None
    repairs: tuple[str, ...]


@dataclass(frozen=True)
class ActionOutcome:
    """The turn's result: an action, or the error left after the re-asks were used up."""

    action: Action | None
    error: str | None
    calls: tuple[LLMCall, ...]
    attempts: tuple[Attempt, ...]

    @property
    def ok(self) -> bool:
        return self.action is not None

    @property
    def repairs(self) -> tuple[str, ...]:
        """What the parser repaired in the accepted reply."""
        return self.attempts[-1].repairs if self.ok else ()


ActionStreamItem = FieldDelta | FieldComplete | LLMCall | InvalidReply | ActionOutcome


def echoed(reply: str) -> str:
    """An unusable reply as sent back to the model (a huge one cut)."""
    return reply if len(reply) <= ECHO_LIMIT else reply[:ECHO_LIMIT] + " …[cut]"


def _reask(
    messages: Sequence[Message],
    reply: str,
    error: str,
    last_code: str | None,
    form: ReplyForm,
) -> list[Message]:
    conversation = list(messages)
    if reply.strip():
        conversation.append({"role": "assistant", "content": echoed(reply)})
    conversation.append({"role": "user", "content": repair_message(error, last_code, form)})
    return conversation


def _judge(
    reply: Reply, prose_answers: bool, needs_code: bool, form: ReplyForm
) -> tuple[Action | None, str | None, tuple[str, ...]]:
    if not reply.text.strip() and reply.tool_calls:
        return None, "the reply called a tool instead of answering with an action", ()
    try:
        parsed = parse_action(
            reply.text,
            finish_reason=reply.finish_reason,
            prose_answers=prose_answers,
            fenced=form.name == "fenced",
        )
    except ActionParseError as exc:
        return None, str(exc), ()
    if needs_code and parsed.action.code is None:
        return None, f"the reply held no code ({parsed.action.action}); send the complete code", ()
    return parsed.action, None, parsed.repairs


async def stream_action(
    llm: LLM,
    messages: Sequence[Message],
    *,
    step: int = 0,
    max_repairs: int = MAX_REPAIRS,
    prose_answers: bool = False,
    needs_code: bool = False,
    last_code: str | None = None,
    form: ReplyForm = JSON_FORM,
) -> AsyncGenerator[ActionStreamItem, None]:
    """Run one turn; see the module docstring for what is yielded. With `prose_answers`, a
    reply holding neither an action nor code is the final answer (see `parse_action`); with
    `needs_code` (refinement), a reply with no code is unusable, so re-asked. A re-ask shows
    `last_code`, the last code that ran without error, when there is one. `form` is the
    reply form the model was asked for (reply_forms.py)."""
    conversation = list(messages)
    calls: list[LLMCall] = []
    attempts: list[Attempt] = []
    error: str | None = ""
    for attempt in range(max_repairs + 1):
        purpose = "action" if attempt == 0 else "repair"
        fields = FencedFields() if form.name == "fenced" else IncrementalFields()
        stream = llm.stream(conversation, want_json=form.want_json, purpose=purpose, step=step)
        async for delta in stream:
            for event in fields.feed(delta):
                yield event
        reply = stream.reply
        calls.append(reply.call)
        yield reply.call
        action, error, repairs = _judge(reply, prose_answers, needs_code, form)
        attempts.append(Attempt(purpose, reply.text, reply.finish_reason, error, repairs))
        if action is not None:
            yield ActionOutcome(action, None, tuple(calls), tuple(attempts))
            return
        assert error is not None
        yield InvalidReply(attempt, error, retrying=attempt < max_repairs)
        conversation = _reask(messages, reply.text, error, last_code, form)
    replies = len(attempts)
    yield ActionOutcome(
        None,
        f"no valid action in {replies} {'reply' if replies == 1 else 'replies'}: {error}",
        tuple(calls),
        tuple(attempts),
    )


DeltaCallback = Callable[[FieldDelta], Awaitable[None] | None]


async def next_action(
    llm: LLM,
    messages: Sequence[Message],
    on_delta: DeltaCallback | None = None,
    *,
    step: int = 0,
    max_repairs: int = MAX_REPAIRS,
    prose_answers: bool = False,
) -> ActionOutcome:
    """`stream_action` for callers that only want the outcome (and maybe the deltas)."""
    turn = stream_action(
        llm, messages, step=step, max_repairs=max_repairs, prose_answers=prose_answers
    )
    async for item in turn:
        if isinstance(item, ActionOutcome):
            return item
        if isinstance(item, FieldDelta) and on_delta is not None:
            result = on_delta(item)
            if inspect.isawaitable(result):
                await result
    raise AssertionError("unreachable: stream_action always ends with an ActionOutcome")
