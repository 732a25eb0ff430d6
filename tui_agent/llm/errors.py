"""The LLM layer's exceptions: each carries one line the CLI can print as is, with no secret."""

from __future__ import annotations

import re
from collections.abc import Iterable

from tui_agent.errors import UserError

_KEY_LIKE = re.compile(
    r"\b(?:(?:sk|pk|rk|gsk|xai)[-_][A-Za-z0-9_\-]{8,}|AIza[0-9A-Za-z_\-]{20,}|AKIA[0-9A-Z]{16})"
)
_URL_CREDENTIALS = re.compile(r"(://)[^/@\s:]+:[^/@\s]+@")
MAX_LINE = 240


class LLMError(UserError):
    """The model cannot be used as asked; `str(exc)` is one printable line."""


class UnknownModel(LLMError):
    """litellm cannot tell which provider serves the model, or the provider does not know it."""


class MissingApiKey(LLMError):
    """The environment variable holding the provider's API key is not set."""

    def __init__(self, message: str, variable: str) -> None:
        super().__init__(message)
        self.variable = variable


class ApiKeyRejected(LLMError):
    """The provider refused the API key (401 / 403)."""

    def __init__(self, message: str, variable: str | None) -> None:
        super().__init__(message)
        self.variable = variable


class ProviderUnavailable(LLMError):
    """Rate limits, server errors or a broken connection outlasted the retries."""


class LLMRequestError(LLMError):
    """The provider refused the request itself (bad parameters, context too long, ...)."""


class ToolsUnsupported(LLMRequestError):
    """The server refused a request for carrying tools: it cannot do native tool calls."""


class ContextTooLong(LLMRequestError):
    """The conversation is longer than the model's context: fit the history and try again."""


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` on one line, shortened, with the given secrets and anything key-like masked."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    text = _KEY_LIKE.sub("***", text)
    text = _URL_CREDENTIALS.sub(r"\1***@", text)
    line = " ".join(text.split())
    return line if len(line) <= MAX_LINE else line[: MAX_LINE - 1] + "…"
