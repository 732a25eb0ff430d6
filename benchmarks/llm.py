"""Benchmark: the LLM layer's overhead, as ratios against baselines measured in the same run.

Run: ``.venv/bin/python benchmarks/llm.py [--calls N] [--size BYTES]``.

1. One streamed call through `LLM.stream` (litellm) vs the same SSE stream read with plain
   httpx, both from the scripted model server on loopback with no delay.
2. One `stream_action` turn (incremental field extraction + parse + record) vs `LLM.stream`.
3. `IncrementalFields` per 8-character chunk of a `--size` reply vs litellm's own cost per
   streamed chunk (from 1: LLM.stream minus the httpx read, divided by the chunk count).
Medians of interleaved rounds are printed with their ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.scripted_model import ScriptedModel, text

from tui_agent.llm import LLM, IncrementalFields, stream_action

MESSAGES = [{"role": "user", "content": "Compound interest on 15k at 6%, semi-annual, 6 years?"}]
TURN = json.dumps(
    {
        "thought": "Use A = P(1 + r/n)^(nt) with n = 2 and t = 6. " * 4,
        "action": "execute_code",
        "code": "principal = 15000\nrate = 0.06\nprint(principal * (1 + rate / 2) ** 12)\n" * 3,
    }
)


async def raw_stream(client: httpx.AsyncClient, url: str) -> str:
    body = {
        "model": "bench",
        "messages": MESSAGES,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    parts = []
    async with client.stream("POST", url, json=body) as response:
        async for line in response.aiter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                chunk = json.loads(line[6:])
                if chunk["choices"]:
                    parts.append(chunk["choices"][0]["delta"].get("content") or "")
    return "".join(parts)


async def llm_stream(llm: LLM) -> str:
    stream = llm.stream(MESSAGES, want_json=True)
    parts = [delta async for delta in stream]
    return "".join(parts)


async def action_turn(llm: LLM) -> str:
    async for item in stream_action(llm, MESSAGES):
        outcome = item
    return outcome.action.code


async def timed(work: Callable[[], Awaitable[object]]) -> float:
    start = time.perf_counter()
    await work()
    return time.perf_counter() - start


def line(name: str, seconds: list[float], baseline: list[float] | None = None) -> str:
    median = statistics.median(seconds)
    text_ = f"{name:<44} median {median * 1000:8.2f} ms"
    if baseline:
        text_ += f"   ratio {median / statistics.median(baseline):6.2f}x"
    return text_


async def bench_calls(calls: int) -> float:
    """Print part 1 and 2; return litellm's seconds per streamed chunk."""
    with ScriptedModel() as server:
        server.push(*[text(TURN, chunk_size=8)] * (3 * calls + 6))
        llm = LLM(server.model("bench"), api_base=server.api_base, api_key="bench")
        url = f"{server.api_base}/chat/completions"
        async with httpx.AsyncClient() as client:
            for _ in range(2):  # warm up: imports, connection pools
                await raw_stream(client, url)
                await llm_stream(llm)
            raw, through_llm, turn = [], [], []
            for _ in range(calls):
                raw.append(await timed(lambda: raw_stream(client, url)))
                through_llm.append(await timed(lambda: llm_stream(llm)))
                turn.append(await timed(lambda: action_turn(llm)))
    chunks = len(TURN) // 8 + 1
    print(f"one streamed reply of {len(TURN)} chars in {chunks} chunks, {calls} rounds")
    print(line("httpx SSE read (baseline)", raw))
    print(line("LLM.stream through litellm", through_llm, raw))
    print(line("stream_action turn", turn, through_llm) + "  (vs LLM.stream)")
    return (statistics.median(through_llm) - statistics.median(raw)) / chunks


def bench_incremental(size: int, litellm_per_chunk: float, rounds: int = 5) -> None:
    reply = json.dumps(
        {
            "thought": "x" * (size // 2),
            "action": "execute_code",
            "code": "print('é')\n" * (size // 24),
        }
    )
    chunks = [reply[i : i + 8] for i in range(0, len(reply), 8)]
    fed = []
    for _ in range(rounds):
        start = time.perf_counter()
        fields = IncrementalFields()
        for chunk in chunks:
            fields.feed(chunk)
        fed.append((time.perf_counter() - start) / len(chunks))
        assert fields.values == json.loads(reply)
    per_chunk = statistics.median(fed)
    print(f"incremental extraction of a {len(reply)}-char reply in {len(chunks)} 8-char chunks")
    print(f"{'litellm per streamed chunk (baseline)':<44} median {litellm_per_chunk * 1e6:8.1f} us")
    print(
        f"{'IncrementalFields.feed per chunk':<44} median {per_chunk * 1e6:8.1f} us"
        f"   ratio {per_chunk / litellm_per_chunk:6.3f}x"
        f"   ({len(reply) / per_chunk / len(chunks) / 1e6:.1f} MB/s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--size", type=int, default=200_000)
    args = parser.parse_args()
    litellm_per_chunk = asyncio.run(bench_calls(args.calls))
    bench_incremental(args.size, litellm_per_chunk)


if __name__ == "__main__":
    main()
