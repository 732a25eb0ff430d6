"""Benchmark: tool code mode against one JSON tool call per model turn, and its own costs.

Run: ``.venv/bin/python benchmarks/toolcode.py [--calls N] [--rounds R] [--latency S]
[--sandbox NAME]``.

1. N chained tool calls (the shop server's next_number, each call taking the last one's
   output). Code mode: the tool code agent with the scripted model server, which answers with
   one write_code whose program makes the N calls, then with the answer: 2 model turns. The
   baseline, measured in the same run: the usual agent loop, the model calling one MCP tool
   per turn natively (the same server, through the same MCP client), N turns and the answer.
   Compared: model turns, tokens (a token per 4 characters of every request's messages and
   tool definitions, as providers count both, plus the replies' completion tokens), and wall
   time of the model loop (from the first model call to the answer), with the model
   answering at once and with `--latency` seconds per reply (what a hosted model takes).
   Setup (servers started, packages, sandbox) is shown apart: it is paid once per session.
2. Generation per server: writing the shop server's package (9 tools) into an empty folder,
   and the check that finds it unchanged (spec: about 100 ms).
3. One execution: a one-call program through write_code's path (check, fresh folder, run in
   the sandbox with its call answered on the host, folder removed) (spec: 200-500 ms).
Medians over `--rounds`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from support.scripted_model import (  # noqa: E402
    ScriptedModel,
    ToolCallReply,
    _Handler,
    text,
    tool_calls,
)

from tui_agent.agents.toolcode import run_toolcode  # noqa: E402
from tui_agent.agents.toolcode.program import Program  # noqa: E402
from tui_agent.events import Event, FinalAnswer, LLMCall, PhaseFinished  # noqa: E402
from tui_agent.llm import LLM, Message  # noqa: E402
from tui_agent.sandbox.choose import AUTO_ORDER, backend_status, open_sandbox  # noqa: E402
from tui_agent.sandbox.folders.hosted import hosted_of  # noqa: E402
from tui_agent.sandbox.pool import close_shared_pool  # noqa: E402
from tui_agent.tools import (  # noqa: E402
    ToolServers,
    Toolset,
    generate_packages,
    load_mcp_config,
)

SHOP = ROOT / "tests" / "toolcode" / "shop_server.py"
MODEL = "openai/gpt-4o-mini"
TASK = "Start at 0 and apply next_number {n} times, each time to the last result."


class Latent(ScriptedModel):
    """The scripted model, taking `latency` seconds before each reply."""

    def __init__(self, replies: list[Any], latency: float) -> None:
        super().__init__(replies)
        latency_s = latency

        class Handler(_Handler):
            def do_POST(self) -> None:
                time.sleep(latency_s)
                super().do_POST()

        self.handler_class = Handler


@dataclass
class Run:
    """One loop: model turns, tokens, seconds of the loop and of the setup before it."""

    turns: int
    tokens: int
    loop: float
    setup: float
    answer: str


def tokens_of(server: ScriptedModel, calls: list[LLMCall]) -> int:
    """Prompt tokens of every request sent (messages and tool definitions, 4 characters a
    token) plus the completion tokens of the replies."""
    sent = sum(
        len(json.dumps(r.body.get("messages", [])) + json.dumps(r.body.get("tools") or [])) // 4
        for r in server.requests
    )
    return sent + sum(call.completion_tokens for call in calls)


def chain_program(n: int) -> str:
    return (
        "from shop_tools import next_number\n"
        "value = 0\n"
        f"for _ in range({n}):\n"
        "    value = int(next_number(value=value))\n"
        "print('value', value)\n"
    )


async def code_mode(n: int, latency: float, sandbox_name: str, folder: Path) -> Run:
    replies = [
        tool_calls(ToolCallReply("write_code", {"code": chain_program(n)})),
        text(f"The value is {n}."),
    ]
    config = load_mcp_config(_config(folder))
    with Latent(replies, latency) as server:
        llm = LLM(server.model(MODEL.split("/")[1]), api_base=server.api_base)
        workspace = folder / "workspace"
        sandbox = open_sandbox(sandbox_name, workspace=workspace)
        toolset = Toolset.prepare(config, workspace)
        began = time.perf_counter()
        first_call = None
        calls: list[LLMCall] = []
        answer = ""
        agent = run_toolcode(
            TASK.format(n=n),
            llm=llm,
            sandbox=sandbox,
            toolset=toolset,
        )
        async for event in agent:
            if isinstance(event, PhaseFinished) and event.phase == "generate":
                first_call = time.perf_counter()
            if isinstance(event, LLMCall):
                calls.append(event)
            if isinstance(event, FinalAnswer):
                answer = event.text
                ended = time.perf_counter()
        tokens = tokens_of(server, calls)
    assert first_call is not None and answer, "the code mode session did not answer"
    return Run(len(calls), tokens, ended - first_call, first_call - began, answer)


async def one_call_per_turn(n: int, latency: float, folder: Path) -> Run:
    """The usual loop: the server's tools offered natively, one call per model turn."""
    replies = [tool_calls(ToolCallReply("next_number", {"value": value})) for value in range(n)] + [
        text(f"The value is {n}.")
    ]
    config = load_mcp_config(_config(folder))
    with Latent(replies, latency) as server:
        llm = LLM(server.model(MODEL.split("/")[1]), api_base=server.api_base)
        began = time.perf_counter()
        async with ToolServers(config) as servers:
            [shop] = servers.listings
            specs = [
                {
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.input_schema,
                    },
                }
                for tool in shop.tools
            ]
            messages: list[Message] = [
                {"role": "system", "content": "Use the tools to do the task."},
                {"role": "user", "content": TASK.format(n=n)},
            ]
            first_call = time.perf_counter()
            calls: list[LLMCall] = []
            while True:
                reply = await llm.complete(messages, tools=specs)
                calls.append(reply.call)
                if not reply.tool_calls:
                    ended = time.perf_counter()
                    break
                messages.append(
                    {
                        "role": "assistant",
                        "content": reply.text or None,
                        "tool_calls": [
                            {
                                "id": c.id,
                                "type": "function",
                                "function": {"name": c.name, "arguments": c.arguments},
                            }
                            for c in reply.tool_calls
                        ],
                    }
                )
                for call in reply.tool_calls:
                    output = await servers.call("shop", call.name, json.loads(call.arguments), 20)
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": output})
        tokens = tokens_of(server, calls)
    return Run(len(calls), tokens, ended - first_call, first_call - began, reply.text)


def _config(folder: Path) -> Path:
    path = folder / "servers.json"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        server = {"command": sys.executable, "args": [str(SHOP)]}
        path.write_text(json.dumps({"mcpServers": {"shop": server}}))
    return path


async def generation(rounds: int, folder: Path) -> tuple[list[float], list[float], int]:
    config = load_mcp_config(_config(folder))
    async with ToolServers(config) as servers:
        [shop] = servers.listings
    written, unchanged = [], []
    for index in range(rounds):
        out = folder / f"gen{index}"
        began = time.perf_counter()
        [package] = generate_packages([shop], out)
        written.append(time.perf_counter() - began)
        assert package.written
        began = time.perf_counter()
        [package] = generate_packages([shop], out)
        unchanged.append(time.perf_counter() - began)
        assert not package.written
    return written, unchanged, len(shop.tools)


async def executions(rounds: int, sandbox_name: str, folder: Path) -> list[float]:
    config = load_mcp_config(_config(folder))
    workspace = folder / "exec-workspace"
    sandbox = open_sandbox(sandbox_name, workspace=workspace)
    toolset = Toolset.prepare(config, workspace)
    timings = []
    hosted = hosted_of(sandbox).session()
    async with sandbox:
        await toolset.connect()
        await toolset.generate(hosted.host / "packages")
        ready = asyncio.get_running_loop().create_future()
        ready.set_result(None)
        program = Program(
            sandbox,
            toolset.router(),
            hosted=hosted,
            packages=hosted.host / "packages",
            timeout=30,
        )
        code = "from shop_tools import next_number\nprint(next_number(value=1))\n"
        try:
            for _ in range(rounds + 1):  # the first warms the recorder's imports
                began = time.perf_counter()
                events: list[Event | str] = [item async for item in program.run(1, code, [], ready)]
                timings.append(time.perf_counter() - began)
                assert str(events[-1]).endswith("\n2"), events[-1]
        finally:
            await toolset.close()
            hosted.remove()
    return timings[1:]


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:9.1f} ms"


def ratio(value: float, baseline: float) -> str:
    return f"{value / baseline:6.2f}x" if baseline else "   n/a"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per model reply")
    parser.add_argument("--sandbox", default=None)
    args = parser.parse_args()
    sandbox = args.sandbox or next(n for n in AUTO_ORDER if backend_status(n).ok)
    print(f"sandbox {sandbox}, {args.calls} chained calls, {args.rounds} rounds\n")
    with tempfile.TemporaryDirectory(prefix="bench-toolcode-") as temporary:
        try:
            await report(args, sandbox, Path(temporary))
        finally:
            close_shared_pool()  # its warm containers hold the workspaces' quota mounts


async def report(args: argparse.Namespace, sandbox: str, folder: Path) -> None:
    n = args.calls
    for latency in (0.0, args.latency):
        code: list[Run] = []
        json_calls: list[Run] = []
        for _ in range(args.rounds):  # one workspace: its sandbox starts warm, as for a user
            code.append(await code_mode(n, latency, sandbox, folder / "code"))
            json_calls.append(await one_call_per_turn(n, latency, folder))
        assert code[0].answer == json_calls[0].answer == f"The value is {n}."
        print(f"model answering after {latency:g} s")
        print(f"  {'':28}{'code mode':>14}{'one call a turn':>18}{'ratio':>9}")
        for name, pick, unit in (
            ("model turns", lambda r: r.turns, ""),
            ("tokens (prompt+completion)", lambda r: r.tokens, ""),
            ("wall time of the loop", lambda r: r.loop * 1000, " ms"),
        ):
            mine = statistics.median(pick(r) for r in code)
            theirs = statistics.median(pick(r) for r in json_calls)
            width = 14 - len(unit)
            print(
                f"  {name:28}{mine:{width}.0f}{unit}{theirs:{18 - len(unit)}.0f}{unit}"
                f"{ratio(mine, theirs):>9}"
            )
        c_setup = statistics.median(r.setup for r in code) * 1000
        j_setup = statistics.median(r.setup for r in json_calls) * 1000
        print(
            f"  {'setup, once per session':28}{c_setup:11.0f} ms{j_setup:15.0f} ms"
            "   (servers started; code mode also: packages, sandbox)\n"
        )
    written, unchanged, tools = await generation(args.rounds, folder)
    print(f"generation of one server's package ({tools} tools)")
    print(f"  written into an empty folder {ms(written)}")
    print(f"  found unchanged               {ms(unchanged)}   (spec: about 100 ms)\n")
    runs = await executions(args.rounds, sandbox, folder)
    print(f"one execution (a one-call program, {sandbox})")
    print(f"  check, folder, run, cleanup   {ms(runs)}   (spec: 200-500 ms)")


if __name__ == "__main__":
    asyncio.run(main())
