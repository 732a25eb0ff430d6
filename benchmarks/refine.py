"""Field refinement: attempts, model tokens and time per fixed field, against one plain run.

Usage: .venv/bin/python benchmarks/refine.py [--items 10] [--runs 1] [--no-code]

Each scenario records a session whose one field is broken, then refines it from one feedback
item, as `tui-agent refine` does (real Chromium on the demo site served in this process, real
SQLite in a temporary folder, the scripted model over HTTP through litellm, a real sandbox):

  recipe fast path   the user gives the correct selector: the binding is patched, verified in
                     the browser and the recipe re-run with no model call (panel: a details
                     field; navigate: an item field read from href; pagination: an inline field
                     inside REPEAT)
  recipe model path  notes only: the scripted model proposes a wrong and a right selector; the
                     wrong one is refused in the browser, the right one used
  code               a transformer's missing field: the scripted model's first code still
                     misses it, its second fixes it (bubblewrap or docker; skipped if neither)

The baseline is the session's own plain run, recorded in the same process just before (for a
recipe: Chromium start, page load and --items items; for code: one sandboxed run): "ratio" is
refine time / plain-run time. Medians over --runs.
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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.scripted_model import ScriptedModel, text

from tui_agent.agents.execute import exec_started, run_exec
from tui_agent.agents.recipe_run import recipe_started, run_recipe
from tui_agent.agents.refine import start_refinement
from tui_agent.analysis.shapes import FieldFeedback
from tui_agent.config import Settings
from tui_agent.demo_site import DemoSite
from tui_agent.events import FeedbackSubmitted, LLMCall
from tui_agent.llm import LLM
from tui_agent.recorder import SessionRecorder
from tui_agent.sandbox.choose import AUTO_ORDER, backend_status, open_sandbox
from tui_agent.sandbox.wire import ExecuteRequest
from tui_agent.store import Store
from tui_agent.web.recipe import parse_recipe

RECIPES = Path(__file__).resolve().parents[1] / "recipes"
MODEL = "openai/scripted"

ORDERS = [{"id": n, "qty": n % 3 + 1, "price": 10.0 * n} for n in range(1, 21)]
TRANSFORM = 'def main(orders):\n    return [{{"id": o["id"], "total": {total}}} for o in orders]\n'


@dataclass
class Figures:
    """One refinement: did it fix the field, with how many attempts, calls and tokens, and
    how long it took next to the plain run."""

    fixed: bool
    attempts: int
    calls: int
    tokens: int
    plain: float
    refine: float


@dataclass(frozen=True)
class RecipeCase:
    name: str
    layout: str
    field: str
    group: str
    broken: Any
    selector: str | None
    notes: str | None = None
    proposals: tuple[str, ...] = ()


RECIPE_CASES = (
    RecipeCase("recipe fast path", "panel", "price", "DETAILS_FIELDS", ".nope", ".field-price"),
    RecipeCase(
        "recipe fast path",
        "navigate",
        "url",
        "ITEM_FIELDS",
        {"selector": "a.nope", "attribute": "href"},
        "a.details-link",
    ),
    RecipeCase("recipe fast path", "pagination", "seller", "DETAILS_FIELDS", ".nope", ".seller"),
    RecipeCase(
        "recipe model path",
        "panel",
        "price",
        "DETAILS_FIELDS",
        ".nope",
        None,
        notes="the price shown in the details panel",
        proposals=(".price-tag", "dd.field-price"),
    ),
)


async def refine(
    settings: Settings, session_id: str, feedback: FieldFeedback, llm: LLM | None
) -> tuple[bool, int, int, int, float]:
    """Refine the stored session as the CLI does: fixed, attempts, calls, tokens, seconds."""
    async with await Store.open(settings.db) as store:
        began = time.perf_counter()
        recorder = await SessionRecorder.resume(store, session_id)
        await recorder.emit(FeedbackSubmitted(feedback=[feedback]))
        refinement = start_refinement(recorder.state, [feedback], settings=settings, llm=llm)
        calls = []
        async for event in refinement.run():
            stored = await recorder.emit(event)
            if isinstance(stored, LLMCall):
                calls.append(stored)
        took = time.perf_counter() - began
    outcome = refinement.outcome
    assert outcome is not None
    tokens = sum(c.prompt_tokens + c.completion_tokens for c in calls)
    return feedback.field in outcome.fixed, outcome.attempts, len(calls), tokens, took


async def recipe_case(case: RecipeCase, site: DemoSite, items: int, folder: Path) -> Figures:
    document = json.loads((RECIPES / f"demo-{case.layout}.json").read_text())
    document["bindings"][case.group][case.field] = case.broken
    recipe = parse_recipe(document)
    url = site.url(case.layout)
    settings = Settings(db=folder / f"{time.monotonic_ns()}.db", model=None)
    async with await Store.open(settings.db) as store:
        began = time.perf_counter()
        agent = run_recipe(recipe, url, max_items=items)
        state = await SessionRecorder(store).run(recipe_started(recipe, url, items), agent)
        plain = time.perf_counter() - began
    assert state.status == "completed", state.errors
    feedback = FieldFeedback(
        field=case.field, issue="missing", correct_selector=case.selector, notes=case.notes
    )
    if not case.proposals:
        fixed, attempts, calls, tokens, took = await refine(
            settings, state.session_id, feedback, None
        )
        return Figures(fixed, attempts, calls, tokens, plain, took)
    answer = {"candidates": [{"selector": s} for s in case.proposals]}
    with ScriptedModel([text(json.dumps(answer))]) as server:
        llm = LLM(MODEL, api_base=server.api_base)
        fixed, attempts, calls, tokens, took = await refine(
            settings, state.session_id, feedback, llm
        )
    return Figures(fixed, attempts, calls, tokens, plain, took)


def code_backend() -> str | None:
    return next((name for name in AUTO_ORDER if backend_status(name).ok), None)


async def code_case(backend: str, folder: Path) -> Figures:
    request = ExecuteRequest(code=TRANSFORM.format(total="None"), args=[ORDERS])
    with ScriptedModel() as server:
        settings = Settings(
            db=folder / f"{time.monotonic_ns()}.db",
            model=MODEL,
            api_base=server.api_base,
            sandbox=backend,  # type: ignore[arg-type]
            workspace=folder / "workspace",
        )
        started = exec_started(request, "orders", agent_type="transformer")
        async with await Store.open(settings.db) as store:
            began = time.perf_counter()
            sandbox = open_sandbox(backend, workspace=settings.workspace)
            async with sandbox:
                state = await SessionRecorder(store).run(started, run_exec(sandbox, request))
            plain = time.perf_counter() - began
        assert state.status == "completed", state.errors
        for total in ('o.get("sum")', 'o["qty"] * o["price"]'):
            code = TRANSFORM.format(total=total)
            body = {"thought": "total is qty times price", "action": "execute_code", "code": code}
            server.push(text(json.dumps(body)))
        feedback = FieldFeedback(field="total", issue="missing", notes="qty times price")
        llm = LLM(MODEL, api_base=server.api_base)
        fixed, attempts, calls, tokens, took = await refine(
            settings, state.session_id, feedback, llm
        )
    return Figures(fixed, attempts, calls, tokens, plain, took)


async def median_of(runs: int, measure: Callable[[], Awaitable[Figures]]) -> Figures:
    figures = [await measure() for _ in range(runs)]
    return Figures(
        fixed=all(f.fixed for f in figures),
        attempts=round(statistics.median(f.attempts for f in figures)),
        calls=round(statistics.median(f.calls for f in figures)),
        tokens=round(statistics.median(f.tokens for f in figures)),
        plain=statistics.median(f.plain for f in figures),
        refine=statistics.median(f.refine for f in figures),
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10, help="items per recipe run (10)")
    parser.add_argument("--runs", type=int, default=1, help="repetitions, medians shown (1)")
    parser.add_argument("--no-code", action="store_true", help="skip the code scenario")
    args = parser.parse_args()

    rows: list[tuple[str, str, Figures]] = []
    with tempfile.TemporaryDirectory() as tmp, DemoSite() as site:
        folder = Path(tmp)
        for case in RECIPE_CASES:
            figures = await median_of(
                args.runs, lambda case=case: recipe_case(case, site, args.items, folder)
            )
            rows.append((case.name, f"{case.layout}.{case.field}", figures))
        backend = None if args.no_code else code_backend()
        if backend is not None:
            figures = await median_of(args.runs, lambda: code_case(backend, folder))
            rows.append((f"code ({backend})", "transformer.total", figures))
        elif not args.no_code:
            print("code scenario skipped: neither docker nor bubblewrap works here")

    header = ("scenario", "field", "fixed", "attempts", "calls", "tokens", "plain s", "refine s")
    print(f"{args.items} items per recipe run, medians of {args.runs} run(s)\n")
    print(
        f"{header[0]:<20} {header[1]:<20} " + " ".join(f"{h:>8}" for h in header[2:]) + "   ratio"
    )
    for scenario, field, f in rows:
        print(
            f"{scenario:<20} {field:<20} {'yes' if f.fixed else 'NO':>8} {f.attempts:>8} "
            f"{f.calls:>8} {f.tokens:>8} {f.plain:>8.2f} {f.refine:>8.2f}   "
            f"{f.refine / f.plain:.2f}x"
        )
    fixed = [f for _, _, f in rows if f.fixed]
    if fixed:
        attempts = sum(f.attempts for f in fixed) / len(fixed)
        tokens = sum(f.tokens for f in fixed) / len(fixed)
        print(
            f"\nper fixed field ({len(fixed)} of {len(rows)}): {attempts:.2f} attempts, "
            f"{tokens:.0f} tokens"
        )
    fast = [f for name, _, f in rows if name == "recipe fast path"]
    if fast:
        print(f"recipe fast path: {sum(f.tokens for f in fast)} tokens in all (expected 0)")


if __name__ == "__main__":
    asyncio.run(main())
