"""A batch as data: one base request and, per item, what differs from it.

`BatchPlan` is stored with the batch session (`params["plan"]`), so `--resume` rebuilds the
same items with the same ids. Each item's request is the base request with the item's fields
set (a URL, a row's context, an eval task), checked as any request is when the plan is made:
a bad line is one error naming its file and line before anything runs.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel

from tui_agent.agents.requests import (
    REQUEST_CLASSES,
    CodeRequest,
    RequestBase,
    RequestError,
    parse_request,
)
from tui_agent.agents.task.context import context_schema, schema_hash
from tui_agent.errors import UserError

BatchKind = Literal["recipe", "task", "workflow", "eval"]
MAX_ITEMS = 100_000
"""The most items one batch may have."""
EVAL_TASK = (
    "Complete this Python function. Write the whole function (signature and body), run it on "
    "an example or two to check it, then give your final answer.\n\n```python\n{prompt}```"
)
"""What the CodeAct agent is asked for a HumanEval-style task (a prompt that is code)."""


class PlanError(UserError):
    """An input of a batch that cannot be used: its file and line, and why."""


class EvalCheck(BaseModel):
    """How an eval item is judged: the code it ran, then `test` (HumanEval's `check`
    function, called on `entry_point`) or `check` (statements that raise when it failed)."""

    test: str = ""
    entry_point: str = ""
    check: str = ""
    imports: str = ""
    """The import lines of the task's prompt, which its code may rely on."""

    def program(self, candidate: str) -> str:
        """The program that passes when it exits normally."""
        tail = f"{self.test}\n\ncheck({self.entry_point})\n" if self.test else self.check
        return f"{self.imports}{candidate}\n\n{tail}\n"


class PlanItem(BaseModel):
    """One item: a label to show (a URL, row N, a task id), the request fields it sets over
    the base request, and its eval check (eval batches)."""

    label: str
    sets: dict[str, Any]
    check: EvalCheck | None = None


class BatchPlan(BaseModel):
    """What a batch runs: `of` a kind, the `base` request (JSON), and its items."""

    of: BatchKind
    base: dict[str, Any]
    items: list[PlanItem]
    source: str = ""
    """The file the items came from, for the title."""

    @property
    def title(self) -> str:
        count = len(self.items)
        where = f" from {Path(self.source).name}" if self.source else ""
        return f"batch {self.of}: {count} item{'s' if count != 1 else ''}{where}"

    def request(self, index: int) -> RequestBase:
        """Item `index`'s request: the base request with the item's fields set."""
        data = {**self.base, **self.items[index].sets}
        return parse_request(REQUEST_CLASSES[data["kind"]], data)

    def host(self, index: int) -> str | None:
        """The site a recipe item loads (None for other kinds)."""
        url = self.items[index].sets.get("url")
        return (urlsplit(url).hostname or url) if isinstance(url, str) else None

    def shape(self, index: int) -> str | None:
        """What a task or workflow item's generated code depends on besides its values: the
        task and its context's schema. Items of one shape share their code (None: no code is
        generated for the item's shape, or it is not a task)."""
        if self.of not in ("task", "workflow") or not self.base.get("use_cache", True):
            return None
        context = self.items[index].sets.get("context", {})
        what = json.dumps(self.base.get("task") or self.base.get("workflow"), sort_keys=True)
        return schema_hash([what, context_schema(context)])


def child_id(batch_id: str, index: int) -> str:
    """The session id of item `index` of batch `batch_id`: the same on every attempt and every
    resume, so an item is stored once whatever happens to the workers that run it."""
    return hashlib.sha256(f"{batch_id}/{index}".encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Line:
    """A non-blank line of an input file, numbered from 1."""

    number: int
    text: str


def input_lines(path: Path) -> Iterator[Line]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise PlanError(f"cannot read {path}: {reason}") from None
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip() and not line.lstrip().startswith("#"):
            yield Line(number, line.strip())


def _checked(items: list[PlanItem], path: Path) -> list[PlanItem]:
    if not items:
        raise PlanError(f"{path} holds no items")
    if len(items) > MAX_ITEMS:
        raise PlanError(f"{path} holds {len(items):,} items; a batch may have {MAX_ITEMS:,}")
    return items


def _item_request(base: RequestBase, sets: dict[str, Any], where: str) -> None:
    """Refuse an item whose request is not usable, naming where it came from."""
    try:
        parse_request(type(base), {**base.to_json(), **sets})
    except RequestError as exc:
        raise PlanError(f"{where}: {exc.worded(lambda field: field)}") from None


def recipe_plan(base: RequestBase, urls: Path, *, allow_file: bool = False) -> BatchPlan:
    """A recipe run per URL of `urls` (one per line; blank lines and # comments skipped), each
    a URL a page may be loaded from (file:// only when `allow_file`)."""
    from tui_agent.web.navigation import NavigationRefused, check_navigable

    items: list[PlanItem] = []
    for line in input_lines(urls):
        where = f"{urls} line {line.number}"
        try:
            check_navigable(line.text, allow_file=allow_file)
        except NavigationRefused as exc:
            raise PlanError(f"{where}: {exc}") from None
        sets = {"url": line.text}
        _item_request(base, sets, where)
        items.append(PlanItem(label=line.text, sets=sets))
    return BatchPlan(
        of="recipe", base=base.to_json(), items=_checked(items, urls), source=str(urls)
    )


def row_plan(of: Literal["task", "workflow"], base: RequestBase, rows: Path) -> BatchPlan:
    """A task or workflow run per row of `rows` (JSON lines of objects, or a CSV file with a
    header), each row merged over the base request's context."""
    given = dict(getattr(base, "context", {}))
    items: list[PlanItem] = []
    for number, row in _rows(rows):
        sets = {"context": {**given, **row}}
        _item_request(base, sets, f"{rows} line {number}")
        items.append(PlanItem(label=f"row {len(items) + 1}", sets=sets))
    return BatchPlan(of=of, base=base.to_json(), items=_checked(items, rows), source=str(rows))


def _rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    if path.suffix.lower() == ".csv":
        yield from _csv_rows(path)
        return
    for line in input_lines(path):
        try:
            row = json.loads(line.text)
        except json.JSONDecodeError as exc:
            raise PlanError(f"{path} line {line.number}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise PlanError(f"{path} line {line.number}: a row must be a JSON object")
        yield line.number, row


def _csv_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        with path.open(newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            for row in reader:
                if any(value for value in row.values()):
                    yield reader.line_num, {k: _cell(v) for k, v in row.items() if k}
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise PlanError(f"cannot read {path}: {exc}") from None


def _cell(text: str | None) -> Any:
    """A CSV cell as the number it spells, else its text."""
    if text is None:
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text


def eval_plan(base: CodeRequest, tasks: Path) -> BatchPlan:
    """A CodeAct session per task of `tasks` (JSON lines). HumanEval's lines are read as they
    are (`task_id`, `prompt`, `test`, `entry_point`); a line of our own has `task` (or
    `prompt`), `check` (Python that raises when the answer is wrong) and optionally `id`."""
    items: list[PlanItem] = []
    for line in input_lines(tasks):
        where = f"{tasks} line {line.number}"
        try:
            task = json.loads(line.text)
        except json.JSONDecodeError as exc:
            raise PlanError(f"{where}: not JSON ({exc.msg})") from None
        if not isinstance(task, dict):
            raise PlanError(f"{where}: a task must be a JSON object")
        item = _eval_item(task, len(items), where)
        _item_request(base, item.sets, where)
        items.append(item)
    return BatchPlan(
        of="eval", base=base.to_json(), items=_checked(items, tasks), source=str(tasks)
    )


def _eval_item(task: dict[str, Any], index: int, where: str) -> PlanItem:
    label = str(task.get("task_id") or task.get("id") or f"task {index + 1}")
    if isinstance(task.get("test"), str) and isinstance(task.get("entry_point"), str):
        prompt = task.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise PlanError(f"{where}: a HumanEval task needs its prompt")
        imports = "".join(
            line + "\n" for line in prompt.splitlines() if line.startswith(("import ", "from "))
        )
        check = EvalCheck(test=task["test"], entry_point=task["entry_point"], imports=imports)
        return PlanItem(label=label, sets={"task": EVAL_TASK.format(prompt=prompt)}, check=check)
    halves = [name for name in ("test", "entry_point") if isinstance(task.get(name), str)]
    if len(halves) == 1:
        missing = "entry_point" if halves == ["test"] else "test"
        raise PlanError(f"{where}: a HumanEval task needs `{missing}` with its `{halves[0]}`")
    text = task.get("task", task.get("prompt"))
    if not isinstance(text, str) or not text.strip():
        raise PlanError(f"{where}: a task needs `task` (or HumanEval's prompt, test, entry_point)")
    code = task.get("check")
    if not isinstance(code, str) or not code.strip():
        raise PlanError(f"{where}: a task needs `check`: Python that raises when it failed")
    return PlanItem(label=label, sets={"task": text}, check=EvalCheck(check=code))
