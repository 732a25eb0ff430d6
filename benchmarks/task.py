"""Benchmark: the task executor per task, and what its cache saves.

Run: ``.venv/bin/python benchmarks/task.py [--sandbox NAME] [--tokens-per-second T]
[--first-token S]``.

A small task set (a simple task, a two-stage PDF task, a three-attempt recovery, a list
transformation) runs through the real executor, SessionRecorder, SQLite store and cache, in a
real sandbox, against the scripted model server on loopback. The server answers each call
after `--first-token` seconds (default 0.5, a hosted model's usual time to first token) and
streams at `--tokens-per-second` (default 100, about what gpt-4o-mini streams; 4 characters a
token), so that a model's time is in the figures: `--first-token 0 --tokens-per-second 0`
measures the framework alone. For each task it
prints attempts, model calls, tokens and seconds of the first run, then of a rerun on a new
context of the same shape (answered from the cache), and the rerun's time as a ratio of the
first (aim: <= 0.1x, 0 tokens). One warm-up task runs before the set, so that the first case
does not alone carry the sandbox pool's cold start. Last, the semantic cache's precision and
recall on the labelled paraphrases of tests/unit/task_paraphrases.py.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "agents"))
sys.path.insert(0, str(ROOT / "tests" / "unit"))
from support.scripted_model import Reply, ScriptedModel, text  # noqa: E402
from task_paraphrases import PAIRS  # noqa: E402
from task_support import pdf_with_text  # noqa: E402

from tui_agent.agents.launch import prepare  # noqa: E402
from tui_agent.agents.requests import TaskRequest  # noqa: E402
from tui_agent.agents.task.similarity import best_match  # noqa: E402
from tui_agent.config import Settings  # noqa: E402
from tui_agent.recorder import SessionRecorder, new_session_id  # noqa: E402
from tui_agent.sandbox.pool import close_shared_pool  # noqa: E402
from tui_agent.store import Store  # noqa: E402
from tui_agent.store.task_cache import TaskCache  # noqa: E402

MODEL = "gpt-4o-mini"
CHUNK = 8


def block(code: str, stage: str = "TASK") -> str:
    return f"```python\n# STAGE: {stage}\n{code.strip()}\n```"


def verdict(reason: str) -> str:
    return json.dumps({"valid": True, "reason": reason})


def pdf_context(total: str) -> dict[str, Any]:
    pdf = pdf_with_text(["ACME invoice", f"Total: ${total}"])
    return {"pdf_data_b64": base64.b64encode(pdf).decode()}


@dataclass(frozen=True)
class Case:
    """A task, its model replies, and two contexts of the same shape."""

    name: str
    task: str
    replies: list[str]
    first: dict[str, Any]
    second: dict[str, Any]


CASES = [
    Case(
        "simple",
        "Calculate discount (10% if total > 1000)",
        [
            block(
                "total = context['total']\n"
                "context['discount'] = total * 0.10 if total > 1000 else 0.0\n"
                "context['final_total'] = total - context['discount']"
            ),
            verdict("10% of the total"),
        ],
        {"total": 1500},
        {"total": 900},
    ),
    Case(
        "two-stage pdf",
        "Extract the invoice total from the PDF",
        [
            block(
                "import base64, fitz\n"
                "data = base64.b64decode(context['pdf_data_b64'])\n"
                "doc = fitz.open(stream=data, filetype='pdf')\n"
                "result = {'pages': len(doc), 'has_text': bool(doc[0].get_text().strip())}",
                "ANALYSIS",
            ),
            block(
                "import base64, fitz, re\n"
                "data = base64.b64decode(context['pdf_data_b64'])\n"
                "doc = fitz.open(stream=data, filetype='pdf')\n"
                "text = ''.join(page.get_text() for page in doc)\n"
                "match = re.search(r'Total[:\\s]+\\$?([\\d,]+\\.?\\d*)', text)\n"
                "context['total'] = match.group(1) if match else None"
            ),
            verdict("the total was read from the PDF"),
        ],
        pdf_context("1,234.56"),
        pdf_context("99.10"),
    ),
    Case(
        "3-attempt recovery",
        "Prepare the email notification",
        [
            block("send_email(email_user, password)"),
            block("email_user = context.get('user')\ncontext['email_to'] = email_user"),
            json.dumps({"valid": False, "reason": "email_to is None"}),
            block("context['email_to'] = context['email_user']\ncontext['ready'] = True"),
            verdict("the address is set"),
        ],
        {"email_user": "a@example.com", "email_password": "x"},
        {"email_user": "b@example.com", "email_password": "y"},
    ),
    Case(
        "list transform",
        "Sort the orders by amount, highest first, and keep the ids",
        [
            block(
                "orders = sorted(context['orders'], key=lambda o: o['amount'], reverse=True)\n"
                "context['order_ids'] = [o['id'] for o in orders]"
            ),
            verdict("ids in descending amount order"),
        ],
        {"orders": [{"id": "a", "amount": 3.0}, {"id": "b", "amount": 9.5}]},
        {"orders": [{"id": "c", "amount": 1.0}, {"id": "d", "amount": 2.0}]},
    ),
]


@dataclass(frozen=True)
class Run:
    seconds: float
    attempts: int
    calls: int
    tokens: int
    cache_hit: bool
    status: str


async def run_task(settings: Settings, case: Case, context: dict[str, Any]) -> Run:
    session_id = new_session_id()
    launch = prepare(
        TaskRequest(task=case.task, context=context),
        settings,
        session_id=session_id,
        cache=TaskCache(settings.db),
    )
    session = launch.task
    assert session is not None
    began = time.perf_counter()
    async with await Store.open(settings.db) as store:
        state = await SessionRecorder(store, session_id).run(launch.started, launch.events)
    seconds = time.perf_counter() - began
    metadata = session.context["_ai_metadata"]
    return Run(
        seconds,
        metadata["attempts"],
        metadata["model_calls"],
        state.prompt_tokens + state.completion_tokens,
        metadata["cache_hit"],
        state.status,
    )


@dataclass(frozen=True)
class Pace:
    """How fast the scripted model answers."""

    first_token: float
    tokens_per_second: float

    def replies(self, replies: list[str]) -> list[Reply]:
        rate = self.tokens_per_second
        delay = CHUNK / 4 / rate if rate else 0.0
        return [
            text(reply, chunk_size=CHUNK, chunk_delay=delay, first_delay=self.first_token)
            for reply in replies
        ]


async def measure(sandbox: str, pace: Pace) -> None:
    print(
        f"task executor, sandbox {sandbox}; the model answers after {pace.first_token:g} s and "
        f"streams {pace.tokens_per_second:g} tokens/s"
    )
    header = f"{'task':<20}{'run':<8}{'status':<11}{'attempts':>9}{'calls':>7}{'tokens':>8}{'s':>8}"
    print(header)
    firsts, reruns = [], []
    with tempfile.TemporaryDirectory() as folder, ScriptedModel() as server:
        settings = Settings(
            model=server.model(MODEL),
            api_base=server.api_base,
            db=Path(folder) / "bench.db",
            sandbox=sandbox,  # type: ignore[arg-type]
            workspace=Path(folder) / "workspace",
        )
        warm_up = Case("warm-up", "Count the keys", [block("context['k'] = len(context)")], {}, {})
        server.push(*Pace(0, 0).replies([*warm_up.replies, verdict("ok")]))
        await run_task(settings, warm_up, {"a": 1})
        for case in CASES:
            server.push(*pace.replies(case.replies))
            first = await run_task(settings, case, case.first)
            asked = len(server.requests)
            again = await run_task(settings, case, case.second)
            assert len(server.requests) == asked and again.cache_hit, "the rerun asked the model"
            for label, run in (("first", first), ("cached", again)):
                print(
                    f"{case.name:<20}{label:<8}{run.status:<11}{run.attempts:>9}{run.calls:>7}"
                    f"{run.tokens:>8}{run.seconds:>8.2f}"
                )
            print(
                f"{'':<20}ratio cached/first: {again.seconds / first.seconds:.2f}x time, "
                f"{again.tokens} tokens"
            )
            firsts.append(first.seconds)
            reruns.append(again.seconds)
        close_shared_pool()  # its warm containers hold the workspace
    print(
        f"all tasks: first {sum(firsts):.2f}s, cached {sum(reruns):.2f}s: "
        f"{sum(reruns) / sum(firsts):.2f}x the time, 0 tokens"
    )


def semantic_figures() -> None:
    hits = [(best_match(a, [b]) is not None, same) for a, b, same in PAIRS]
    right = sum(hit and same for hit, same in hits)
    wrong = sum(hit and not same for hit, same in hits)
    precision = right / (right + wrong) if right + wrong else 1.0
    recall = right / sum(same for *_, same in PAIRS)
    print(
        f"semantic cache on {len(PAIRS)} labelled pairs: precision {precision:.3f}, "
        f"recall {recall:.3f}, wrong hits {wrong}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sandbox", default="auto")
    parser.add_argument("--tokens-per-second", type=float, default=100.0)
    parser.add_argument("--first-token", type=float, default=0.5, metavar="S")
    args = parser.parse_args()
    asyncio.run(measure(args.sandbox, Pace(args.first_token, args.tokens_per_second)))
    semantic_figures()


if __name__ == "__main__":
    main()
