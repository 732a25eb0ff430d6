"""Benchmark: the CodeAct agent's own cost per step, and how fast a streamed token shows.

Run: ``.venv/bin/python benchmarks/codeact.py [--steps N] [--rounds R] [--sandbox NAME]``.

1. Framework overhead per step. A session of `--steps` steps against the scripted model server
   (no delay) whose every action runs the trivial snippet ``1 + 1``, recorded by a SessionRecorder
   into a real SQLite file. One step's wall time (from one ExecutionFinished to the next: the
   model turn, parsing, events, SQLite appends, the run) is compared with the sum of its two
   unavoidable parts measured in the same rounds: a sandbox round trip (`execute` of ``1 + 1``
   on the same, started, sandbox) and a model server round trip through litellm
   (`litellm.acompletion` streaming the same reply, read to the end, sent with the history of
   the session's middle step, as the median step carries). Aim: <= 1.2x.
2. First token to pane. The app runs a code session headless; the first thought token is
   timed when the agent yields it, when the SessionRecorder's listener has it (folded and stored
   in SQLite), and when the step card's Markdown in the pane holds it (polled every 0.5 ms;
   the terminal is painted on the next refresh after that). The baseline is the listener time:
   recording costs the same with or without a screen.
Medians over rounds are printed with their ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.scripted_model import ScriptedModel, text

from tui_agent.agents.codeact import DEFAULT_TIMEOUT, run_codeact
from tui_agent.agents.codeact_prompts import (
    assistant_message,
    result_message,
    system_message,
    task_message,
)
from tui_agent.agents.step_loop import StepLimits
from tui_agent.events import Event, ExecutionFinished, SessionStarted, ThoughtDelta
from tui_agent.llm import LLM, Message
from tui_agent.llm.runtime import litellm
from tui_agent.recorder import SessionRecorder
from tui_agent.sandbox.base import Sandbox
from tui_agent.sandbox.choose import AUTO_ORDER, backend_status, open_sandbox
from tui_agent.sandbox.wire import ExecuteRequest, ExecuteResult
from tui_agent.store import Store

TASK = "Add one and one, again and again."
SNIPPET = "1 + 1"


def step_reply(index: int) -> str:
    return json.dumps(
        {"thought": f"Add them, take {index}.", "action": "execute_code", "code": SNIPPET}
    )


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def line(name: str, values: list[float], baseline: list[float] | None = None) -> str:
    text_ = f"{name:<52} median {median_ms(values):8.2f} ms"
    if baseline:
        text_ += f"   ratio {statistics.median(values) / statistics.median(baseline):5.2f}x"
    return text_


class Workspace:
    def __init__(self) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="bench-codeact-")
        self.path = Path(self._dir.name)

    def cleanup(self) -> None:
        self._dir.cleanup()


async def sandbox_round_trips(sandbox: Sandbox, count: int) -> list[float]:
    times = []
    for _ in range(count):
        began = time.perf_counter()
        result = await sandbox.execute(ExecuteRequest(code=SNIPPET))
        times.append(time.perf_counter() - began)
        assert result.result == 2
    return times


def conversation(turns: int) -> list[Message]:
    """The messages the agent sends after `turns` steps of ``1 + 1`` (what a step's call
    carries in the middle of a session: the openai client's cost grows with it)."""
    messages = [system_message(network=False), task_message(TASK)]
    for index in range(turns):
        messages.append(assistant_message(step_reply(index)))
        messages.append(result_message(ExecuteResult(success=True, result=2), "1 + 1"))
    return messages


async def model_round_trips(server: ScriptedModel, count: int, turns: int) -> list[float]:
    """Raw litellm streaming calls carrying `turns` steps of history, read to the end."""
    lt = litellm()
    messages = conversation(turns)
    times = []
    for index in range(count):
        server.push(text(step_reply(index)))
        began = time.perf_counter()
        response = await lt.acompletion(
            model=server.model("bench"),
            messages=messages,
            api_base=server.api_base,
            api_key="bench",
            stream=True,
            stream_options={"include_usage": True},
            response_format={"type": "json_object"},
            timeout=120.0,
            max_retries=0,
        )
        async for _chunk in response:
            pass
        await response.aclose()
        times.append(time.perf_counter() - began)
    return times


async def session_steps(
    server: ScriptedModel, sandbox: Sandbox, db: Path, steps: int
) -> list[float]:
    """Seconds between consecutive ExecutionFinished events of one recorded session."""
    server.push(*[text(step_reply(i)) for i in range(steps)])
    llm = LLM(server.model("bench"), api_base=server.api_base, api_key="bench")
    finished: list[float] = []

    def listen(event: Event, _state: Any) -> None:
        if isinstance(event, ExecutionFinished):
            finished.append(time.perf_counter())

    agent = run_codeact(
        TASK,
        llm=llm,
        sandbox=_Kept(sandbox),
        limits=StepLimits(max_steps=steps, timeout=DEFAULT_TIMEOUT),
    )
    async with await Store.open(db) as store:
        state = await SessionRecorder(store, listeners=[listen]).run(
            SessionStarted(kind="codeact", title=TASK), agent
        )
    assert state.stopped_reason == "max_steps", state.errors
    return [b - a for a, b in itertools.pairwise(finished)]


class _Kept:
    """The benchmark's started sandbox, shared by rounds: start and close do nothing."""

    def __init__(self, sandbox: Sandbox) -> None:
        self._sandbox = sandbox
        self.name = sandbox.name
        self.isolated = sandbox.isolated
        self.execute = sandbox.execute

    async def start(self) -> None:
        pass

    async def reset(self) -> None:
        await self._sandbox.reset()

    async def close(self) -> None:
        pass


async def bench_steps(steps: int, rounds: int, backend: str) -> None:
    workspace = Workspace()
    try:
        async with open_sandbox(backend, workspace=workspace.path) as sandbox:
            with ScriptedModel() as server:
                await sandbox_round_trips(sandbox, 5)  # warm up: imports, pools, caches
                await model_round_trips(server, 3, steps // 2)
                await session_steps(server, sandbox, workspace.path / "warm.db", 3)
                sandbox_times: list[float] = []
                model_times: list[float] = []
                step_times: list[float] = []
                for round_ in range(rounds):
                    sandbox_times += await sandbox_round_trips(sandbox, steps)
                    model_times += await model_round_trips(server, steps, steps // 2)
                    db = workspace.path / f"round{round_}.db"
                    step_times += await session_steps(server, sandbox, db, steps)
    finally:
        workspace.cleanup()
    both = [statistics.median(sandbox_times) + statistics.median(model_times)]
    print(f"framework overhead per step: {rounds} rounds of {steps} steps on {backend}")
    print(line("sandbox round trip (execute 1 + 1)", sandbox_times))
    print(line("model round trip (litellm.acompletion, streamed)", model_times))
    print(line("sum of the two (baseline)", both))
    print(line("one agent step, recorded in SQLite", step_times, both))


@dataclass
class TokenTimes:
    """When each streamed thought token was yielded by the agent, seen by the recorder's
    listener (folded and stored), and held by the pane's Markdown; keyed by the thought so far."""

    agent: dict[str, float] = field(default_factory=dict)
    listener: dict[str, float] = field(default_factory=dict)
    pane: dict[str, float] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)

    def gaps(self, start: dict[str, float], end: dict[str, float]) -> tuple[float, float]:
        """(first token, median of the later ones) seconds from `start` to `end`."""
        first, *later = [end[key] - start[key] for key in self.order]
        return first, statistics.median(later)


async def token_times(backend: str) -> TokenTimes:
    """One code session in the app (headless) whose thought streams in ten-character chunks."""
    from textual.widgets import Markdown

    from tui_agent.tui.app import TuiAgentApp
    from tui_agent.tui.screens.session import SessionScreen

    workspace = Workspace()
    times = TokenTimes()
    thought = "Tokens arrive one chunk at a time, and each one should show at once in the pane."
    answer = {"thought": thought, "action": "provide_answer", "final_answer": "2"}
    reply = " " * 200 + json.dumps(answer)  # blank chunks first: the screen is up by the thought
    try:
        with ScriptedModel([text(reply, chunk_size=10, chunk_delay=0.03)]) as server:
            llm = LLM(server.model("bench"), api_base=server.api_base, api_key="bench")
            sandbox = open_sandbox(backend, workspace=workspace.path)
            so_far = {"agent": "", "listener": ""}

            def mark(where: str, marks: dict[str, float], event: Event) -> None:
                if isinstance(event, ThoughtDelta):
                    so_far[where] += event.text
                    marks[so_far[where]] = time.perf_counter()

            async def timed() -> AsyncIterator[Event]:
                async for event in run_codeact(TASK, llm=llm, sandbox=sandbox):
                    mark("agent", times.agent, event)
                    yield event

            app = TuiAgentApp(workspace.path / "pane.db")
            app.start_session(SessionStarted(kind="codeact", title=TASK), timed())
            async with app.run_test(size=(100, 30)) as pilot:
                while not isinstance(app.screen, SessionScreen):
                    await pilot.pause(0.01)
                screen = app.screen
                assert screen.live is not None
                screen.live.recorder.listeners.insert(
                    0, lambda e, _s: mark("listener", times.listener, e)
                )
                while screen.state.status == "running":
                    thoughts = list(screen.query("StepCard > .thought").results(Markdown))
                    shown = thoughts[0].source if thoughts else ""
                    now = time.perf_counter()
                    for key in times.agent:
                        if key not in times.pane and shown.startswith(key):
                            times.pane[key] = now
                    await asyncio.sleep(0.0005)
    finally:
        workspace.cleanup()
    times.order = [key for key in times.agent if key in times.listener and key in times.pane]
    if len(times.order) < 3 or "".join(times.order[-1:]) != thought:
        raise RuntimeError("not every thought token was timed (the listener came too late?)")
    return times


async def bench_pane(rounds: int, backend: str) -> None:
    await token_times(backend)  # warm up
    runs = [await token_times(backend) for _ in range(rounds)]
    print(
        f"streamed thought tokens: {rounds} sessions in the app (headless), "
        f"{len(runs[0].order)} tokens each; first token, then the median of the later ones"
    )
    legs = {
        "agent -> recorder listener (folded, in SQLite)": ("agent", "listener"),
        "agent -> step card Markdown in the pane": ("agent", "pane"),
        "recorder listener -> pane": ("listener", "pane"),
    }
    baseline: tuple[list[float], list[float]] | None = None
    for name, (start, end) in legs.items():
        gaps = [run.gaps(getattr(run, start), getattr(run, end)) for run in runs]
        first, later = [gap[0] for gap in gaps], [gap[1] for gap in gaps]
        label = " (baseline)" if baseline is None else ""
        print(line(f"{name}, first{label}", first, baseline[0] if baseline else None))
        print(line(f"{name}, later{label}", later, baseline[1] if baseline else None))
        baseline = baseline or (first, later)


def resolve(name: str) -> str:
    """The backend `auto` stands for here (docker, else bubblewrap)."""
    if name != "auto":
        return name
    for candidate in AUTO_ORDER:
        if backend_status(candidate).ok:
            return candidate
    raise SystemExit("no isolated sandbox works here; pass --sandbox local to measure anyway")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sandbox", default="auto")
    args = parser.parse_args()
    backend = resolve(args.sandbox)

    async def both() -> None:
        await bench_steps(args.steps, args.rounds, backend)
        await bench_pane(args.rounds, backend)

    asyncio.run(both())


if __name__ == "__main__":
    main()
