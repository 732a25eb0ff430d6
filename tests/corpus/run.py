"""One corpus layout scraped in this process, as `tui-agent scrape` runs it, and scored."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from corpus.guard import Traffic, loopback_only
from corpus.layouts import Layout
from corpus.scoring import Score, score
from tui_agent.agents.launch import prepare
from tui_agent.agents.requests import ScrapeRequest
from tui_agent.agents.requests.base import Planner
from tui_agent.config import Settings
from tui_agent.recorder import SessionRecorder
from tui_agent.store import Store


@dataclass
class Run:
    """What a scrape of `layout` gave and how it scores."""

    layout: Layout
    status: str
    items: list[dict[str, Any]]
    score: Score
    seconds: float
    tokens: int
    error: str | None
    traffic: Traffic
    """The browser's requests: on loopback, and beyond it (aborted)."""


async def scrape(
    layout: Layout,
    base_url: str,
    folder: Path,
    planner: Planner = "offline",
    model: str | None = None,
    api_base: str | None = None,
) -> Run:
    """Scrape `layout` on the app at `base_url` (no browser sandbox: loopback pages only),
    its session stored in `folder`."""
    settings = Settings(
        db=folder / f"{layout.key}.db", model=model, api_base=api_base, browser_sandbox=False
    )
    request = ScrapeRequest(url=base_url + layout.path, task=layout.task, planner=planner)
    launch = prepare(request, settings)
    began = time.perf_counter()
    with loopback_only() as traffic:
        async with await Store.open(settings.db) as store:
            state = await SessionRecorder(store).run(launch.started, launch.events)
    error = None
    if state.status != "completed":
        error = state.errors[-1].message if state.errors else state.stopped_reason
    return Run(
        layout=layout,
        status=state.status,
        items=list(state.items),
        score=score(state.items, layout.truth),
        seconds=time.perf_counter() - began,
        tokens=state.total_tokens,
        error=error,
        traffic=traffic,
    )
