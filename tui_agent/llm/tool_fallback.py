"""From native tool calls to the text protocol when the server cannot do them, once a session.

A server shows it cannot do tool calls in one of two ways: it refuses a request that carries
tools (`ToolsUnsupported`), or it answers as if there were none, the model writing its calls
in the reply's text (a `CALL` line, or the JSON a chat template asks for, as
`<tool_call>{"name": ..., "arguments": {...}}</tool_call>`). Either way the session goes on in
the text protocol (`text_calls`), and says so once (`ToolMode.fall_back`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from tui_agent.events import Log
from tui_agent.llm.actions import json_objects
from tui_agent.llm.text_calls import Spec, TextCall, TextTurn, parse_text_calls, tool_params

_WRAPPING = re.compile(r"</?tool_call>|^\s*```\w*\s*$", re.MULTILINE)


class ToolMode:
    """Whether a session's model calls its tools natively; it falls back to the text
    protocol at most once."""

    def __init__(self, native: bool) -> None:
        self.native = native

    def fall_back(self, model: str, why: str) -> Log | None:
        """Go over to the text protocol; the line that says so (None: already there)."""
        if not self.native:
            return None
        self.native = False
        return Log(
            level="warning",
            message=f"{model}: {why}; its tools are called through the text protocol "
            "(CALL lines) for the rest of the session",
        )


IGNORED = "the server ignored the tools (the model wrote its calls as text)"
REFUSED = "the server cannot do tool calls"


def calls_in_text(text: str, specs: Sequence[Spec]) -> TextTurn:
    """The calls to the tools of `specs` a reply writes in its text — CALL lines, else JSON
    objects naming a tool (`{"name": ..., "arguments"|"parameters": {...}}`) — and the prose
    around them (no calls: none, and all of the text)."""
    turn = parse_text_calls(text, specs)
    found = [call for call in turn.calls if call.error is None]
    if found:
        return TextTurn(found, turn.prose)
    found = _json_calls(text, set(tool_params(specs)))
    prose = text
    for call in found:
        prose = prose.replace(call.raw, "")
    return TextTurn(found, _WRAPPING.sub("", prose).strip())


def _json_calls(text: str, names: set[str]) -> list[TextCall]:
    calls: list[TextCall] = []
    for value, raw in json_objects(text):
        if value.get("name") not in names:
            continue
        arguments = value.get("arguments", value.get("parameters", {}))
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except json.JSONDecodeError:
                continue
        if isinstance(arguments, dict):
            calls.append(TextCall(value["name"], arguments, raw))
    return calls
