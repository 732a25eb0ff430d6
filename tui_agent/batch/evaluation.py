"""Eval batches: judging an item's code, and the report of a batch (or two side by side).

An item passes when the code its session ran successfully, followed by the task's check
(HumanEval's `check(entry_point)`, or the task's own statements), runs to its end in a fresh
sandbox of the item's own. The report reads the batch session and its children's summaries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tui_agent.session import SessionState, SessionSummary

if TYPE_CHECKING:
    from tui_agent.batch.plan import EvalCheck
    from tui_agent.config import Settings

JUDGE_TIMEOUT = 30.0


def candidate(state: SessionState) -> str:
    """The code a session ran successfully, in order: what its answer stands on."""
    ran = [
        step.code
        for step in state.steps.values()
        if step.code and step.execution is not None and step.execution.success
    ]
    return "\n\n".join(ran)


async def judge(check: EvalCheck, state: SessionState, settings: Settings) -> tuple[bool, str]:
    """Whether the session's code passes `check` in a fresh sandbox, and why not in one line."""
    from tui_agent.sandbox.choose import open_sandbox
    from tui_agent.sandbox.wire import ExecuteRequest

    code = candidate(state)
    if not code:
        return False, "no code ran successfully"
    backend = (state.request or {}).get("sandbox") or settings.sandbox
    program = check.program(code)
    async with open_sandbox(backend) as sandbox:
        result = await sandbox.execute(
            ExecuteRequest(code=program, timeout=JUDGE_TIMEOUT, entrypoint="tui_agent_judged")
        )
    if result.success:
        return True, ""
    if result.timed_out:
        return False, f"the check timed out after {JUDGE_TIMEOUT:g} s"
    error = result.error
    if error is None:
        return False, result.killed_reason or "the check failed"
    message = f"{error.type}: {error.message}" if error.message else error.type
    return False, f"check failed: {message}"


@dataclass(frozen=True)
class EvalRow:
    """One task of an eval batch: its verdict and what it cost."""

    label: str
    passed: bool
    status: str
    line: str
    steps: int
    tokens: int
    cost: float | None
    seconds: float
    child: str


@dataclass(frozen=True)
class EvalReport:
    """An eval batch's rows and totals."""

    batch: str
    model: str | None
    rows: list[EvalRow]

    @property
    def passed(self) -> int:
        return sum(row.passed for row in self.rows)

    @property
    def tokens(self) -> int:
        return sum(row.tokens for row in self.rows)

    @property
    def steps(self) -> int:
        return sum(row.steps for row in self.rows)

    @property
    def cost(self) -> float | None:
        known = [row.cost for row in self.rows if row.cost is not None]
        return sum(known) if known else None

    @property
    def cost_complete(self) -> bool:
        """Whether every row's cost is known (else `cost` is a lower bound)."""
        return all(row.cost is not None for row in self.rows)

    @property
    def seconds(self) -> float:
        return sum(row.seconds for row in self.rows)

    @property
    def pass_rate(self) -> float:
        return self.passed / len(self.rows) if self.rows else 0.0


def eval_report(batch: SessionState, children: dict[str, SessionSummary]) -> EvalReport:
    """The report of eval batch `batch` (its folded state) from its children's summaries."""
    state = batch.batch
    rows = []
    for item in sorted(state.items.values(), key=lambda i: i.item) if state else []:
        child = children.get(item.child)
        rows.append(
            EvalRow(
                label=item.label,
                passed=bool(item.passed),
                status=item.status or item.state,
                line=item.line,
                steps=child.step_count if child else 0,
                tokens=(child.prompt_tokens + child.completion_tokens) if child else 0,
                cost=child.cost if child else None,
                seconds=item.seconds,
                child=item.child if child else "",
            )
        )
    model = (batch.params.get("plan") or {}).get("base", {}).get("model") or batch.model
    return EvalReport(batch.session_id, model, rows)
