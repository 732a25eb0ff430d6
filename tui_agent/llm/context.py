"""How much a model can read, and how much a conversation takes of it, from litellm's local
model map; a model litellm does not know has no known limit (the user can give one)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from tui_agent.llm.runtime import litellm

CHARS_PER_TOKEN = 4
"""The rough rate used when litellm cannot count a conversation."""


def context_limit(model: str, override: int | None = None) -> int | None:
    """Input tokens `model` takes: `override` when given, else litellm's `max_input_tokens`
    (or `max_tokens`); None when litellm does not know the model. Never raises."""
    if override is not None:
        return override
    try:
        info = litellm().get_model_info(model)
    except Exception:
        return None
    for key in ("max_input_tokens", "max_tokens"):
        value = info.get(key)
        if isinstance(value, int) and value > 0:
            return value
    return None


def count_tokens(model: str, messages: Sequence[dict[str, Any]]) -> int:
    """The tokens `messages` take for `model` (litellm's count; about 4 characters a token
    when litellm cannot count them). Never raises."""
    try:
        return int(litellm().token_counter(model=model, messages=list(messages)))
    except Exception:
        return math.ceil(len(json.dumps(list(messages), default=str)) / CHARS_PER_TOKEN)
