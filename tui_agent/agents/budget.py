"""A cost budget in USD, checked before every model call.

Before a call, its cost is estimated from litellm's price map: the prompt tokens counted
locally (scaled by how far the provider's own count exceeded ours on the previous call) plus
as many completion tokens as the longest reply so far (`FIRST_REPLY_TOKENS` before any). The
call is not made when what was spent plus that estimate would pass the limit. A call whose
price is unknown stops the run too: a budget that cannot be counted is not kept.
"""

from __future__ import annotations

from collections.abc import Sequence

from tui_agent.events import LLMCall
from tui_agent.llm import Message
from tui_agent.llm.cost import estimate_tokens, price

FIRST_REPLY_TOKENS = 400
REASK_TOKENS = 150
"""Prompt tokens a re-ask adds on top of the unusable reply it echoes (the repair message)."""


class Budget:
    """What was spent on `model` against `limit` USD."""

    def __init__(self, model: str, limit: float) -> None:
        self.model = model
        self.limit = limit
        self.spent = 0.0
        self.unpriced_calls = 0
        self._longest_reply = 0
        self._scale = 1.0

    def record(self, call: LLMCall, messages: Sequence[Message]) -> None:
        """Count a finished call made with `messages`."""
        if call.cost is None:
            self.unpriced_calls += 1
        else:
            self.spent += call.cost
        self._longest_reply = max(self._longest_reply, call.completion_tokens)
        counted = self._prompt_tokens(messages)
        if counted and call.prompt_tokens:
            self._scale = max(1.0, call.prompt_tokens / counted)

    def refusal(
        self, messages: Sequence[Message], *, reask: bool = False, model: str | None = None
    ) -> str | None:
        """Why the next call with `messages` must not be made, or None when it fits.

        `reask`: the call re-asks after an unusable reply, so its prompt also holds that
        reply and the repair message. `model`: the call goes to another model than the
        budget's own (a validator, say), priced as that one.
        """
        model = model or self.model
        if self.unpriced_calls:
            return (
                f"the price of a call to {self.model} is unknown, so the ${self.limit:.4f} "
                "budget cannot be kept"
            )
        extra = self._longest_reply + REASK_TOKENS if reask else 0
        prompt = int((self._prompt_tokens(messages) + extra) * self._scale)
        reply = self._longest_reply or FIRST_REPLY_TOKENS
        estimate = price(model, prompt, reply)
        if estimate is None:
            return f"litellm has no price for {model}, so the budget cannot be kept"
        if self.spent + estimate > self.limit:
            return (
                f"the next call would cost about ${estimate:.4f} and ${self.spent:.4f} is "
                f"spent: that passes the ${self.limit:.4f} budget"
            )
        return None

    def left(self) -> str:
        """What is spent and what is left, in one line."""
        left = max(0.0, self.limit - self.spent)
        return f"budget: ${self.spent:.4f} of ${self.limit:.4f} spent, ${left:.4f} left"

    def _prompt_tokens(self, messages: Sequence[Message]) -> int:
        return estimate_tokens(self.model, messages, "")[0]
