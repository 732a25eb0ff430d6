"""Fitting a conversation into the model's context before a call.

In order, until the history fits: older execution outputs are shortened (to an excerpt, then
to one line), then the oldest turns are replaced by a summary the caller writes (a model
call), and when no summary can be had the oldest turns are left out with a note saying so.

The first messages (system prompt and task) and the last turns are never changed, and a turn
never is split: a turn is an assistant message with the tool messages answering its calls and
the messages up to the next assistant message (execution results, follow-ups). Whatever is
taken out is replaced by one user message, so no two assistant messages ever meet.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from tui_agent.agents.codeact_prompts import RESULT_PREFIX
from tui_agent.llm import Message
from tui_agent.llm.context import CHARS_PER_TOKEN, count_tokens

Summarise = Callable[[list[Message]], Awaitable[str]]
"""Writes a summary of the messages it is given (the caller makes it a model call)."""

EXCERPT_HEAD = 300
EXCERPT_TAIL = 200
"""Characters of an older output kept at its start and its end when it is shortened."""
SUMMARY_TOKENS = 800
"""Room kept for the summary when choosing how many turns it replaces; a longer one is cut."""
SUMMARY_HEADER = (
    "Summary of the conversation so far (earlier turns were summarised to fit the model's "
    "context):\n"
)
TEXT_RESULT_PREFIX = "RESULT "
"""Tool results in the text protocol (`tui_agent.llm.text_calls.result_block`)."""


@dataclass(frozen=True)
class Fitted:
    """A fitted history and what was done to it (counts of original messages)."""

    messages: list[Message]
    before: int
    after: int
    shortened: int
    summarised: int
    dropped: int

    def describe(self) -> str:
        """One line for the stream, e.g. `history fitted: 41,200 -> 7,900 tokens (...)`."""
        done = [
            _count(self.shortened, "older output", "shortened"),
            _count(self.summarised, "message", "summarised"),
            _count(self.dropped, "message", "left out"),
        ]
        what = ", ".join(part for part in done if part)
        line = f"history fitted: {self.before:,} -> {self.after:,} tokens"
        return f"{line} ({what})" if what else line


async def fit_history(
    messages: Sequence[Message],
    *,
    model: str,
    limit: int,
    keep_head: int = 2,
    keep_last: int = 4,
    summarise: Summarise | None = None,
    reserve: int = 1024,
) -> Fitted | None:
    """None when `messages` and `reserve` already fit in `limit` tokens; else the history
    fitted into `limit - reserve`: older outputs shortened, then the oldest turns summarised
    by `summarise` (when given and it succeeds), else left out with a note.

    The first `keep_head` messages and the last `keep_last` turns are kept as they are; when
    they alone do not fit, `after` stays above the target. `messages` is not changed.
    """
    before = count_tokens(model, messages)
    if before + reserve <= limit:
        return None
    head_end = _head_end(messages, keep_head)
    turns = _turns(messages[head_end:])
    split = max(0, len(turns) - keep_last)
    fitting = _Fitting(model, limit - reserve, list(messages[:head_end]), turns[:split])
    fitting.fixed += sum(_tokens(model, m) for turn in turns[split:] for m in turn)
    fitting.shorten()
    if summarise is not None and not fitting.fits():
        await fitting.summarise(summarise)
    if not fitting.fits():
        fitting.drop()
    fitted = fitting.messages(after=[m for turn in turns[split:] for m in turn])
    return Fitted(
        messages=fitted,
        before=before,
        after=count_tokens(model, fitted),
        shortened=fitting.shortened(),
        summarised=fitting.summary.originals if fitting.summary else 0,
        dropped=fitting.note.originals if fitting.note else 0,
    )


@dataclass
class _Unit:
    """Messages that move together, as they are now and as they were (`source`)."""

    messages: list[Message]
    tokens: int
    originals: int
    source: list[Message] = field(default_factory=list)


class _Fitting:
    """The middle of a history being fitted; `fixed` counts the tokens that never change
    (per message, which counts a little more than the whole list: the target holds)."""

    def __init__(self, model: str, target: int, head: list[Message], middle: list[list[Message]]):
        self.model = model
        self.target = target
        self.head = head
        self.fixed = sum(_tokens(model, m) for m in head)
        self.middle = [self._unit(turn, len(turn)) for turn in middle]
        self.summary: _Unit | None = None
        self.note: _Unit | None = None

    def _unit(self, messages: list[Message], originals: int) -> _Unit:
        tokens = sum(_tokens(self.model, m) for m in messages)
        return _Unit(list(messages), tokens, originals, list(messages))

    def total(self, middle: Sequence[_Unit] | None = None, *extra: _Unit | None) -> int:
        units = self.middle if middle is None else middle
        added = sum(unit.tokens for unit in extra if unit is not None)
        return self.fixed + added + sum(unit.tokens for unit in units)

    def fits(self) -> bool:
        return self.total(None, self.summary, self.note) <= self.target

    def messages(self, after: list[Message]) -> list[Message]:
        taken = [self.summary, self.note, *self.middle]
        return [*self.head, *(m for unit in taken if unit for m in unit.messages), *after]

    def shortened(self) -> int:
        return sum(
            1
            for unit in self.middle
            for now, was in zip(unit.messages, unit.source, strict=True)
            if now is not was
        )

    # -- 1. older outputs, oldest first: to an excerpt, then to one line --------------------
    def shorten(self) -> None:
        for shorter in (_excerpt, _one_line):
            for unit in self.middle:
                for index, message in enumerate(unit.messages):
                    if self.fits():
                        return
                    content = shorter(message, unit.source[index])
                    if content is not None:
                        unit.messages[index] = {**message, "content": content}
                        unit.tokens = sum(_tokens(self.model, m) for m in unit.messages)

    # -- 2. the oldest turns replaced by a summary ------------------------------------------
    async def summarise(self, summarise: Summarise) -> None:
        if not self.middle:
            return
        count = self._turns_to_take(room=SUMMARY_TOKENS)
        taken = self.middle[:count]
        try:
            text = (await summarise(self._to_summarise(taken))).strip()
        except Exception:  # a failed summary falls back to leaving turns out
            return
        if not text:
            return
        limit = SUMMARY_TOKENS * CHARS_PER_TOKEN
        if len(text) > limit:
            text = text[:limit].rstrip() + " [...]"
        message: Message = {"role": "user", "content": SUMMARY_HEADER + text}
        self.summary = self._unit([message], sum(unit.originals for unit in taken))
        self.middle = self.middle[count:]

    def _to_summarise(self, taken: list[_Unit]) -> list[Message]:
        """The turns as they were when the summary call can read them whole, else as shortened."""
        source = [dict(m) for unit in taken for m in unit.source]
        if count_tokens(self.model, source) + SUMMARY_TOKENS <= self.target:
            return source
        return [dict(m) for unit in taken for m in unit.messages]

    def _turns_to_take(self, room: int) -> int:
        """The fewest oldest turns whose place, with `room` tokens, makes the rest fit."""
        for count in range(1, len(self.middle)):
            if self.total(self.middle[count:], self.summary) + room <= self.target:
                return count
        return len(self.middle)

    # -- 3. the oldest turns left out, with a note ------------------------------------------
    def drop(self) -> None:
        for count in range(1, len(self.middle) + 1):
            self.note = self._note(sum(unit.originals for unit in self.middle[:count]))
            if self.total(self.middle[count:], self.summary, self.note) <= self.target:
                self.middle = self.middle[count:]
                return
        self.middle = []
        if self.summary is not None and not self.fits():
            dropped = (self.note.originals if self.note else 0) + self.summary.originals
            self.summary, self.note = None, self._note(dropped)

    def _note(self, originals: int) -> _Unit:
        were = "message was" if originals == 1 else "messages were"
        content = (
            f"Note: {originals} earlier {were} left out of this conversation to fit the "
            "model's context."
        )
        return self._unit([{"role": "user", "content": content}], originals)


def _head_end(messages: Sequence[Message], keep_head: int) -> int:
    """Where the kept head ends: after `keep_head` messages and any tool answers they hold."""
    end = min(keep_head, len(messages))
    while end < len(messages) and messages[end].get("role") == "tool":
        end += 1
    return end


def _turns(messages: Sequence[Message]) -> list[list[Message]]:
    """The messages cut before each assistant message (the first part may hold none)."""
    turns: list[list[Message]] = []
    for message in messages:
        if message.get("role") == "assistant" or not turns:
            turns.append([])
        turns[-1].append(message)
    return turns


def _output_body(message: Message) -> tuple[str, str] | None:
    """(prefix kept, body) of an execution or tool output; None for any other message."""
    content = message.get("content")
    if not isinstance(content, str):
        return None
    role = message.get("role")
    if role == "tool":
        return "", content
    if role == "user" and content.startswith(RESULT_PREFIX):
        return RESULT_PREFIX, content[len(RESULT_PREFIX) :]
    if role == "user" and content.startswith(TEXT_RESULT_PREFIX):
        return "", content
    return None


def _excerpt(message: Message, source: Message) -> str | None:
    """The output's start and end with a mark of what was cut; None when that is no shorter."""
    parts = _output_body(message)
    if parts is None or message is not source:
        return None
    prefix, body = parts
    cut = len(body) - EXCERPT_HEAD - EXCERPT_TAIL
    mark = f"\n[... {cut:,} characters cut]\n"
    if cut <= len(mark):
        return None
    return prefix + body[:EXCERPT_HEAD] + mark + body[-EXCERPT_TAIL:]


def _one_line(message: Message, source: Message) -> str | None:
    """One line saying an output was left out; None when that is no shorter."""
    parts = _output_body(source)
    if parts is None:
        return None
    prefix, body = parts
    line = f"{prefix}[output of an earlier run, {len(body):,} characters, left out]"
    return line if len(line) < len(message.get("content") or "") else None


def _tokens(model: str, message: Message) -> int:
    return count_tokens(model, [message])


def _count(number: int, noun: str, done: str) -> str:
    if not number:
        return ""
    return f"{number:,} {noun}{'' if number == 1 else 's'} {done}"


SUMMARY_PROMPT = (
    "You summarise the earlier part of a conversation between a user and a coding agent, so "
    "the agent can go on without it. Keep what the agent will need: the user's requests, the "
    "facts found, the names of variables, functions and files made (they still exist), what "
    f"failed and why, and what is still to do. Plain text, under {SUMMARY_TOKENS // 2} words."
)


def summary_request(messages: Sequence[Message]) -> list[Message]:
    """The model call that summarises `messages` (see SUMMARY_PROMPT)."""
    lines = [f"{m.get('role', '?')}: {_text_of(m)}" for m in messages]
    return [
        {"role": "system", "content": SUMMARY_PROMPT},
        {"role": "user", "content": "The conversation to summarise:\n\n" + "\n\n".join(lines)},
    ]


def _text_of(message: Message) -> str:
    content = message.get("content")
    text = content if isinstance(content, str) else str(content or "")
    calls = message.get("tool_calls") or []
    named = ", ".join(str((c.get("function") or {}).get("name", "?")) for c in calls)
    return f"{text} [calls: {named}]" if named else text
