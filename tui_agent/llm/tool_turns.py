"""A model turn that calls tools, either way a model can: native tool calls, or the text
protocol of `text_calls` (`CALL name {...}` lines answered by `RESULT` blocks).

`read_calls` gives the calls a reply makes and its prose; `answer_messages` gives the messages
that carry the answers back in the same form the model used.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tui_agent.llm.client import Message, Reply
from tui_agent.llm.text_calls import Spec, TextCall, parse_text_calls, result_block


@dataclass(frozen=True)
class ModelCall:
    """A tool call the model asked for, however it asked; `error` says why its arguments
    could not be read."""

    id: str
    name: str
    arguments: dict[str, Any]
    raw: str
    error: str | None = None


def native_calls(reply: Reply, prefix: str) -> list[ModelCall]:
    """The reply's native tool calls (ids made up from `prefix` where the reply has none)."""
    calls = []
    for index, request in enumerate(reply.tool_calls):
        call_id = request.id or f"{prefix}_{index}"
        raw = request.arguments or ""
        try:
            arguments = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError:
            arguments = None
        if isinstance(arguments, dict):
            calls.append(ModelCall(call_id, request.name, arguments, raw))
        else:
            error = f"the arguments of {request.name} are not a JSON object: {raw[:120]}"
            calls.append(ModelCall(call_id, request.name, {}, raw, error))
    return calls


def read_calls(
    reply: Reply, specs: Sequence[Spec], *, use_tools: bool, prefix: str
) -> tuple[list[ModelCall], str]:
    """The calls the reply makes and its prose (the text around the calls; all of it when
    there are none). With `use_tools` False, CALL lines are read from the text."""
    if use_tools or reply.tool_calls:
        return native_calls(reply, prefix), reply.text.strip()
    turn = parse_text_calls(reply.text, specs)
    calls = text_model_calls(turn.calls, prefix)
    return calls, turn.prose if calls else reply.text.strip()


def text_model_calls(calls: Sequence[TextCall], prefix: str) -> list[ModelCall]:
    """Calls written in a reply's text, as ModelCalls with ids `{prefix}_{index}`."""
    return [
        ModelCall(f"{prefix}_{index}", call.name, call.arguments, call.raw, call.error)
        for index, call in enumerate(calls)
    ]


def answer_messages(
    reply: Reply, calls: Sequence[ModelCall], answers: Sequence[str], *, native: bool
) -> list[Message]:
    """The assistant's turn and the answers to its calls: tool messages after native calls,
    else one user message of RESULT blocks."""
    if native:
        assistant: Message = {
            "role": "assistant",
            "content": reply.text or None,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.raw or "{}"},
                }
                for call in calls
            ],
        }
        tools: list[Message] = [
            {"role": "tool", "tool_call_id": call.id, "content": answer}
            for call, answer in zip(calls, answers, strict=True)
        ]
        return [assistant, *tools]
    blocks = [
        result_block(call.name, call.raw if call.error else call.arguments, answer)
        for call, answer in zip(calls, answers, strict=True)
    ]
    return [
        {"role": "assistant", "content": reply.text},
        {"role": "user", "content": "\n\n".join(blocks)},
    ]
