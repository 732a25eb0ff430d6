"""Classifying litellm's exceptions: HTTP status, dropped connections, worth a retry or not."""

from __future__ import annotations

from tui_agent.llm.runtime import litellm

_CHAIN_DEPTH = 10


def http_status(exc: BaseException) -> int | None:
    """The HTTP status of a litellm error (litellm maps some, e.g. 403, to a generic class)."""
    lt = litellm()
    for kind, status in (
        (lt.AuthenticationError, 401),
        (lt.PermissionDeniedError, 403),
        (lt.NotFoundError, 404),
        (lt.RateLimitError, 429),
    ):
        if isinstance(exc, kind):
            return status
    code = getattr(exc, "status_code", None)
    return code if isinstance(code, int) else None


def is_connection_failure(exc: BaseException) -> bool:
    """Whether the request never got an answer (refused, reset, timed out), in any wrapping."""
    from openai import APIConnectionError  # litellm wraps these in a 500 InternalServerError

    seen: BaseException | None = exc
    for _ in range(_CHAIN_DEPTH):
        if seen is None:
            return False
        if isinstance(seen, APIConnectionError | ConnectionError | TimeoutError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def is_transient(exc: BaseException) -> bool:
    """Rate limits, server errors, timeouts and dropped connections: worth another try."""
    if is_connection_failure(exc):
        return True
    status = http_status(exc)
    return status is not None and (status == 429 or status >= 500)
