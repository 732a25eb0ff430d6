"""Record the example sessions in sessions/ from real runs.

The demo-shop-scrape session is `tui-agent scrape` with the offline planner on the demo shop
(served in this process): real Chromium, no model. The compound-interest session is the CodeAct
agent through the whole stack: its replies come from the scripted model server
(tests/support/scripted_model.py) reached through litellm, its code runs in the real sandbox
(docker, else bubblewrap), and its title says the model was scripted. The email-task session is
the task executor the same way: the spec's three attempts (a name never defined, refused unrun;
an output the validator refuses; then success). The other programs really
run in a `python3` subprocess, with no model. Everything is recorded through the real
SessionRecorder into a real SQLite store, then exported as JSONL.
Usage: .venv/bin/python scripts/record_examples.py [OUT_DIR]
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.scripted_model import ScriptedModel, text

from tui_agent.agents.launch import prepare
from tui_agent.agents.requests import CodeRequest, ScrapeRequest, TaskRequest
from tui_agent.analysis import analyze_output
from tui_agent.config import Settings
from tui_agent.demo_site import DemoSite
from tui_agent.events import (
    CodeProposed,
    ErrorInfo,
    Event,
    ExecutionFinished,
    ExecutionStarted,
    ItemsExtracted,
    LogLine,
    OutputAnalyzed,
    SessionEnded,
    SessionStarted,
)
from tui_agent.recorder import SessionRecorder
from tui_agent.sandbox.pool import close_shared_pool
from tui_agent.store import Store

COMPOUND_TASK = (
    "Calculate compound interest at 15k premium, 6% interest compounded semi annually for 6 years"
)
COMPOUND_TURNS = [
    {
        "thought": "I need to use the compound interest formula A = P(1 + r/n)^(nt), with the "
        "principal, the rate, the periods per year n and the years t.",
        "action": "execute_code",
        "code": "principal = 15000\nrate = 0.06\n"
        "final_amount = principal * (1 + rate / n) ** (n * t)\n"
        'print(f"Final Amount: ${final_amount:,.2f}")',
    },
    {
        "thought": "I got an error because I didn't define all variables. Let me fix this: "
        "principal and rate are still defined, n and t are not.",
        "action": "debug_error",
        "code": "n = 2  # semi-annual\nt = 6\n"
        "final_amount = principal * (1 + rate / n) ** (n * t)\n"
        'print(f"Final Amount: ${final_amount:,.2f}")\n'
        'print(f"Compound Interest: ${final_amount - principal:,.2f}")',
    },
    {
        "thought": "Perfect! The calculation executed successfully and shows the final amount.",
        "action": "provide_answer",
        "final_answer": "Based on the calculation, with a $15,000 premium at 6% interest "
        "compounded semi-annually for 6 years, you would earn $6,386.41 in compound interest, "
        "resulting in a final amount of $21,386.41.",
    },
]

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
    yield CodeProposed(step=step, code=code)
    yield ExecutionStarted(step=step, backend="subprocess", isolated=False)
    yield finished(step, *await run_python(code))


def compound_interest(workspace: Path) -> tuple[SessionStarted, AsyncIterator[Event]]:
    """Seed 002's three turns: scripted replies, real litellm, real sandbox, real runs."""
    server = ScriptedModel([text(json.dumps(turn), chunk_size=12) for turn in COMPOUND_TURNS])
    server.start()
    settings = Settings(
        model=server.model("scripted"), api_base=server.api_base, workspace=workspace
    )
    launch = prepare(CodeRequest(task=COMPOUND_TASK, max_steps=5), settings)
    started, agent = launch.started, launch.events
    title = "Compound interest: seed 002 (CodeAct) example, scripted model, real sandbox"

    async def served() -> AsyncIterator[Event]:
        try:
            async for event in agent:
                if isinstance(event, SessionEnded):
                    server.stop()
                yield event
        finally:
            server.stop()

    return started.model_copy(update={"title": title}), served()


EMAIL_REPLIES = [
    "```python\n# STAGE: TASK\nsend_email(email_user, password)\n```",
    "Reading the user from the context.\n\n```python\n# STAGE: TASK\n"
    "email_user = context.get('user')\ncontext['email_to'] = email_user\n"
    "context['email_sent'] = email_user is not None\n```",
    json.dumps({"valid": False, "reason": "email_user is None, cannot send email"}),
    "The key is email_user.\n\n```python\n# STAGE: TASK\n"
    "email_user = context['email_user']\npassword = context['email_password']\n"
    "context['email_to'] = email_user\ncontext['email_sent'] = bool(email_user and password)\n```",
    json.dumps({"valid": True, "reason": "the address was read from the context"}),
]


def email_task(workspace: Path) -> tuple[SessionStarted, AsyncIterator[Event]]:
    """The task executor's three-attempt example: scripted replies, real litellm and sandbox."""
    server = ScriptedModel([text(reply, chunk_size=12) for reply in EMAIL_REPLIES])
    server.start()
    settings = Settings(
        model=server.model("scripted"), api_base=server.api_base, workspace=workspace
    )
    context = {"email_user": "test@example.com", "email_password": "secret"}
    launch = prepare(
        TaskRequest(task="Send email notification", context=context, use_cache=False),
        settings,
        session_id="example",
    )
    started = launch.started
    title = "Send email notification: task executor example, scripted model, real sandbox"

    async def served() -> AsyncIterator[Event]:
        try:
            async for event in launch.events:
                yield event
        finally:
            server.stop()

    return started.model_copy(update={"title": title}), served()


def demo_shop_scrape(workspace: Path) -> tuple[SessionStarted, AsyncIterator[Event]]:
    """The offline planner exploring the demo shop's panel layout, then its recipe's items."""
    site = DemoSite().start()
    settings = Settings(db=workspace / "unused.db", model=None)
    request = ScrapeRequest(url=site.url("panel"), task="Extract 12 items", planner="offline")
    launch = prepare(request, settings)
    started, agent = launch.started, launch.events

    async def events() -> AsyncIterator[Event]:
        try:
            async for event in agent:
                yield event
        finally:
            site.stop()

    return started, events()


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


Recording = Callable[[Path], tuple[SessionStarted, AsyncIterator[Event]]]


def subprocess_recording(
    started: SessionStarted, agent: Callable[[], AsyncIterator[Event]]
) -> Recording:
    return lambda _workspace: (started, agent())


RECORDINGS: dict[str, Recording] = {
    "compound-interest": compound_interest,
    "email-task": email_task,
    "demo-shop-scrape": demo_shop_scrape,
    "book-list": subprocess_recording(
        SessionStarted(
            kind="recording",
            title="Book list: items from a real stdlib parser run",
            agent_type="scraper",
            test_context={"html": "generated in the program"},
        ),
        book_list,
    ),
    "crashing-program": subprocess_recording(
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
            for name, recording in RECORDINGS.items():
                started, agent = recording(Path(tmp) / "workspace")
                recorder = SessionRecorder(store)
                await recorder.run(started, agent)
                assert recorder.state.status in ("completed", "failed"), recorder.state.errors
                path = out_dir / f"{name}.jsonl"
                count = await store.export_jsonl(recorder.session_id, path)
                print(f"{path}: {count} events ({recorder.state.status})")
        close_shared_pool()  # its warm containers hold the workspace


if __name__ == "__main__":
    asyncio.run(record(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("sessions")))
