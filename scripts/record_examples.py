"""Record the example sessions in sessions/ from real runs (no model involved).

Each program below really runs in a `python3` subprocess; what it printed, returned or raised
is recorded as events through the real SessionRunner into a real SQLite store, then exported
as JSONL. Usage: .venv/bin/python scripts/record_examples.py [OUT_DIR]
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

from tui_agent.analysis import analyze_output
from tui_agent.events import (
    CodeProposed,
    ErrorInfo,
    Event,
    ExecutionFinished,
    ExecutionStarted,
    FinalAnswer,
    ItemsExtracted,
    LogLine,
    OutputAnalyzed,
    SessionEnded,
    SessionStarted,
    Thought,
)
from tui_agent.session import SessionRunner
from tui_agent.store import Store

SPEC = "seed 002 (CodeAct) example"

COMPOUND_FIRST = """principal = 15000
rate = 0.06
final_amount = principal * (1 + rate / n) ** (n * t)
print(f"Final Amount: ${final_amount:,.2f}")
"""

COMPOUND_FIXED = """principal = 15000
rate = 0.06
n = 2  # semi-annual
t = 6
final_amount = principal * (1 + rate / n) ** (n * t)
print(f"Final Amount: ${final_amount:,.2f}")
print(f"Compound Interest: ${final_amount - principal:,.2f}")
"""

BOOKS_PROGRAM = """import json
from html.parser import HTMLParser

AUTHORS = ["Ada Lovelace", "Alan Turing", "Grace Hopper", "Edsger Dijkstra", "Barbara Liskov"]
rows = []
for i in range(1, 61):
    isbn = f'<span class="isbn">978-0-{i:04d}</span>' if i % 3 == 0 else ""
    date = f'<time>2024-{i % 12 + 1:02d}-{i % 28 + 1:02d}</time>' if i % 4 else ""
    stock = '<b class="stock">in stock</b>' if i % 5 else '<b class="stock"> </b>'
    rows.append(
        f'<li class="book"><a href="https://books.example/b/{i}">Book {i}</a>'
        f'<i class="author">{AUTHORS[i % 5]}</i><em class="price">{10 + i * 0.5:.2f}</em>'
        f'{isbn}{date}{stock}</li>'
    )
PAGE = "<ul>" + "".join(rows) + "</ul>"


class Books(HTMLParser):
    def __init__(self):
        super().__init__()
        self.items, self.field = [], None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "li":
            self.items.append({"title": None, "url": None, "price": None,
                               "author": {"name": None}, "isbn": None,
                               "published": None, "in_stock": None})
        elif tag == "a":
            self.items[-1]["url"], self.field = attrs["href"], "title"
        else:
            self.field = {"i": "author", "em": "price", "span": "isbn",
                          "time": "published", "b": "in_stock"}.get(tag)

    def handle_data(self, data):
        item = self.items[-1] if self.items else None
        if item is None or self.field is None:
            return
        if self.field == "author":
            item["author"]["name"] = data
        elif self.field == "price":
            item["price"] = float(data)
        elif self.field == "in_stock":
            item["in_stock"] = data.strip() == "in stock"
        else:
            item[self.field] = data
        self.field = None


parser = Books()
parser.feed(PAGE)
print(f"parsed {len(parser.items)} books", flush=True)
print(json.dumps(parser.items))
"""

CRASHING_PROGRAM = """totals = {"north": 120, "south": 0}
for region, count in totals.items():
    print(f"{region}: {count} orders")
    print(f"average basket: {1000 / count:.2f}")
"""


async def run_python(code: str, timeout: float = 30.0) -> tuple[int, str, str, float]:
    """Run `code` in a fresh python3 subprocess: exit code, stdout, stderr, seconds."""
    start = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-I",
        "-c",
        code,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout)
    return proc.returncode or 0, out.decode(), err.decode(), time.perf_counter() - start


def finished(step: int, code: int, out: str, err: str, seconds: float) -> ExecutionFinished:
    """The subprocess outcome as an ExecutionFinished event (error from the traceback)."""
    logs = [LogLine(stream="stdout", text=line) for line in out.splitlines()]
    error = None
    if code == 0:
        logs += [LogLine(stream="stderr", text=line) for line in err.splitlines()]
    else:
        last = err.strip().splitlines()[-1] if err.strip() else f"exit code {code}"
        kind, _, message = last.partition(": ")
        error = ErrorInfo(type=kind, message=message, traceback=err.strip())
    return ExecutionFinished(step=step, success=code == 0, logs=logs, error=error, duration=seconds)


async def run_step(step: int, code: str) -> AsyncIterator[Event]:
    yield CodeProposed(step=step, code=code, action="execute_code" if step == 1 else "debug_error")
    yield ExecutionStarted(step=step, backend="subprocess", isolated=False)
    yield finished(step, *await run_python(code))


async def compound_interest() -> AsyncIterator[Event]:
    """Seed 002's three turns; thoughts are quoted from the spec, the runs are real."""
    yield Thought(step=1, text="I need to use the compound interest formula A = P(1 + r/n)^(nt).")
    async for event in run_step(1, COMPOUND_FIRST):
        yield event
    yield Thought(
        step=2, text="I got an error because I didn't define all variables. Let me fix this..."
    )
    result = None
    async for event in run_step(2, COMPOUND_FIXED):
        if isinstance(event, ExecutionFinished):
            result = event
        yield event
    assert result is not None and result.success, "the fixed compound-interest code failed"
    amount, interest = (line.text.split("$")[1] for line in result.logs)
    yield Thought(step=3, text="Perfect! The calculation executed successfully.")
    yield FinalAnswer(
        step=3,
        text=f"With a $15,000 premium at 6% interest compounded semi-annually for 6 years, "
        f"you would earn ${interest} in compound interest, for a final amount of ${amount}.",
    )


async def book_list() -> AsyncIterator[Event]:
    """A stdlib HTML parser that returns records with nested, empty and mixed fields."""
    yield CodeProposed(step=1, code=BOOKS_PROGRAM)
    yield ExecutionStarted(step=1, backend="subprocess", isolated=False)
    code, out, err, seconds = await run_python(BOOKS_PROGRAM)
    *log_lines, payload = out.splitlines()
    items = json.loads(payload)
    event = finished(1, code, "\n".join(log_lines), err, seconds)
    yield event.model_copy(update={"result": f"list of {len(items)} records"})
    yield ItemsExtracted(step=1, items=items)
    yield OutputAnalyzed(step=1, analysis=analyze_output(items))


async def crashing_program() -> AsyncIterator[Event]:
    async for event in run_step(1, CRASHING_PROGRAM):
        yield event
    yield SessionEnded(status="failed", stopped_reason="ZeroDivisionError")


RECORDINGS = {
    "compound-interest": (
        SessionStarted(
            kind="recording",
            title=f"Compound interest: {SPEC}, real runs, no model",
            agent_type="generic",
        ),
        compound_interest,
    ),
    "book-list": (
        SessionStarted(
            kind="recording",
            title="Book list: items from a real stdlib parser run",
            agent_type="scraper",
            test_context={"html": "generated in the program"},
        ),
        book_list,
    ),
    "crashing-program": (
        SessionStarted(
            kind="recording", title="Order report: a program that crashes", agent_type="generic"
        ),
        crashing_program,
    ),
}


async def record(out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        async with await Store.open(Path(tmp) / "record.db") as store:
            for name, (started, agent) in RECORDINGS.items():
                runner = SessionRunner(store)
                await runner.run(started, agent())
                path = out_dir / f"{name}.jsonl"
                count = await store.export_jsonl(runner.session_id, path)
                print(f"{path}: {count} events ({runner.state.status})")


if __name__ == "__main__":
    asyncio.run(record(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("sessions")))
