"""Reading the code out of a code generator's reply, and the stage it is marked with.

The expected reply is one ```python block whose first line is `# STAGE: ANALYSIS` or
`# STAGE: TASK`. Also read: a JSON object `{"code": ...}` (bare or in a ```json fence), several
python blocks (joined), a reply that is Python and nothing else. Code without a marker is TASK
code. A reply holding an ANALYSIS block and a TASK block is read as its analysis: the task code
is asked for again once the analysis results exist.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from tui_agent.events import TaskStage
from tui_agent.llm.actions import code_from_reply, fenced_blocks, is_python

MARKER_LINES = 12
"""Lines at the top of the code in which a stage marker counts."""
_MARKER = re.compile(r"^\s*#\s*STAGE\s*[:=-]?\s*(ANALYSIS|TASK)\b", re.IGNORECASE)


class NoCode(ValueError):
    """A reply with no usable code; the message is one line for the model."""


@dataclass(frozen=True)
class CodeReply:
    """The code of a reply, its stage, the prose around it and how it was read."""

    code: str
    stage: TaskStage
    marked: bool
    prose: str
    repairs: tuple[str, ...] = ()


def stage_of(code: str) -> tuple[TaskStage, bool]:
    """(the stage marked near the top of `code`, whether a marker was there); TASK if none."""
    for line in code.strip().splitlines()[:MARKER_LINES]:
        match = _MARKER.match(line)
        if match:
            return ("analysis" if match.group(1).upper() == "ANALYSIS" else "task"), True
    return "task", False


def _json_code(text: str) -> str | None:
    """The "code" of a reply that is a JSON object (bare or fenced), else None."""
    candidates = [text.strip()]
    candidates += [block.body for block in fenced_blocks(text) if block.label in ("json", "")]
    for candidate in candidates:
        if not candidate.startswith("{"):
            continue
        try:
            data = json.loads(candidate, strict=False)
        except ValueError:
            continue
        code = data.get("code") if isinstance(data, dict) else None
        if isinstance(code, list) and all(isinstance(line, str) for line in code):
            code = "\n".join(code)
        if isinstance(code, str) and code.strip():
            return code
    return None


def _split_stages(code_blocks: list[str]) -> tuple[str, tuple[str, ...]]:
    """The analysis block alone when the reply holds blocks of both stages, else all joined."""
    stages = [stage_of(block) for block in code_blocks]
    if len(code_blocks) > 1 and ("analysis", True) in stages and ("task", True) in stages:
        analysis = code_blocks[stages.index(("analysis", True))]
        return analysis, ("read the ANALYSIS block; the TASK code is asked for after it runs",)
    return "\n\n".join(code_blocks), ()


def parse_code_reply(text: str) -> CodeReply:
    """The code in a reply; raises NoCode (one line for the model) when there is none."""
    if not text.strip():
        raise NoCode("the reply was empty")
    from_json = _json_code(text)
    if from_json is not None:
        stage, marked = stage_of(from_json)
        return CodeReply(from_json, stage, marked, "", ("read the code from a JSON object",))
    code, prose = code_from_reply(text)
    if code is not None:
        blocks = [b.body for b in fenced_blocks(text) if b.is_code and b.body.strip()]
        code, repairs = _split_stages(blocks) if len(blocks) > 1 else (code, ())
        stage, marked = stage_of(code)
        return CodeReply(code, stage, marked, prose, repairs)
    if is_python(text) and not text.lstrip().startswith(("{", "[")):
        stage, marked = stage_of(text)
        return CodeReply(text.strip("\n"), stage, marked, "", ("took the whole reply as code",))
    raise NoCode("the reply holds no Python code block")
