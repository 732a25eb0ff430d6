"""Loop detection: stop an agent that keeps running the same code or hitting one error.

Three rules, checked after every run: the same code fails `repeats` times (the model is not
changing its approach; `failed_before` lets the agent tell it so at the first repeat), the
same code runs `repeats` times with the same output (`ran_before`: nothing new is learnt), or
the same error (type and message) ends `repeats` runs in a row.
"""

from __future__ import annotations

from collections import Counter

from tui_agent.sandbox.wire import ExecuteResult

DEFAULT_REPEATS = 3
SIGNATURE_LIMIT = 160


def normalized(code: str) -> str:
    """`code` without trailing spaces and blank lines, so cosmetic edits do not count."""
    return "\n".join(line.rstrip() for line in code.splitlines() if line.strip())


def output_signature(result: ExecuteResult) -> str:
    """What a successful run showed: its printed lines and its value."""
    lines = "\n".join(f"{line.stream}:{line.text}" for line in result.logs)
    return f"{lines}\n{result.result!r}"


def error_signature(result: ExecuteResult) -> str:
    """`Type: message` of a failed run, shortened."""
    if result.error is not None:
        text = f"{result.error.type}: {result.error.message}"
    else:
        text = result.killed_reason or "failed"
    text = " ".join(text.split())
    return text if len(text) <= SIGNATURE_LIMIT else text[: SIGNATURE_LIMIT - 1] + "…"


class LoopGuard:
    """Feed it every run with `check`; it returns the `loop: ...` stop reason when one shows."""

    def __init__(self, repeats: int = DEFAULT_REPEATS) -> None:
        if repeats < 2:
            raise ValueError("repeats must be at least 2")
        self.repeats = repeats
        self._failed_code: Counter[str] = Counter()
        self._same_runs: Counter[tuple[str, str]] = Counter()
        self._streak: list[str] = []

    def failed_before(self, code: str) -> bool:
        """`code` (give or take blank lines and trailing spaces) already failed in this run."""
        return normalized(code) in self._failed_code

    def succeeded_before(self, code: str) -> bool:
        """`code` already ran in this run without error."""
        key = normalized(code)
        return any(ran == key for ran, _ in self._same_runs)

    def ran_before(self, code: str, result: ExecuteResult) -> bool:
        """`code` already ran in this run without error and showed the same output."""
        return (normalized(code), output_signature(result)) in self._same_runs

    def check(self, code: str, result: ExecuteResult) -> str | None:
        """None while the agent makes progress, else why it is going round in circles."""
        if result.success:
            self._streak.clear()
            run = (normalized(code), output_signature(result))
            self._same_runs[run] += 1
            if self._same_runs[run] >= self.repeats:
                return f"loop: the same code ran {self.repeats} times with the same output"
            return None
        signature = error_signature(result)
        key = normalized(code)
        self._failed_code[key] += 1
        if self._failed_code[key] >= self.repeats:
            return f"loop: the same code failed {self.repeats} times ({signature})"
        if self._streak and self._streak[-1] != signature:
            self._streak.clear()
        self._streak.append(signature)
        if len(self._streak) >= self.repeats:
            return f"loop: the same error {len(self._streak)} times in a row ({signature})"
        return None
