"""One code generation: the model's reply streams into the step, its documentation lookups
are answered, and its code is read out (one re-ask when a reply holds none).

The reply's raw text streams as the step's thought (a ```python block shows as code while it
arrives); once it is read, the step's Thought is the prose around the code and CodeProposed
carries the code, its action being the stage ("analysis" or "task").

Lookups are native tool calls until the server shows it cannot do them (it refuses the tools,
or the model writes its call as text): then the session's `ToolMode` goes over to CALL lines.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from tui_agent.agents.task.docsearch import SEARCH_DOCUMENTATION_TOOL
from tui_agent.agents.task.metadata import TaskTrace
from tui_agent.agents.task.prompts import no_code_message, text_protocol_system
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
from tui_agent.llm import LLM, Message, Reply, ToolsUnsupported
from tui_agent.llm.tool_fallback import IGNORED, REFUSED, ToolMode, calls_in_text
from tui_agent.llm.tool_turns import ModelCall, answer_messages, read_calls, text_model_calls

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


def _problem(call: ModelCall) -> str | None:
    """Why a documentation lookup cannot be run as asked, or None."""
    if call.error:
        return call.error
    if call.name != TOOL_NAME:
        return f"unknown tool {call.name!r}; the only tool is {TOOL_NAME}"
    library = call.arguments.get("library")
    if not isinstance(library, str) or not library.strip():
        return "library is missing (e.g. pandas)"
    return None


class Generation:
    """Asks `llm` for code with `messages`, as step `step` of a task."""

    def __init__(
        self,
        llm: LLM,
        messages: list[Message],
        *,
        step: int,
        tools: ToolMode,
        lookup: Lookup,
        spending: Spending,
        trace: TaskTrace,
    ) -> None:
        self.llm = llm
        self.conversation = list(messages)
        self.step = step
        self.tools = tools
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
            tools = [SEARCH_DOCUMENTATION_TOOL] if tools_left and self.tools.native else None
            self.spending.check(self.llm.model, self.conversation, reask=reasking)
            purpose = "repair" if reasking else "generate"
            stream = self.llm.stream(
                self.conversation, tools=tools, purpose=purpose, step=self.step
            )
            try:
                async for delta in stream:
                    yield ThoughtDelta(step=self.step, text=delta)
            except ToolsUnsupported:
                for said in self._fall_back(REFUSED):
                    yield said
                continue
            reply = stream.reply
            self.spending.record(reply.call, self.conversation)
            self.trace.calls.append(reply.call)
            yield reply.call
            requests = self._requests(reply)
            if not requests and self.tools.native:
                requests = self._calls_as_text(reply)
                if requests:
                    for said in self._fall_back(IGNORED):
                        yield said
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

    def _requests(self, reply: Reply) -> list[ModelCall]:
        """The documentation lookups the reply asks for: native calls, or CALL lines of a
        reply that holds no code block."""
        if not reply.tool_calls and (self.tools.native or "```" in reply.text):
            return []
        calls, _ = read_calls(
            reply,
            [SEARCH_DOCUMENTATION_TOOL],
            use_tools=self.tools.native,
            prefix=f"doc_{self.lookups}",
        )
        return calls

    def _calls_as_text(self, reply: Reply) -> list[ModelCall]:
        """The lookups a reply with no native call and no code block writes as text (the
        server ignored the tools)."""
        if reply.tool_calls or "```" in reply.text:
            return []
        found = calls_in_text(reply.text, [SEARCH_DOCUMENTATION_TOOL]).calls
        return text_model_calls(found, f"doc_{self.lookups}")

    def _fall_back(self, why: str) -> list[Log]:
        """Go over to CALL lines for the rest of the session: the system prompt says so."""
        said = self.tools.fall_back(self.llm.model, why)
        self.conversation[0] = text_protocol_system(self.conversation[0])
        return [said] if said is not None else []

    async def _answer(self, reply: Reply, calls: list[ModelCall]) -> AsyncIterator[Event]:
        """Run each lookup (ToolCall / ToolResult on this step) and put the answers in the
        conversation the way the model asked: tool messages, or RESULT blocks."""
        answers: list[str] = []
        for call in calls:
            library = str(call.arguments.get("library") or "").strip()
            query = str(call.arguments.get("query") or "").strip()
            arguments = {"library": library, "query": query}
            yield ToolCall(call_id=call.id, name=TOOL_NAME, arguments=arguments, step=self.step)
            began = time.monotonic()
            problem = _problem(call)
            if problem is not None:
                answer, ok = f"Error: {problem}", False
            elif self.lookups >= MAX_TOOL_CALLS:
                answer, ok = NO_MORE_TOOLS, False
            else:
                self.lookups += 1
                self.trace.tool_calls.append({"function": TOOL_NAME, "arguments": arguments})
                answer, ok = await self.lookup(library, query), True
            yield ToolResult(
                call_id=call.id,
                name=TOOL_NAME,
                output=answer,
                ok=ok,
                duration=time.monotonic() - began,
            )
            answers.append(answer)
        native = bool(reply.tool_calls)
        self.conversation += answer_messages(reply, calls, answers, native=native)
        if self.lookups >= MAX_TOOL_CALLS:
            self.conversation.append({"role": "user", "content": NO_MORE_TOOLS})

    def _reask(self, reply_text: str, message: str) -> None:
        if reply_text.strip():
            self.conversation.append({"role": "assistant", "content": reply_text[:4000]})
        self.conversation.append({"role": "user", "content": message})
