"""Planning with a model: explore the page with probe tools, then write a strategy.

The model calls the probes through litellm tool calling, or through the text protocol of
`planner_prompts` when it has no tools, at most `max_tool_calls` times; a server that shows it
cannot do tool calls (it refuses them, or the model writes its calls as text) moves the run to
the text protocol once, said in a Log. Its final answer in the
strategy format is parsed into a `Strategy`; an unreadable answer is re-asked once. "Verified
selectors only" is enforced here: a selector no tool call of this session matched is sent back
once to be verified or dropped; whatever is still unverified is dropped and recorded. The run
ends with its `PlanOutcome` (see web.phase).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from tui_agent.events import Event, Log, Thought, ThoughtDelta, ToolCall, ToolResult
from tui_agent.llm.client import LLM, Message, Reply
from tui_agent.llm.errors import ToolsUnsupported
from tui_agent.llm.provider import tools_supported
from tui_agent.llm.text_calls import parse_text_calls
from tui_agent.llm.tool_fallback import IGNORED, REFUSED, ToolMode, calls_in_text
from tui_agent.llm.tool_turns import ModelCall, answer_messages, native_calls, text_model_calls
from tui_agent.web.phase import Phase
from tui_agent.web.plan.outcome import PlanOutcome
from tui_agent.web.plan.prompts import (
    calls_left_line,
    cap_message,
    not_run_text,
    reparse_message,
    system_prompt,
    task_message,
    verify_message,
)
from tui_agent.web.plan.strategy import Strategy, StrategyParseError, parse_strategy
from tui_agent.web.probe import TOOL_SPECS, Probes, traced

SINGLE_SELECTORS = {
    "list_container": "LIST",
    "list_item": "LIST_ITEM",
    "details_panel": "DETAILS_PANEL",
    "details_loaded": "DETAILS_LOADED",
    "pagination_button": "PAGINATION_BUTTON",
    "load_more_button": "LOAD_MORE_BUTTON",
    "close_details": "CLOSE_DETAILS",
    "click_target": "CLICK_TARGET",
}
"""Strategy attribute -> the key it is written under."""
DETAILS_PLACES = ("DETAILS_LOADED", "DETAILS_CONTENT", "DETAILS_FIELDS")


def _lead(text: str) -> str:
    """The prose a final answer opens with, before its first heading."""
    lines = []
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            break
        lines.append(line)
    return "\n".join(lines).strip()


def _places(strategy: Strategy) -> list[tuple[str, str]]:
    """(selector, where it is used) for every selector of the strategy."""
    found = [
        (getattr(strategy, attribute), key)
        for attribute, key in SINGLE_SELECTORS.items()
        if getattr(strategy, attribute)
    ]
    if isinstance(strategy.list_item_siblings, str):
        found.append((strategy.list_item_siblings, "LIST_ITEM_SIBLINGS"))
    found += [(selector, "DETAILS_CONTENT") for selector in strategy.details_content]
    found += [(f.selector, f"DETAILS_FIELDS.{n}") for n, f in strategy.details_fields.items()]
    found += [(f.selector, f"ITEM_FIELDS.{n}") for n, f in strategy.item_fields.items()]
    return found


def _scopes(strategy: Strategy, where: str) -> list[str]:
    """Selectors that a relative selector used at `where` is read inside."""
    item, panel = strategy.list_item, strategy.details_panel
    if where.startswith("ITEM_FIELDS") or where == "CLICK_TARGET":
        scopes = [item]
    elif where.startswith(DETAILS_PLACES) and strategy.click_behavior == "inline":
        scopes = [item, panel, f"{item} {panel}" if item and panel else None]
    elif where.startswith(DETAILS_PLACES):
        scopes = [panel]
    else:
        scopes = []
    return [scope for scope in scopes if scope]


def _within(scope: str, selector: str) -> str:
    """`selector` read inside `scope`, as one selector (`:scope` is the scope itself)."""
    if selector.startswith(":scope"):
        return scope + selector.removeprefix(":scope")
    return f"{scope} {selector}"


def _normal(selector: str) -> str:
    return " ".join(selector.split())


def _drop(strategy: Strategy, refused: set[tuple[str, str]]) -> Strategy:
    """The strategy without the refused (selector, where) uses."""

    def keep(selector: str, where: str) -> bool:
        return (selector, where) not in refused

    update: dict[str, Any] = {
        attribute: None
        for attribute, key in SINGLE_SELECTORS.items()
        if not keep(getattr(strategy, attribute), key)
    }
    siblings = strategy.list_item_siblings
    if isinstance(siblings, str) and not keep(siblings, "LIST_ITEM_SIBLINGS"):
        update["list_item_siblings"] = None
    update["details_content"] = [s for s in strategy.details_content if keep(s, "DETAILS_CONTENT")]
    for attribute, key in (("details_fields", "DETAILS_FIELDS"), ("item_fields", "ITEM_FIELDS")):
        fields = getattr(strategy, attribute)
        update[attribute] = {
            name: spec for name, spec in fields.items() if keep(spec.selector, f"{key}.{name}")
        }
    return strategy.model_copy(update=update)


class StrategyPlanner:
    """The model explores the page with the probes and writes a verified `Strategy`.

    Each reply's text streams as ThoughtDelta events of its turn's step; the turn's Thought
    (its prose: the text around the calls, or before a final answer's first heading) then
    replaces them, empty when the reply had no prose.

    `run()` ends with the PlanOutcome (its `output`: the accepted strategy's Markdown, or the
    model's last answer when none was accepted). The probes' `item_selector` is taken from the
    hints' LIST_ITEM (if unset) and set to the accepted strategy's.
    """

    def __init__(
        self,
        llm: LLM,
        probes: Probes,
        task: str,
        url: str,
        *,
        max_tool_calls: int = 16,
        hints: Strategy | None = None,
        use_tools: bool | None = None,
    ) -> None:
        """`use_tools` None asks `tools_supported` about the model."""
        self.llm = llm
        self.probes = probes
        self.task = task
        self.url = url
        self.max_tool_calls = max_tool_calls
        self.hints = hints
        native = tools_supported(llm.model, llm.api_base) if use_tools is None else use_tools
        self.tools = ToolMode(native)
        self._tool_calls = 0
        self._messages: list[Message] = []
        self._turn = 0
        self._purpose = "plan"
        """What the next model call is for."""
        self._ending: PlanOutcome | None = None
        """How the run ends, once it is decided."""
        self._reparse_left = self._verify_left = 1
        self._told_limit = False
        self._ignored_rounds = 0
        self._best: Strategy | None = None

    @property
    def use_tools(self) -> bool:
        """Whether the probes are offered as native tools (else CALL lines)."""
        return self.tools.native

    async def run(self) -> Phase[PlanOutcome]:
        """Explore, answer, verify; then the outcome."""
        if self.hints and self.hints.list_item and not self.probes.item_selector:
            self.probes.item_selector = self.hints.list_item
        snapshot = await self.probes.snapshot()
        hints = self.hints.to_markdown() if self.hints else None
        prompt = system_prompt(TOOL_SPECS, text_protocol=not self.use_tools)
        opening = task_message(self.task, self.url, snapshot, hints, self.max_tool_calls)
        self._messages = [
            {"role": "system", "content": prompt},
            {"role": "user", "content": opening},
        ]
        while self._ending is None:
            self._turn += 1
            stream = self.llm.stream(
                self._messages,
                tools=TOOL_SPECS if self.use_tools else None,
                purpose=self._purpose,
                step=self._turn,
            )
            streamed = False
            try:
                async for delta in stream:
                    streamed = True
                    yield ThoughtDelta(step=self._turn, text=delta)
            except ToolsUnsupported:
                yield self._fall_back(REFUSED)
                self._turn -= 1  # the same turn, asked again
                continue
            reply = stream.reply
            calls, prose = self._read(reply)
            if not calls and self.use_tools and not reply.tool_calls:
                calls, prose = self._calls_as_text(reply)
                if calls:
                    yield self._fall_back(IGNORED)
            if prose or streamed:
                yield Thought(step=self._turn, text=prose)
            yield reply.call
            handle = self._calls_round(reply, calls) if calls else self._final(reply)
            async for event in handle:
                yield event
        yield self._ending

    # -- one turn ----------------------------------------------------------------------------
    async def _calls_round(self, reply: Reply, calls: list[ModelCall]) -> AsyncIterator[Event]:
        """Run a round of tool calls; past the limit, refuse them (twice ends the run)."""
        self._purpose = "plan"
        if self._told_limit and self._tool_calls >= self.max_tool_calls:
            self._ignored_rounds += 1
            yield Log(level="warning", message=self._ignored(len(calls)))
            if self._ignored_rounds > 1:
                self._fail(
                    reply.text,
                    f"the model kept calling tools after its limit of "
                    f"{self.max_tool_calls} tool calls",
                )
                return
        async for event in self._run_calls(reply, calls):
            yield event
        if self._tool_calls >= self.max_tool_calls:
            self._tell(cap_message(self.max_tool_calls))
            if not self._told_limit:
                yield Log(message=self._limit_reached())
            self._told_limit = True

    async def _final(self, reply: Reply) -> AsyncIterator[Event]:
        """Judge a final answer: re-ask once if unreadable, send back unverified selectors
        once, then accept what is verified."""
        try:
            strategy = parse_strategy(reply.text)
        except StrategyParseError as exc:
            if self._reparse_left:
                self._reparse_left -= 1
                message = f"the model's answer is not a strategy ({exc}); asking once more"
                yield Log(level="warning", message=message)
                self._send_back(reply.text, reparse_message(str(exc)), "reparse")
                return
            if self._best is None:
                self._fail(reply.text, f"the model's answer is not a strategy: {exc}")
                return
            message = f"the model's last answer is not a strategy ({exc}); keeping its previous one"
            yield Log(level="warning", message=message)
            strategy = self._best
        self._best = strategy
        unverified = self._unverified(strategy)
        if unverified and self._verify_left:
            self._verify_left -= 1
            listed = ", ".join(f"`{s}` ({where})" for s, where in unverified)
            yield Log(message=f"sent back unverified selectors to the model: {listed}")
            left = max(0, self.max_tool_calls - self._tool_calls)
            self._send_back(reply.text, verify_message(unverified, left), "verify")
            return
        async for event in self._accept(strategy, unverified):
            yield event

    def _fail(self, output: str, error: str, refused: list[str] | None = None) -> None:
        """End the run with no strategy: `error` says why, `output` is the model's answer."""
        self._ending = PlanOutcome(
            None, output, failure=error, refused=refused or [], tool_calls=self._tool_calls
        )

    # -- tool calls --------------------------------------------------------------------------
    def _fall_back(self, why: str) -> Log:
        """Go over to CALL lines for the rest of the run: the system prompt says so."""
        said = self.tools.fall_back(self.llm.model, why)
        assert said is not None, "only a run offering tools falls back"
        self._messages[0] = {
            "role": "system",
            "content": system_prompt(TOOL_SPECS, text_protocol=True),
        }
        return said

    def _calls_as_text(self, reply: Reply) -> tuple[list[ModelCall], str]:
        """The probes a reply with no native call writes as text (the server ignored the
        tools), and its prose."""
        turn = calls_in_text(reply.text, TOOL_SPECS)
        calls = text_model_calls(turn.calls, f"text_{self._turn}")
        return calls, turn.prose if calls else _lead(reply.text)

    def _read(self, reply: Reply) -> tuple[list[ModelCall], str]:
        """The calls a reply makes and its prose (the lead of the text when it calls nothing;
        in text mode, native calls a reply makes anyway are not read)."""
        if self.use_tools:
            calls = native_calls(reply, f"call_{self._turn}")
            return calls, reply.text.strip() if calls else _lead(reply.text)
        turn = parse_text_calls(reply.text, TOOL_SPECS)
        if not turn.calls:
            return [], _lead(reply.text)
        return text_model_calls(turn.calls, f"text_{self._turn}"), turn.prose

    async def _run_calls(self, reply: Reply, calls: list[ModelCall]) -> AsyncIterator[Event]:
        """Run the calls within the limit (each a ToolCall / ToolResult pair) and answer them."""
        answers: list[str] = []
        for call in calls:
            if self._tool_calls >= self.max_tool_calls:
                answers.append(not_run_text(self.max_tool_calls))
                continue
            self._tool_calls += 1
            call_id = f"planner-{self._tool_calls}"
            if call.error is not None:
                yield ToolCall(
                    call_id=call_id, name=call.name, arguments={"raw": call.raw}, step=self._turn
                )
                yield ToolResult(call_id=call_id, name=call.name, output=call.error, ok=False)
                answers.append(call.error)
                continue
            request, result, probe = await traced(
                self.probes, call.name, call.arguments, call_id, step=self._turn
            )
            yield request
            yield result
            answers.append(probe.text)
        messages = answer_messages(reply, calls, answers, native=self.use_tools)
        left = self.max_tool_calls - self._tool_calls
        if not self.use_tools and left > 0:
            messages[-1]["content"] = f"{messages[-1]['content']}\n\n{calls_left_line(left)}"
        self._messages += messages

    def _tell(self, text: str) -> None:
        """Add `text` to the conversation's last user turn, or as a new one after tool results."""
        last = self._messages[-1]
        if last["role"] == "user":
            last["content"] = f"{last['content']}\n\n{text}"
        else:
            self._messages.append({"role": "user", "content": text})

    def _send_back(self, answer: str, text: str, purpose: str) -> None:
        """Echo the model's answer and reply with `text`; the next call is for `purpose`."""
        self._messages.append({"role": "assistant", "content": answer or "(empty answer)"})
        self._messages.append({"role": "user", "content": text})
        self._purpose = purpose

    def _limit_reached(self) -> str:
        return (
            f"tool-call limit reached ({self.max_tool_calls}): "
            "the model is asked for its final strategy"
        )

    def _ignored(self, count: int) -> str:
        return f"the model called {count} tool(s) after its limit of {self.max_tool_calls}: not run"

    # -- verification ------------------------------------------------------------------------
    def _is_verified(self, strategy: Strategy, selector: str, where: str) -> bool:
        verified = {_normal(s) for s in self.probes.verified.items()}
        if selector in self.probes.verified or _normal(selector) in verified:
            return True
        return any(
            _normal(_within(scope, selector.strip())) in verified
            for scope in _scopes(strategy, where)
        )

    def _unverified(self, strategy: Strategy) -> list[tuple[str, str]]:
        return [
            (selector, where)
            for selector, where in _places(strategy)
            if not self._is_verified(strategy, selector, where)
        ]

    async def _accept(
        self, strategy: Strategy, unverified: list[tuple[str, str]]
    ) -> AsyncIterator[Event]:
        """Drop and record what is still unverified; a LIST_ITEM that is fails the plan."""
        for selector, where in unverified:
            yield Log(
                level="warning", message=f"refused unverified selector `{selector}` ({where})"
            )
        refused = list(dict.fromkeys(selector for selector, _ in unverified))
        if any(where == "LIST_ITEM" for _, where in unverified):
            error = (
                f"LIST_ITEM `{strategy.list_item}` was never verified by a tool call, "
                "so the strategy cannot be used"
            )
            self._fail(strategy.to_markdown(), error, refused)
            return
        kept = _drop(strategy, set(unverified))
        self.probes.item_selector = kept.list_item
        self._ending = PlanOutcome(
            kept, kept.to_markdown(), refused=refused, tool_calls=self._tool_calls
        )
