"""One code generation: the model's reply streams into the step, its documentation lookups
are answered, and its code is read out (one re-ask when a reply holds none).

The reply's raw text streams as the step's thought (a ```python block shows as code while it
arrives); once it is read, the step's Thought is the prose around the code and CodeProposed
carries the code, its action being the stage ("analysis" or "task").
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from tui_agent.agents.task.docsearch import SEARCH_DOCUMENTATION_TOOL
from tui_agent.agents.task.metadata import TaskTrace
from tui_agent.agents.task.prompts import no_code_message
from tui_agent.agents.task.reply import CodeReply, NoCode, parse_code_reply
from tui_agent.agents.task.spending import Spending
from tui_agent.events import (
    CodeProposed,
    Event,
    Log,
    Thought,
    ThoughtDelta,
    ToolCall,
    ToolResult,
)
from tui_agent.llm import LLM, Message, Reply
from tui_agent.llm.text_calls import parse_text_calls, result_block

MAX_TOOL_CALLS = 6
"""Documentation lookups one generation may make; past it the model is told to write code."""
MAX_REASKS = 1
TOOL_NAME = SEARCH_DOCUMENTATION_TOOL["function"]["name"]
NO_MORE_TOOLS = (
    "You have used all your documentation lookups. Write the code now: one ```python block "
    "whose first line is the stage comment."
)

Lookup = Callable[[str, str], Awaitable[str]]
"""Answers search_documentation(library, query)."""


@dataclass(frozen=True)
class Generated:
    """A generation's end: the code read from the reply, or why there is none."""

    reply: CodeReply | None
    error: str | None
    seconds: float


@dataclass(frozen=True)
class _Request:
    call_id: str
    library: str
    query: str
    problem: str | None


def _native_requests(reply: Reply, turn: int) -> list[_Request]:
    requests = []
    for index, call in enumerate(reply.tool_calls):
        call_id = call.id or f"doc_{turn}_{index}"
        try:
            arguments = json.loads(call.arguments or "{}")
        except json.JSONDecodeError:
            arguments = None
        requests.append(_request(call_id, call.name, arguments))
    return requests


def _request(call_id: str, name: str, arguments: Any) -> _Request:
    if name != TOOL_NAME:
        return _Request(call_id, "", "", f"unknown tool {name!r}; the only tool is {TOOL_NAME}")
    if not isinstance(arguments, dict):
        return _Request(call_id, "", "", "the arguments are not a JSON object")
    library, query = arguments.get("library"), arguments.get("query")
    if not isinstance(library, str) or not library.strip():
        return _Request(call_id, "", "", "library is missing (e.g. pandas)")
    return _Request(call_id, library.strip(), str(query or "").strip(), None)


class Generation:
    """Asks `llm` for code with `messages`, as step `step` of a task."""

    def __init__(
        self,
        llm: LLM,
        messages: list[Message],
        *,
        step: int,
        text_protocol: bool,
        lookup: Lookup,
        spending: Spending,
        trace: TaskTrace,
    ) -> None:
        self.llm = llm
        self.conversation = list(messages)
        self.step = step
        self.text_protocol = text_protocol
        self.lookup = lookup
        self.spending = spending
        self.trace = trace
        self.lookups = 0

    async def run(self) -> AsyncIterator[Event | Generated]:
        """The step's events, then the Generated outcome. Provider failures raise LLMError."""
        began = time.monotonic()
        reasks = 0
        reasking = False
        while True:
            tools_left = self.lookups < MAX_TOOL_CALLS
            tools = [SEARCH_DOCUMENTATION_TOOL] if tools_left and not self.text_protocol else None
            self.spending.check(self.llm.model, self.conversation, reask=reasking)
            purpose = "repair" if reasking else "generate"
            stream = self.llm.stream(
                self.conversation, tools=tools, purpose=purpose, step=self.step
            )
            async for delta in stream:
                yield ThoughtDelta(step=self.step, text=delta)
            reply = stream.reply
            self.spending.record(reply.call, self.conversation)
            self.trace.calls.append(reply.call)
            yield reply.call
            requests = self._requests(reply)
            if requests:
                async for event in self._answer(reply, requests):
                    yield event
                reasking = False
                continue
            try:
                code = parse_code_reply(reply.text)
            except NoCode as problem:
                if reasks >= MAX_REASKS:
                    yield Generated(None, f"no usable code: {problem}", time.monotonic() - began)
                    return
                reasks += 1
                reasking = True
                yield Log(
                    level="warning",
                    message=f"step {self.step}: the reply could not be used ({problem}); "
                    "asking again",
                )
                self._reask(reply.text, no_code_message(str(problem)))
                continue
            if code.repairs:
                yield Log(message=f"step {self.step}: reply read as: {'; '.join(code.repairs)}")
            yield Thought(step=self.step, text=code.prose)
            yield CodeProposed(step=self.step, code=code.code, action=code.stage)
            yield Generated(code, None, time.monotonic() - began)
            return

    def _requests(self, reply: Reply) -> list[_Request]:
        """The documentation lookups the reply asks for (none once the limit is reached)."""
        if reply.tool_calls:
            return _native_requests(reply, self.lookups)
        if not self.text_protocol or "```" in reply.text:
            return []
        turn = parse_text_calls(reply.text, [SEARCH_DOCUMENTATION_TOOL])
        return [
            _Request(f"doc_{self.lookups}_{index}", "", "", call.error)
            if call.error
            else _request(f"doc_{self.lookups}_{index}", call.name, call.arguments)
            for index, call in enumerate(turn.calls)
        ]

    async def _answer(self, reply: Reply, requests: list[_Request]) -> AsyncIterator[Event]:
        """Run each lookup (ToolCall / ToolResult on this step) and put the answers in the
        conversation the way the model asked: tool messages, or RESULT blocks."""
        answers: list[tuple[_Request, str]] = []
        for request in requests:
            arguments = {"library": request.library, "query": request.query}
            yield ToolCall(
                call_id=request.call_id, name=TOOL_NAME, arguments=arguments, step=self.step
            )
            began = time.monotonic()
            if request.problem is not None:
                answer, ok = f"Error: {request.problem}", False
            elif self.lookups >= MAX_TOOL_CALLS:
                answer, ok = NO_MORE_TOOLS, False
            else:
                self.lookups += 1
                self.trace.tool_calls.append({"function": TOOL_NAME, "arguments": arguments})
                answer, ok = await self.lookup(request.library, request.query), True
            yield ToolResult(
                call_id=request.call_id,
                name=TOOL_NAME,
                output=answer,
                ok=ok,
                duration=time.monotonic() - began,
            )
            answers.append((request, answer))
        if reply.tool_calls:
            self.conversation.append(
                {
                    "role": "assistant",
                    "content": reply.text or None,
                    "tool_calls": [
                        {
                            "id": request.call_id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": call.arguments},
                        }
                        for request, call in zip(requests, reply.tool_calls, strict=True)
                    ],
                }
            )
            for request, answer in answers:
                self.conversation.append(
                    {"role": "tool", "tool_call_id": request.call_id, "content": answer}
                )
            if self.lookups >= MAX_TOOL_CALLS:
                self.conversation.append({"role": "user", "content": NO_MORE_TOOLS})
            return
        blocks = [
            result_block(TOOL_NAME, {"library": r.library, "query": r.query}, answer)
            for r, answer in answers
        ]
        if self.lookups >= MAX_TOOL_CALLS:
            blocks.append(NO_MORE_TOOLS)
        self.conversation.append({"role": "assistant", "content": reply.text})
        self.conversation.append({"role": "user", "content": "\n\n".join(blocks)})

    def _reask(self, reply_text: str, message: str) -> None:
        if reply_text.strip():
            self.conversation.append({"role": "assistant", "content": reply_text[:4000]})
        self.conversation.append({"role": "user", "content": message})
