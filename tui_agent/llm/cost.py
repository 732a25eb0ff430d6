"""Token counts and prices from litellm's local price map; an unknown price is None, never 0."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tui_agent.llm.runtime import litellm


def usage_tokens(response: Any) -> tuple[int, int]:
    """(prompt_tokens, completion_tokens) reported for a response; (0, 0) when absent."""
    usage = getattr(response, "usage", None)
    if usage is None:
        return 0, 0
    prompt = getattr(usage, "prompt_tokens", 0) or 0
    completion = getattr(usage, "completion_tokens", 0) or 0
    return int(prompt), int(completion)


def estimate_tokens(model: str, messages: Sequence[dict[str, Any]], output: str) -> tuple[int, int]:
    """(prompt_tokens, completion_tokens) counted locally, for providers that report none."""
    lt = litellm()
    prompt = lt.token_counter(model=model, messages=list(messages))
    completion = lt.token_counter(model=model, text=output, count_response_tokens=True)
    return int(prompt), int(completion)


def price(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """USD for these token counts of `model`, or None when litellm has no price for it."""
    try:
        prompt_cost, completion_cost = litellm().cost_per_token(
            model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        )
    except Exception:
        return None
    return float(prompt_cost) + float(completion_cost)


def call_cost(response: Any, model: str) -> float | None:
    """The response's price in USD, or None when litellm has no price for the model.

    The price of the model the provider says answered is tried first (it may name an exact
    snapshot), then the price of `model` as configured.
    """
    try:
        return float(litellm().completion_cost(completion_response=response))
    except Exception:
        return price(model, *usage_tokens(response))


def price_known(model: str) -> bool:
    """Whether litellm's price map has a price for `model` (a cost budget can be enforced)."""
    try:
        info = litellm().get_model_info(model)
    except Exception:
        return False
    return info.get("input_cost_per_token") is not None
