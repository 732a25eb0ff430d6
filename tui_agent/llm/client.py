"""One model behind litellm: async streaming calls, retries, and a record of every call.

`LLM(model)` checks offline that litellm knows the model's provider and that its API key is
set, so a missing key stops at once. `llm.stream(messages)` yields the reply's text as it
arrives; afterwards `.reply` holds the whole reply and its `LLMCall` record (model, tokens,
cost, latency, the sampling it was sent with). Keys are never put in records or messages.

Sampling settings left unset are never sent (the server's defaults hold). An Ollama model is
always sent its context window (`num_ctx`): Ollama's own default (2048 tokens) silently cuts
longer conversations.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

from tui_agent.config import ReplyFormChoice
from tui_agent.events import LLMCall, Sampling
from tui_agent.llm.cost import call_cost, estimate_tokens, price, usage_tokens
from tui_agent.llm.errors import (
    ApiKeyRejected,
    ContextTooLong,
    LLMError,
    LLMRequestError,
    MissingApiKey,
    ProviderUnavailable,
    ToolsUnsupported,
    UnknownModel,
    redact,
)
from tui_agent.llm.failures import http_status, is_connection_failure, is_transient
from tui_agent.llm.provider import (
    missing_key_message,
    missing_key_variables,
    present_key_variable,
    resolve_provider,
    supports_json_mode,
)
from tui_agent.llm.reply_forms import reply_form
from tui_agent.llm.runtime import litellm

Message = dict[str, Any]
"""A chat message in OpenAI's format: {"role": ..., "content": ...}."""

PLACEHOLDER_KEY = "no-key"
"""Sent to a custom `api_base` when no key is configured (local servers ignore it)."""

_LITELLM_PREFIX = re.compile(r"^litellm\.\w+:\s*(\w+:\s*)?")
_TOOLS_REFUSAL = re.compile(r"\btools?\b|tool[ _]choice|function[ _]call", re.IGNORECASE)
OLLAMA_PROVIDERS = ("ollama", "ollama_chat")
OLLAMA_CONTEXT = 8192
"""The context window asked of Ollama when the user gave none (`context_tokens`): room for
the agents' prompts and a fitted history, without the memory a model's largest window takes."""


@dataclass(frozen=True)
class RetryPolicy:
    """Retries for rate limits, 5xx and dropped connections: `attempts` tries in all."""

    attempts: int = 4
    base_delay: float = 1.0
    max_delay: float = 20.0

    def delay(self, retry: int) -> float:
        """Seconds to wait before retry number `retry` (0-based), doubling each time."""
        return min(self.max_delay, self.base_delay * 2**retry)


@dataclass(frozen=True)
class ToolCallRequest:
    """A tool call in a reply; `arguments` is the JSON text the model wrote."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Reply:
    """A finished reply and the record of the call that produced it."""

    text: str
    tool_calls: tuple[ToolCallRequest, ...]
    finish_reason: str | None
    call: LLMCall


class LLM:
    """A configured model. Construction raises `UnknownModel` / `MissingApiKey` offline."""

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        json_mode: bool | None = None,
        retry: RetryPolicy | None = None,
        timeout: float = 120.0,
        sampling: Sampling | None = None,
        context_tokens: int | None = None,
        reply_format: ReplyFormChoice = "auto",
    ) -> None:
        """`json_mode` None asks litellm whether the provider takes `response_format`;
        `context_tokens` is the context window the user gave (None: the provider's; for
        Ollama, `OLLAMA_CONTEXT`); `reply_format` how code-writing agents ask this model for
        their steps (`reply_form`)."""
        self.model = model
        self.api_base = api_base
        self.retry = retry or RetryPolicy()
        self.timeout = timeout
        self.sampling = sampling if sampling else None
        bare_model, self.provider = resolve_provider(model, api_base)
        self.context_window = self._context_window(context_tokens)
        self.reply_form = reply_form(reply_format, self.provider, api_base)
        missing = missing_key_variables(model, api_base)
        self.key_variable = missing[0] if missing else present_key_variable(self.provider)
        self._placeholder_key = False
        if api_key is None and missing:
            if api_base is None:
                raise MissingApiKey(missing_key_message(model, missing), missing[0])
            api_key, self._placeholder_key = PLACEHOLDER_KEY, True
        self._api_key = api_key
        self._explicit_key = api_key is not None and not self._placeholder_key
        if json_mode is None:
            json_mode = supports_json_mode(bare_model, self.provider)
        self.json_mode = json_mode

    def _context_window(self, context_tokens: int | None) -> int | None:
        """The window sent as Ollama's `num_ctx` (None: not an Ollama model)."""
        if self.provider not in OLLAMA_PROVIDERS:
            return None
        return context_tokens or OLLAMA_CONTEXT

    def __repr__(self) -> str:
        base = redact(self.api_base) if self.api_base else None
        return f"LLM(model={self.model!r}, provider={self.provider!r}, api_base={base!r})"

    def stream(
        self,
        messages: Sequence[Message],
        *,
        want_json: bool = False,
        tools: Sequence[dict[str, Any]] | None = None,
        purpose: str = "",
        step: int = 0,
    ) -> ReplyStream:
        """Start a call; iterate the result for text deltas, then read its `.reply`.

        `want_json` sends `response_format={"type": "json_object"}` when `self.json_mode`.
        """
        return ReplyStream(self, list(messages), want_json, tools, purpose, step)

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        want_json: bool = False,
        tools: Sequence[dict[str, Any]] | None = None,
        purpose: str = "",
        step: int = 0,
    ) -> Reply:
        """The whole reply at once (the call still streams underneath)."""
        stream = self.stream(messages, want_json=want_json, tools=tools, purpose=purpose, step=step)
        async for _ in stream:
            pass
        return stream.reply

    # -- internals used by ReplyStream ----------------------------------------------------
    def _request(
        self, messages: list[Message], want_json: bool, tools: Sequence[dict[str, Any]] | None
    ) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
            "timeout": self.timeout,
            "max_retries": 0,  # retries are ours, so they are bounded and visible
        }
        optional = {
            "api_base": self.api_base,
            "api_key": self._api_key,
            "num_ctx": self.context_window,
            **(self.sampling.given() if self.sampling else {}),
        }
        request.update({k: v for k, v in optional.items() if v is not None})
        if want_json and self.json_mode:
            request["response_format"] = {"type": "json_object"}
        if tools:
            request["tools"] = list(tools)
            # litellm routes any `tools` through its MCP gateway check, which imports the
            # optional `mcp` package; these are plain function tools, so skip that check.
            request["_skip_mcp_handler"] = True
        return request

    async def _open(self, request: dict[str, Any]) -> tuple[Any, float]:
        """The litellm stream once its headers arrived, retrying transient failures."""
        for attempt in range(self.retry.attempts):
            started = time.perf_counter()
            try:
                return await litellm().acompletion(**request), started
            except Exception as exc:
                if "tools" in request and self._refuses_tools(exc):
                    raise ToolsUnsupported(
                        f"{self._where()} cannot do tool calls for {self.model}: "
                        f"{self._describe(exc)}"
                    ) from None
                if not is_transient(exc):
                    raise self._translate(exc) from None
                if attempt + 1 >= self.retry.attempts:
                    raise self._gave_up(exc, attempt + 1) from None
            await asyncio.sleep(self.retry.delay(attempt))
        raise AssertionError("unreachable: RetryPolicy.attempts must be >= 1")

    def _refuses_tools(self, exc: BaseException) -> bool:
        """Whether a failed request was refused for its tools ("does not support tools",
        "tools param requires --jinja", "tool choice requires --enable-auto-tool-choice"):
        an answer, not a failure to retry."""
        status = http_status(exc)
        if status in (401, 403, 429) or is_connection_failure(exc):
            return False
        return bool(_TOOLS_REFUSAL.search(str(exc)))

    def _secrets(self) -> list[str]:
        values = [self._api_key or ""]
        if self.key_variable:
            values.append(os.environ.get(self.key_variable, ""))
        return values

    def _describe(self, exc: BaseException) -> str:
        return redact(_LITELLM_PREFIX.sub("", str(exc)), self._secrets())

    def _where(self) -> str:
        return f"the server at {redact(self.api_base)}" if self.api_base else self.provider

    def _gave_up(self, exc: BaseException, attempts: int) -> ProviderUnavailable:
        if http_status(exc) == 429:
            what = f"rate limited by {self._where()}"
        elif is_connection_failure(exc):
            what = f"cannot reach {self._where()}"
        else:
            what = f"{self._where()} kept failing"
        return ProviderUnavailable(
            f"{what} ({attempts} attempts for {self.model}): {self._describe(exc)}"
        )

    def _translate(self, exc: BaseException) -> LLMError:
        """One clear line for a non-retryable failure; never the key itself."""
        lt = litellm()
        status = http_status(exc)
        if status in (401, 403):
            if self._placeholder_key:
                return ApiKeyRejected(
                    f"{self._where()} wants an API key: set {self.key_variable}",
                    self.key_variable,
                )
            if self._explicit_key or not self.key_variable:
                return ApiKeyRejected(
                    f"the API key given for {self.model} was rejected by {self._where()}", None
                )
            return ApiKeyRejected(
                f"the API key in {self.key_variable} was rejected by {self._where()}",
                self.key_variable,
            )
        if status == 404:
            return UnknownModel(f"model {self.model!r} was not found by {self._where()}")
        if isinstance(exc, lt.ContextWindowExceededError):
            return ContextTooLong(f"the conversation is too long for {self.model}'s context")
        return LLMRequestError(f"{self._where()} refused the request: {self._describe(exc)}")


class ReplyStream:
    """Async iterator over a reply's text deltas; `.reply` is set once it is exhausted.

    Transient failures before the first delta are retried; a stream that breaks after text
    was delivered raises `ProviderUnavailable` (the partial text cannot be taken back).
    """

    def __init__(
        self,
        llm: LLM,
        messages: list[Message],
        want_json: bool,
        tools: Sequence[dict[str, Any]] | None,
        purpose: str,
        step: int,
    ) -> None:
        self._llm = llm
        self._messages = messages
        self._request = llm._request(messages, want_json, tools)
        self._purpose = purpose
        self._step = step
        self._reply: Reply | None = None

    @property
    def reply(self) -> Reply:
        """The finished reply; an error to read before the stream was consumed."""
        if self._reply is None:
            raise RuntimeError("the reply is not finished: iterate the stream first")
        return self._reply

    def __aiter__(self) -> AsyncIterator[str]:
        return self._run()

    async def _run(self) -> AsyncIterator[str]:
        llm = self._llm
        lt = litellm()
        response, started = await llm._open(self._request)
        chunks: list[Any] = []
        try:
            async for chunk in response:
                chunks.append(chunk)
                text = chunk.choices[0].delta.content if chunk.choices else None
                if text:
                    yield text
        except Exception as exc:
            raise ProviderUnavailable(
                f"the reply from {llm._where()} broke off: {llm._describe(exc)}"
            ) from None
        finally:
            await response.aclose()
        latency = time.perf_counter() - started
        built = lt.stream_chunk_builder(chunks, messages=self._messages) if chunks else None
        self._reply = _reply_from(
            built, response, llm, self._messages, latency, self._purpose, self._step
        )


def _reply_from(
    built: Any,
    response: Any,
    llm: LLM,
    messages: list[Message],
    latency: float,
    purpose: str,
    step: int,
) -> Reply:
    choice = built.choices[0] if built is not None and built.choices else None
    text = (choice.message.content or "") if choice else ""
    calls = tuple(
        ToolCallRequest(id=c.id or "", name=c.function.name or "", arguments=c.function.arguments)
        for c in (choice.message.tool_calls or () if choice else ())
    )
    prompt_tokens, completion_tokens = usage_tokens(built)
    estimated = not (prompt_tokens or completion_tokens)
    if not estimated:
        cost = call_cost(built, llm.model)
    else:  # the provider sent no usage: count locally rather than record a free call
        output = text + "".join(c.name + c.arguments for c in calls)
        prompt_tokens, completion_tokens = estimate_tokens(llm.model, messages, output)
        cost = price(llm.model, prompt_tokens, completion_tokens)
    hidden = getattr(response, "_hidden_params", None) or {}
    call = LLMCall(
        model=llm.model,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        cost=cost,
        latency=latency,
        cached=bool(hidden.get("cache_hit")),
        purpose=purpose,
        step=step,
        estimated=estimated,
        sampling=llm.sampling,
    )
    finish_reason = choice.finish_reason if choice else None
    return Reply(text=text, tool_calls=calls, finish_reason=finish_reason, call=call)
