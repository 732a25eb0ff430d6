"""The JSON object in a short model answer, however it is wrapped (a fence, prose around it)."""

from __future__ import annotations

import json
import re
from typing import Any

_OUTERMOST_BRACES = re.compile(r"\{.*\}", re.DOTALL)


def json_object_in(text: str) -> dict[str, Any] | None:
    """The text from its first `{` to its last `}` read as a JSON object; None when there is
    none or it does not parse."""
    match = _OUTERMOST_BRACES.search(text)
    if not match:
        return None
    try:
        value = json.loads(match.group(0))
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None
