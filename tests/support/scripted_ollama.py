"""The scripted model speaking Ollama's own API on 127.0.0.1: `/api/chat` (litellm's
``ollama_chat/``) and `/api/generate` (``ollama/``), streamed as newline-delimited JSON.

It plays the same `Reply` scripts as `ScriptedModel` and records each request (Ollama's
`options` — num_ctx, temperature, num_predict, top_p — are in `request.body["options"]`).
`/api/show` answers 404, as for a model the server does not hold, so litellm asks no more.

    with ScriptedOllama([text("hi")]) as server:
        LLM(server.model(), api_base=server.api_base)
"""

from __future__ import annotations

import json
from typing import Any

from support.scripted_model import RecordedRequest, Reply, ScriptedModel, _Handler

CHAT, GENERATE = "/api/chat", "/api/generate"


class _OllamaHandler(_Handler):
    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        path = self.path.split("?")[0]
        if path not in (CHAT, GENERATE):
            self._send_json(404, {"error": f"no route {self.path}"})
            return
        body = json.loads(raw or b"{}")
        headers = {name.lower(): value for name, value in self.headers.items()}
        reply = self.scripted._take(RecordedRequest(self.path, headers, body))
        if reply is None:
            self._send_json(500, {"error": "scripted ollama: script exhausted"})
            return
        if reply.status != 200:
            self._send_json(reply.status, {"error": reply.error_message})
            return
        lines = list(self._lines(path, body, reply))
        if not body.get("stream", False):
            self._send_json(200, lines[-1] if len(lines) == 1 else _merged(path, lines))
            return
        data = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    @staticmethod
    def _lines(path: str, body: dict[str, Any], reply: Reply) -> list[dict[str, Any]]:
        model = body.get("model", "scripted")
        content = reply.content or ""
        size = max(1, reply.chunk_size)
        pieces = [content[i : i + size] for i in range(0, len(content), size)]
        prompt = json.dumps(body.get("messages") or body.get("prompt") or "")
        counts = {
            "prompt_eval_count": max(1, len(prompt) // 4),
            "eval_count": max(1, len(content) // 4),
        }
        if path == GENERATE:
            lines = [{"model": model, "response": piece, "done": False} for piece in pieces]
            last = {"model": model, "response": "", "done": True, "done_reason": "stop"}
            return [*lines, {**last, **counts}]
        lines = [
            {"model": model, "message": {"role": "assistant", "content": p}, "done": False}
            for p in pieces
        ]
        message: dict[str, Any] = {"role": "assistant", "content": ""}
        if reply.tool_calls:
            message["tool_calls"] = [
                {"function": {"name": call.name, "arguments": json.loads(call.arguments_text())}}
                for call in reply.tool_calls
            ]
        last = {"model": model, "message": message, "done": True, "done_reason": "stop"}
        return [*lines, {**last, **counts}]


def _merged(path: str, lines: list[dict[str, Any]]) -> dict[str, Any]:
    """One non-streamed answer from the streamed lines."""
    last = dict(lines[-1])
    if path == GENERATE:
        last["response"] = "".join(line["response"] for line in lines)
    else:
        text = "".join(line["message"]["content"] for line in lines)
        last["message"] = {**last["message"], "content": text}
    return last


class ScriptedOllama(ScriptedModel):
    """A `ScriptedModel` reached as ``ollama_chat/NAME`` (or ``ollama/NAME``) at `api_base`."""

    handler_class = _OllamaHandler

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @staticmethod
    def model(name: str = "scripted", *, route: str = "ollama_chat") -> str:
        return f"{route}/{name}"
