"""Benchmark: what continuing a conversation costs, against doing the work again.

Run: ``.venv/bin/python benchmarks/conversation.py [--runs 20] [--latency 0.5] [--rounds 3]``.

1. Restoring state. A code session of `--runs` runs (each defines a variable and does a little
   work: ~50 ms of computing) against the scripted model server answering each reply after
   `--latency` seconds (a hosted model's time to a short reply), recorded into SQLite. Then
   `continue_session` on it: the sandbox's state rebuilt by running the 20 successful runs
   again, in a fresh sandbox, timed from the start of the continued session to its
   StateRestored. Baseline: the original session's wall time (its model turns and runs). Aim:
   <= 0.3x. The restore is also shown against the runs alone (their recorded durations).
2. A follow-up turn. The same one-run task as a fresh session (launch to its end: sandbox
   start, model turns, runs, SQLite) and as a follow-up in a conversation that has just
   answered it (message said to TurnEnded). Aim: <= 1.1x.
Medians over `--rounds` rounds; every part is real except the model.
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
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.scripted_model import ScriptedModel, text

from tui_agent.agents.launch import Launch, prepare
from tui_agent.agents.launch.resume import continue_session
from tui_agent.agents.requests import CodeRequest
from tui_agent.agents.step_loop import Conversation, FixedChoices
from tui_agent.config import Settings
from tui_agent.events import Event, ExecutionFinished, StateRestored, TurnEnded
from tui_agent.recorder import SessionRecorder
from tui_agent.session import SessionState
from tui_agent.store import Store

WORK = "v{i} = sum(k * k for k in range(300_000))\nprint('v{i}', v{i} % 97)"
"""One run: a variable of its own and about 50 ms of computing."""
ONE_TASK = "print(sum(range(10)))"


def action(code: str, latency: float) -> object:
    body = {"thought": "Next.", "action": "execute_code", "code": code}
    return text(json.dumps(body), first_delay=latency)


def answer(latency: float) -> object:
    body = {"thought": "Done.", "action": "provide_answer", "final_answer": "done"}
    return text(json.dumps(body), first_delay=latency)


async def record(db: Path, launch: Launch, on_event=None) -> tuple[SessionState, list[Event]]:
    async with await Store.open(db) as store:
        listeners = [on_event] if on_event else []
        if launch.continues:
            recorder = await SessionRecorder.resume(store, launch.session_id, listeners)
            state = await recorder.go_on(launch.events)
        else:
            recorder = SessionRecorder(store, launch.session_id, listeners)
            state = await recorder.run(launch.started, launch.events)
        return state, await store.events(recorder.session_id)


async def restore_round(settings: Settings, server: ScriptedModel, runs: int, latency: float):
    server.push(*(action(WORK.format(i=i), latency) for i in range(runs)), answer(latency))
    request = CodeRequest(task="Define the variables", max_steps=runs + 1)
    began = time.perf_counter()
    state, stored = await record(settings.db, prepare(request, settings))
    original = time.perf_counter() - began
    assert state.status == "completed", state.errors
    run_time = sum(e.duration for e in stored if isinstance(e, ExecutionFinished))

    restored_at: list[float] = []

    def heard(event: Event, _state: SessionState) -> None:
        if isinstance(event, StateRestored):
            restored_at.append(time.perf_counter())

    server.push(action(f"print(v{runs - 1} % 97)", latency), answer(latency))
    began = time.perf_counter()
    launch = continue_session(stored, settings, message="Still there?", choices=FixedChoices())
    went_on, _ = await record(settings.db, launch, heard)
    assert went_on.status == "completed", went_on.errors
    return original, run_time, restored_at[0] - began


async def follow_up_round(settings: Settings, server: ScriptedModel, latency: float):
    server.push(action(ONE_TASK, latency), answer(latency))
    began = time.perf_counter()
    state, _ = await record(settings.db, prepare(CodeRequest(task="Sum to ten"), settings))
    fresh = time.perf_counter() - began
    assert state.status == "completed"

    server.push(action(ONE_TASK, latency), answer(latency), action(ONE_TASK, latency))
    server.push(answer(latency))
    conversation = Conversation()
    marks: list[float] = []

    def heard(event: Event, _state: SessionState) -> None:
        if isinstance(event, TurnEnded):
            marks.append(time.perf_counter())
            if len(marks) == 1:
                conversation.say("Sum to ten again")
            else:
                conversation.end()

    launch = prepare(CodeRequest(task="Sum to ten"), settings, conversation=conversation)
    await record(settings.db, launch, heard)
    return fresh, marks[1] - marks[0]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sandbox", default="auto")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, ScriptedModel() as server:
        settings = Settings(
            model=server.model("gpt-4o-mini"),
            api_base=server.api_base,
            db=Path(folder) / "sessions.db",
            sandbox=args.sandbox,
        )
        restores = [
            await restore_round(settings, server, args.runs, args.latency)
            for _ in range(args.rounds)
        ]
        follow_ups = [
            await follow_up_round(settings, server, args.latency) for _ in range(args.rounds)
        ]
    original = statistics.median(r[0] for r in restores)
    runs = statistics.median(r[1] for r in restores)
    restore = statistics.median(r[2] for r in restores)
    print(f"restoring the state of a {args.runs}-run session (model latency {args.latency:g} s):")
    print(f"  original session        {original:8.2f} s")
    print(f"  its runs alone          {runs:8.2f} s")
    print(f"  restore                 {restore:8.2f} s")
    print(f"  ratio restore/original  {restore / original:8.2f}x (aim <= 0.3x)")
    print(f"  ratio restore/runs      {restore / runs:8.2f}x")
    fresh = statistics.median(f[0] for f in follow_ups)
    turn = statistics.median(f[1] for f in follow_ups)
    print("the same one-run task:")
    print(f"  fresh session           {fresh:8.2f} s")
    print(f"  follow-up turn          {turn:8.2f} s")
    print(f"  ratio follow-up/fresh   {turn / fresh:8.2f}x (aim <= 1.1x)")


if __name__ == "__main__":
    asyncio.run(main())
