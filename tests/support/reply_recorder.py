"""A recording proxy on 127.0.0.1 in front of a real OpenAI-compatible model server.

Every POST is forwarded unchanged to the upstream server and its answer passed back unchanged
(streamed SSE too); each exchange is kept as an `Exchange`: a summary of the messages sent, the
raw reply the model wrote (message content and tool calls, joined from the stream's deltas),
its usage and its wall time. The real-model suite and `benchmarks/local_model.py` point the
system under test at `proxy.api_base` and then count calls and tokens, and save the reply shapes
small models really write as fixtures (`save_fixture`).
"""

from __future__ import annotations

import datetime
import json
import re
import threading
import time
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

FENCE = re.compile(r"```")
LABEL_LINE = re.compile(r'"code"\s*:\s*"(?:python|py|```)\s*\\n', re.IGNORECASE)
ACTIONS = ("execute_code", "debug_error", "provide_answer")


@dataclass
class Exchange:
    """One model call seen through the proxy."""

    model: str
    messages: list[dict[str, Any]]
    stream: bool
    tools: list[str]
    response_format: Any
    content: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str | None = None
    status: int = 200
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    def shapes(self) -> list[str]:
        """The reply's notable shapes (what a parser has to cope with)."""
        return reply_shapes(self.content or "", bool(self.tool_calls))


def reply_shapes(content: str, has_tool_calls: bool = False) -> list[str]:
    """Tags for the shapes of a raw reply: fences, a language label inside a JSON code value,
    <think> blocks, comments in JSON, prose around JSON, an action without its field..."""
    shapes: list[str] = []
    if has_tool_calls:
        shapes.append("tool_calls")
    stripped = content.strip()
    if "<think>" in content:
        shapes.append("think")
    if FENCE.search(content):
        shapes.append("fence")
    if LABEL_LINE.search(content):
        shapes.append("label_in_code")
    data = _json_object(stripped)
    if data is None:
        if "{" in stripped and any(action in stripped for action in ACTIONS):
            shapes.append("json_in_prose" if not stripped.startswith("{") else "invalid_json")
        elif stripped and not has_tool_calls and "fence" not in shapes:
            shapes.append("bare_code" if _compiles(stripped) else "prose")
        if re.search(r"^\s*(//|#)", stripped, re.MULTILINE) and stripped.startswith("{"):
            shapes.append("json_comments")
        return shapes
    action = data.get("action")
    if action in ("execute_code", "debug_error") and not str(data.get("code") or "").strip():
        shapes.append(f"{action}_without_code")
    if action == "provide_answer" and not str(data.get("final_answer") or "").strip():
        shapes.append("provide_answer_without_answer")
    if action is not None and action not in ACTIONS:
        shapes.append("unknown_action")
    extra = set(data) - {"thought", "action", "code", "final_answer"}
    if action is not None and extra:
        shapes.append("extra_fields")
    if action == "execute_code" and data.get("final_answer"):
        shapes.append("code_with_final_answer")
    return shapes


def _compiles(text: str) -> bool:
    try:
        compile(text, "<reply>", "exec")
    except (SyntaxError, ValueError):
        return False
    return True


def _json_object(text: str) -> dict[str, Any] | None:
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


class ReplyRecorder:
    """Forward `/…/chat/completions` POSTs to `upstream` (a base URL ending in /v1), recording."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.exchanges: list[Exchange] = []
        self._lock = threading.Lock()
        self._server = _QuietServer(("127.0.0.1", 0), _Handler)
        self._server.recorder = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> ReplyRecorder:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ReplyRecorder:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def mark(self) -> int:
        """The count of exchanges so far (pass it to `since`)."""
        with self._lock:
            return len(self.exchanges)

    def since(self, mark: int) -> list[Exchange]:
        with self._lock:
            return list(self.exchanges[mark:])

    def _add(self, exchange: Exchange) -> None:
        with self._lock:
            self.exchanges.append(exchange)


def save_fixture(exchange: Exchange, folder: Path, name: str, note: str = "") -> Path:
    """Write one exchange as a fixture: the messages sent (each cut to 600 characters), the raw
    reply, its shapes, the model and the date."""
    folder.mkdir(parents=True, exist_ok=True)
    record = asdict(exchange)
    record["messages"] = [{**m, "content": _cut(m.get("content"))} for m in exchange.messages]
    record["shapes"] = exchange.shapes()
    record["date"] = datetime.date.today().isoformat()
    record["note"] = note
    path = folder / f"{name}.json"
    path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    return path


def _cut(content: Any) -> Any:
    if isinstance(content, str) and len(content) > 600:
        return content[:600] + f"… [{len(content) - 600} more characters]"
    return content


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True
    recorder: ReplyRecorder


class _Handler(BaseHTTPRequestHandler):
    server: _QuietServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # silence stderr
        pass

    def do_GET(self) -> None:
        with httpx.Client(timeout=30) as client:
            answer = client.get(self._upstream_url())
        self._send(answer.status_code, answer.content, answer.headers.get("content-type", ""))

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.loads(raw or b"{}")
        exchange = Exchange(
            model=str(body.get("model", "")),
            messages=list(body.get("messages") or []),
            stream=bool(body.get("stream")),
            tools=[t.get("function", {}).get("name", "") for t in body.get("tools") or []],
            response_format=body.get("response_format"),
        )
        began = time.perf_counter()
        self.server.recorder._add(exchange)  # before the client can see its answer
        headers = {"content-type": "application/json"}
        if auth := self.headers.get("Authorization"):
            headers["authorization"] = auth
        with (
            httpx.Client(timeout=httpx.Timeout(600, connect=10)) as client,
            client.stream("POST", self._upstream_url(), content=raw, headers=headers) as answer,
        ):
            exchange.status = answer.status_code
            if exchange.stream and answer.status_code == 200:
                self._relay_stream(answer, exchange)
            else:
                data = answer.read()
                _fold_completion(exchange, data)
                exchange.seconds = time.perf_counter() - began
                self._send(answer.status_code, data, answer.headers.get("content-type", ""))
        exchange.seconds = time.perf_counter() - began

    def _upstream_url(self) -> str:
        path = self.path[3:] if self.path.startswith("/v1") else self.path
        return self.server.recorder.upstream + path

    def _send(self, status: int, data: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type or "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _relay_stream(self, answer: httpx.Response, exchange: Exchange) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            for line in answer.iter_lines():
                if line.startswith("data:") and line[5:].strip() != "[DONE]":
                    _fold_chunk(exchange, json.loads(line[5:]))  # folded before it is relayed
                self.wfile.write(line.encode() + b"\n")
                self.wfile.flush()
        except httpx.TransportError as exc:  # the client sees the same cut as the proxy did
            exchange.finish_reason = f"upstream cut the stream: {exc}"


def _fold_chunk(exchange: Exchange, chunk: dict[str, Any]) -> None:
    if usage := chunk.get("usage"):
        exchange.prompt_tokens = usage.get("prompt_tokens") or 0
        exchange.completion_tokens = usage.get("completion_tokens") or 0
    for choice in chunk.get("choices") or []:
        delta = choice.get("delta") or {}
        if delta.get("content"):
            exchange.content = (exchange.content or "") + delta["content"]
        for call in delta.get("tool_calls") or []:
            index = call.get("index", 0)
            while len(exchange.tool_calls) <= index:
                exchange.tool_calls.append({"name": "", "arguments": ""})
            function = call.get("function") or {}
            exchange.tool_calls[index]["name"] += function.get("name") or ""
            exchange.tool_calls[index]["arguments"] += function.get("arguments") or ""
        if choice.get("finish_reason"):
            exchange.finish_reason = choice["finish_reason"]


def _fold_completion(exchange: Exchange, data: bytes) -> None:
    try:
        body = json.loads(data)
    except ValueError:
        exchange.content = data.decode(errors="replace")
        return
    usage = body.get("usage") or {}
    exchange.prompt_tokens = usage.get("prompt_tokens") or 0
    exchange.completion_tokens = usage.get("completion_tokens") or 0
    for choice in body.get("choices") or []:
        message = choice.get("message") or {}
        exchange.content = message.get("content")
        exchange.finish_reason = choice.get("finish_reason")
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            exchange.tool_calls.append(
                {"name": function.get("name", ""), "arguments": function.get("arguments", "")}
            )
