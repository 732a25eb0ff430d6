"""A scripted OpenAI-compatible chat model on 127.0.0.1, for tests, benchmarks and demos.

It plays a list of `Reply` objects in order, one per POST to `/v1/chat/completions` (or
`/chat/completions`): text or tool calls, streamed as SSE chunks or returned whole, with usage;
or an error status (429, 500, 401, ...). Every request is recorded so tests can assert what the
client sent. When the script runs out it answers 500 with a message that says so. A server made
with `refuse_tools="..."` answers every request carrying `tools` with that 400 error (no reply
used), as servers without tool calling do (Ollama, llama.cpp without --jinja, vLLM).

Reach it through litellm as model ``server.model("name")`` (``openai/name``) with
``api_base=server.api_base`` and any api key::

    with ScriptedModel([text('{"thought": "hi", ...}')]) as server:
        await litellm.acompletion(model=server.model(), api_base=server.api_base, ...)

Run standalone for a demo: ``python tests/support/scripted_model.py script.json`` (a JSON list
of Reply fields) prints the api_base and serves until interrupted.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PATHS = ("/v1/chat/completions", "/chat/completions")


@dataclass(frozen=True)
class ToolCallReply:
    """One tool call the model makes; `arguments` is sent as its JSON text."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)

    def arguments_text(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)


@dataclass(frozen=True)
class Reply:
    """One scripted answer.

    `stream` None follows the request's own `stream` flag. `usage` overrides the token counts
    (keys prompt_tokens / completion_tokens); `omit_usage` leaves usage out even when the client
    asks for it, as some providers do. `first_delay` waits before the first content (a model's
    time to first token), `chunk_delay` between chunks. `status` != 200 answers with an
    OpenAI-style error body carrying `error_message` and `error_code` (default: the status).
    `disconnect_after` drops the connection after that many content chunks of a streamed reply.
    """

    content: str | None = None
    tool_calls: tuple[ToolCallReply, ...] = ()
    status: int = 200
    error_message: str = ""
    error_code: str | int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    stream: bool | None = None
    chunk_size: int = 8
    chunk_delay: float = 0.0
    first_delay: float = 0.0
    usage: dict[str, int] | None = None
    omit_usage: bool = False
    finish_reason: str | None = None
    disconnect_after: int | None = None


def text(content: str, **options: Any) -> Reply:
    """A reply whose message content is `content`."""
    return Reply(content=content, **options)


def action_reply(
    thought: str,
    action: str,
    *,
    code: str | None = None,
    final_answer: str | None = None,
    **options: Any,
) -> Reply:
    """A reply holding one JSON action of the code agents (thought, action, code or answer)."""
    body: dict[str, str] = {"thought": thought, "action": action}
    if code is not None:
        body["code"] = code
    if final_answer is not None:
        body["final_answer"] = final_answer
    return text(json.dumps(body), **options)


REPLY_SHAPES = ("json", "fenced_json", "python_block", "prose")
"""How real models answer: bare JSON, JSON in a ```json fence with prose, a ```python block with
prose around it (code actions only), prose alone (answers only)."""

SMALL_MODEL_SHAPES = (
    "label_in_code",
    "fence_in_code",
    "unclosed_fence",
    "think",
    "json_comments",
    "labelled",
)
"""How small local models answer too (seen from Qwen2.5-Coder-1.5B, recorded in
tests/fixtures/real_replies): JSON whose code starts with a stray `python` label line or sits
in a ``` fence (code actions only), a ```python block never closed (code actions only), a
<think> block before JSON with no thought, JSON with // and # comments, and `Thought:` /
`Action:` / `Final answer:` lines with the code in a fence. And "fenced", the form small models
are asked for (tui_agent/llm/reply_forms.py): a `Thought:` line and a ```python block, or a
`Final answer:` line."""


def shaped_reply(
    shape: str,
    thought: str,
    action: str,
    *,
    code: str | None = None,
    final_answer: str | None = None,
    **options: Any,
) -> Reply:
    """The same action in one of REPLY_SHAPES or SMALL_MODEL_SHAPES, or "fenced"."""
    fields = {"code": code, "final_answer": final_answer}
    if shape == "json":
        return action_reply(thought, action, **fields, **options)
    if shape == "fenced_json":
        body = action_reply(thought, action, **fields).content
        return text(f"Here is my next step.\n\n```json\n{body}\n```\n", **options)
    if shape == "python_block":
        assert code is not None, "a python block carries code"
        return text(f"{thought}\n\n```python\n{code}\n```\n\nThis should do it.", **options)
    if shape == "prose":
        assert final_answer is not None, "prose carries an answer"
        return text(final_answer, **options)
    if shape in ("label_in_code", "fence_in_code"):
        assert code is not None, f"{shape} carries code"
        inside = f"python\n{code}" if shape == "label_in_code" else f"```python\n{code}\n```"
        return action_reply(thought, action, code=inside, **options)
    if shape == "unclosed_fence":
        assert code is not None, "an unclosed fence carries code"
        return text(f"{thought}\n\n```python\n{code}\n", **options)
    if shape == "think":
        body = {"action": action, **{k: v for k, v in fields.items() if v is not None}}
        return text(f"<think>\n{thought}\n</think>\n\n{json.dumps(body)}", **options)
    if shape == "json_comments":
        lines = [f"  // {thought}", f'  "thought": {json.dumps(thought)},']
        lines.append(f'  "action": {json.dumps(action)}, # what to do')
        lines += [f'  "{k}": {json.dumps(v)},' for k, v in fields.items() if v is not None]
        return text("{\n" + "\n".join(lines).rstrip(",") + "\n}", **options)
    if shape == "fenced":
        if code is not None:
            return text(f"Thought: {thought}\n```python\n{code}\n```\n", **options)
        return text(f"Final answer: {final_answer}", **options)
    if shape == "labelled":
        body = f"Thought: {thought}\nAction: {action}\n"
        if code is not None:
            body += f"```python\n{code}\n```\n"
        if final_answer is not None:
            body += f"Final answer: {final_answer}\n"
        return text(body, **options)
    raise ValueError(f"unknown reply shape {shape!r}")


def tool_calls(*calls: ToolCallReply, **options: Any) -> Reply:
    """A reply that calls tools instead of answering in text."""
    return Reply(tool_calls=tuple(calls), **options)


def error(status: int, message: str = "", **options: Any) -> Reply:
    """A reply that fails with HTTP `status`."""
    return Reply(status=status, error_message=message or f"scripted error {status}", **options)


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it (header names in lower case)."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body.get("messages", [])

    @property
    def response_format(self) -> dict[str, Any] | None:
        return self.body.get("response_format")

    @property
    def tools(self) -> list[dict[str, Any]] | None:
        return self.body.get("tools")

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))


def _error_type(status: int) -> str:
    return {
        400: "invalid_request_error",
        401: "invalid_api_key",
        403: "permission_denied",
        404: "not_found_error",
        429: "rate_limit_exceeded",
    }.get(status, "server_error")


def _estimate_tokens(text_: str) -> int:
    return max(1, len(text_) // 4)


class ScriptedModel:
    """The server; use as a context manager (it binds an ephemeral port on enter)."""

    handler_class: type[BaseHTTPRequestHandler] | None = None
    """Serves each request (default: _Handler); subclasses may swap it, e.g. to hold a reply."""

    def __init__(
        self, replies: Iterable[Reply | str] = (), *, refuse_tools: str | None = None
    ) -> None:
        self._replies = [text(r) if isinstance(r, str) else r for r in replies]
        self.refuse_tools = refuse_tools
        """The message of the 400 answered to a request carrying tools (None: they are
        taken)."""
        self._lock = threading.Lock()
        self.requests: list[RecordedRequest] = []
        self.exhausted = False
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- script --------------------------------------------------------------------------
    def push(self, *replies: Reply | str) -> None:
        """Append replies to the script."""
        with self._lock:
            self._replies.extend(text(r) if isinstance(r, str) else r for r in replies)

    @property
    def remaining(self) -> int:
        """Replies not yet played."""
        with self._lock:
            return len(self._replies)

    def _take(self, request: RecordedRequest) -> Reply | None:
        with self._lock:
            self.requests.append(request)
            if self.refuse_tools is not None and request.tools:
                return error(400, self.refuse_tools)
            if not self._replies:
                self.exhausted = True
                return None
            return self._replies.pop(0)

    # -- addresses -----------------------------------------------------------------------
    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the scripted model server is not running")
        return self._server.server_address[1]

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @staticmethod
    def model(name: str = "scripted") -> str:
        """The litellm model string that reaches this server."""
        return f"openai/{name}"

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> ScriptedModel:
        handler = type("Handler", (self.handler_class or _Handler,), {"scripted": self})
        self._server = _QuietServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> ScriptedModel:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _QuietServer(ThreadingHTTPServer):
    """A client (litellm's pool) dropping a kept-alive connection is normal: print nothing."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    scripted: ScriptedModel

    def log_message(self, format: str, *args: Any) -> None:  # silence stderr
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path.split("?")[0] not in PATHS:
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._send_json(400, {"error": {"message": "request body is not JSON"}})
            return
        headers = {name.lower(): value for name, value in self.headers.items()}
        request = RecordedRequest(self.path, headers, body)
        reply = self.scripted._take(request)
        if reply is None:
            count = len(self.scripted.requests) - 1
            message = f"scripted model: script exhausted after {count} replies"
            self._send_json(500, {"error": {"message": message, "type": "script_exhausted"}})
            return
        if reply.status != 200:
            payload = {
                "error": {
                    "message": reply.error_message,
                    "type": _error_type(reply.status),
                    "code": reply.status if reply.error_code is None else reply.error_code,
                }
            }
            self._send_json(reply.status, payload, reply.headers)
            return
        usage = self._usage(body, reply)
        stream = body.get("stream", False) if reply.stream is None else reply.stream
        try:
            if stream:
                self._send_stream(body, reply, usage)
            else:
                self._send_json(200, self._completion(body, reply, usage), reply.headers)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    # -- bodies --------------------------------------------------------------------------
    @staticmethod
    def _usage(body: dict[str, Any], reply: Reply) -> dict[str, int]:
        prompt = json.dumps(body.get("messages", []))
        out = (reply.content or "") + "".join(c.name + c.arguments_text() for c in reply.tool_calls)
        usage = {
            "prompt_tokens": _estimate_tokens(prompt),
            "completion_tokens": _estimate_tokens(out),
        }
        usage.update(reply.usage or {})
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        return usage

    @staticmethod
    def _finish_reason(reply: Reply) -> str:
        return reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")

    def _completion(self, body: dict[str, Any], reply: Reply, usage: dict[str, int]) -> dict:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{i}",
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments_text()},
                }
                for i, c in enumerate(reply.tool_calls)
            ]
        return {
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [
                {"index": 0, "message": message, "finish_reason": self._finish_reason(reply)}
            ],
            "usage": usage,
        }

    def _chunks(self, body: dict[str, Any], reply: Reply) -> Iterable[dict[str, Any]]:
        model = body.get("model", "scripted")

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {
                "id": "chatcmpl-scripted",
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }

        yield chunk({"role": "assistant", "content": ""})
        content = reply.content or ""
        size = max(1, reply.chunk_size)
        for start in range(0, len(content), size):
            yield chunk({"content": content[start : start + size]})
        for i, call in enumerate(reply.tool_calls):
            function = {"name": call.name, "arguments": ""}
            head = {"index": i, "id": f"call_{i}", "type": "function", "function": function}
            yield chunk({"tool_calls": [head]})
            args = call.arguments_text()
            for start in range(0, len(args), size):
                piece = {"index": i, "function": {"arguments": args[start : start + size]}}
                yield chunk({"tool_calls": [piece]})
        yield chunk({}, self._finish_reason(reply))

    def _send_stream(self, body: dict[str, Any], reply: Reply, usage: dict[str, int]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        for index, chunk in enumerate(self._chunks(body, reply)):
            if reply.disconnect_after is not None and index > reply.disconnect_after:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if reply.first_delay and index == 1:
                time.sleep(reply.first_delay)
            if reply.chunk_delay and index:
                time.sleep(reply.chunk_delay)
            self._write_event(json.dumps(chunk))
        if (body.get("stream_options") or {}).get("include_usage") and not reply.omit_usage:
            final = {
                "id": "chatcmpl-scripted",
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": body.get("model", "scripted"),
                "choices": [],
                "usage": usage,
            }
            self._write_event(json.dumps(final))
        self._write_event("[DONE]")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _write_event(self, data: str) -> None:
        payload = f"data: {data}\n\n".encode()
        self.wfile.write(f"{len(payload):X}\r\n".encode() + payload + b"\r\n")
        self.wfile.flush()

    def _send_json(
        self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()


def _reply_from_json(data: dict[str, Any]) -> Reply:
    calls = tuple(ToolCallReply(**c) for c in data.pop("tool_calls", []))
    return Reply(tool_calls=calls, **data)


def main(argv: list[str]) -> int:
    """Serve the replies of a JSON script file until interrupted."""
    if len(argv) != 1:
        print("usage: scripted_model.py SCRIPT.json", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as handle:
        replies = [_reply_from_json(item) for item in json.load(handle)]
    with ScriptedModel(replies) as server:
        print(f"api_base={server.api_base} model={server.model()}", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
