"""A tool code conversation rebuilt from its stored events, after its system prompt and task:
each model turn as text (its thought, the programs it wrote, the calls it made), each result
as the user message that answered it, the user's messages where they came.

Written as plain text whatever protocol the session used: a continued session never holds a
tool call whose id the provider has not seen, and every provider accepts it.
"""

from __future__ import annotations

from collections.abc import Sequence

from tui_agent.agents.toolcode.program import program_answer
from tui_agent.agents.toolcode.prompts import WRITE_CODE
from tui_agent.events import (
    CodeProposed,
    Event,
    ExecutionFinished,
    FinalAnswer,
    Thought,
    ToolCall,
    ToolResult,
    UserMessage,
)
from tui_agent.llm import Message
from tui_agent.sandbox.wire import ExecuteResult

RESULT_LIMIT = 4000
"""Characters of a tool's stored output given back (its start)."""


def toolcode_history(events: Sequence[Event]) -> list[Message]:
    """The turns of `events` (a tool code session's, in order), as messages to append after
    the system prompt and the task."""
    messages: list[Message] = []
    programs: dict[int, str] = {}
    model_calls: set[str] = set()
    """The calls the model made itself (not a program's, which its result already tells)."""
    for event in events:
        if isinstance(event, Thought) and event.text.strip():
            _add(messages, "assistant", event.text)
        elif isinstance(event, CodeProposed):
            programs[event.step] = event.code
        elif isinstance(event, ExecutionFinished) and event.step in programs:
            code = programs.pop(event.step)
            _add(messages, "assistant", f"{WRITE_CODE}:\n```python\n{code.rstrip()}\n```")
            answer = program_answer(ExecuteResult.from_event(event))
            _add(messages, "user", f"RESULT of {WRITE_CODE}:\n{answer}")
        elif isinstance(event, ToolCall) and event.run_step is None:
            model_calls.add(event.call_id)
            _add(messages, "assistant", f"I called {event.name}.")
        elif isinstance(event, ToolResult) and event.call_id in model_calls:
            output = event.output[:RESULT_LIMIT]
            _add(messages, "user", f"RESULT of {event.name}:\n{output}")
        elif isinstance(event, FinalAnswer):
            _add(messages, "assistant", event.text)
        elif isinstance(event, UserMessage):
            text = event.text
            if event.queued:
                text = f"Message from the user, sent while you worked:\n{text}"
            _add(messages, "user", text)
    for step, code in programs.items():  # proposed, never finished: interrupted or skipped
        _add(messages, "assistant", f"{WRITE_CODE}:\n```python\n{code.rstrip()}\n```")
        _add(messages, "user", f"RESULT of {WRITE_CODE} (step {step}): not run.")
    return messages


def _add(messages: list[Message], role: str, text: str) -> None:
    """`text` as a message of `role`, joined to the last one when that is `role`'s too."""
    last = messages[-1] if messages else None
    if last is not None and last["role"] == role:
        messages[-1] = {"role": role, "content": f"{last['content']}\n\n{text}"}
    else:
        messages.append({"role": role, "content": text})
