"""The ToolResult that answers a ToolCall, timed from when the call's work began."""

from __future__ import annotations

import time
from typing import Any

from tui_agent.events import ToolCall, ToolResult


def tool_result(
    call: ToolCall,
    began: float,
    output: str,
    facts: dict[str, Any] | None = None,
    *,
    ok: bool = True,
) -> ToolResult:
    """The ToolResult of `call`: its output and facts, and the seconds since `began` (a
    `time.monotonic()` reading) as its duration."""
    return ToolResult(
        call_id=call.call_id,
        name=call.name,
        output=output,
        facts=facts if facts is not None else {},
        ok=ok,
        duration=time.monotonic() - began,
    )
