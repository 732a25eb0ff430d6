"""Two lines of a batch's progress: a bar of the items done, the rate and the ETA; then how
many items finished, failed, run and wait, how long it has taken and on which engine."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from tui_agent.batch.state import BatchState
from tui_agent.formatting import format_duration


def rate_text(batch: BatchState, running: bool) -> str:
    """`4/6 done · 0.62 items/s · ETA 3s` (no ETA once nothing runs)."""
    parts = [f"{batch.done}/{batch.total} done"]
    rate = batch.rate
    parts.append(f"{rate:.2f} items/s" if rate is not None else "— items/s")
    if running and batch.done < batch.total:
        eta = batch.eta()
        parts.append(f"ETA {format_duration(eta)}" if eta is not None else "ETA —")
    return " · ".join(parts)


def counts_text(batch: BatchState, *, checked: bool, elapsed: float, engine: str) -> Text:
    """`✓ 3 finished  ✗ 1 failed  ▶ 2 running  · 0 queued   12s on local:4`; retried and
    cancelled items when there are some, and an eval batch's passes (its items that could not
    run are said to have errored: an answer that fails its check is no failed item)."""
    counts = [
        ("✓", batch.count("finished"), "finished", "green"),
        ("✗", batch.count("failed"), "errored" if checked else "failed", "bold red"),
        ("▶", batch.count("started"), "running", "cyan"),
        ("↻", batch.count("retrying"), "retrying", "yellow"),
        ("·", batch.count("queued"), "queued", ""),
        ("■", batch.count("cancelled"), "cancelled", "yellow"),
    ]
    text = Text()
    for mark, count, word, style in counts:
        if count or word in ("finished", "failed", "errored", "running", "queued"):
            text.append(f"{mark} {count} {word}", style=style if count else "dim")
            text.append("  ")
    if checked:
        passed = sum(1 for item in batch.items.values() if item.passed)
        text.append(f"pass {passed}/{batch.total}", style="bold")
        text.append("  ")
    text.append(f" {format_duration(elapsed)}" + (f" on {engine}" if engine else ""), style="dim")
    return text


def progress_renderable(
    batch: BatchState, *, running: bool, checked: bool, elapsed: float, engine: str
) -> RenderableType:
    bar = Table.grid(padding=(0, 2), expand=True)
    bar.add_column(ratio=1)
    bar.add_column(no_wrap=True)
    done = ProgressBar(total=max(batch.total, 1), completed=batch.done, complete_style="green")
    bar.add_row(done, rate_text(batch, running))
    counts = counts_text(batch, checked=checked, elapsed=elapsed, engine=engine)
    counts.no_wrap, counts.overflow = True, "ellipsis"
    return Group(bar, counts)


class BatchProgress(Static):
    """Shows where a batch stands."""

    def show(
        self, batch: BatchState, *, running: bool, checked: bool, elapsed: float, engine: str
    ) -> None:
        self.update(
            progress_renderable(
                batch, running=running, checked=checked, elapsed=elapsed, engine=engine
            )
        )
