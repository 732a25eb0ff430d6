"""The recipe agent: load a page in Chromium and run a recipe on it, with no model at all.

Events: SessionStarted (kind "scrape"), the "load" and "list" phases, a ToolCall / ToolResult
per command, one ItemsExtracted per item as it is saved, soft failures as warnings, then
OutputAnalyzed over every item and SessionEnded: completed (max_items, list_exhausted), failed
(error; the items saved are kept) or, when the page failed after items were saved (the next
page shows no list, a page-level step fails), partial (error, with the reason).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from tui_agent.analysis import analyze_output
from tui_agent.events import (
    Error,
    Event,
    OutputAnalyzed,
    PhaseFinished,
    PhaseStarted,
    SessionEnded,
    SessionStarted,
)
from tui_agent.web.browser import Browser, BrowserError
from tui_agent.web.navigation import goto
from tui_agent.web.page_wait import WAIT_CAP
from tui_agent.web.phase import PhaseRun
from tui_agent.web.recipe import (
    DetailsParser,
    RecipeFile,
    RecipeInterpreter,
    RunOutcome,
)

LOAD_TIMEOUT_MS = 30_000


def recipe_started(
    recipe: RecipeFile,
    url: str,
    max_items: int | None = None,
    path: Path | None = None,
    stored: dict[str, Any] | None = None,
) -> SessionStarted:
    """The SessionStarted of a recipe run, with what is needed to run it again (and the
    `stored` request it started from)."""
    limit = max_items if max_items is not None else recipe.recipe.config.max_items
    params: dict[str, object] = {"max_items": limit}
    if path is not None:
        params["recipe_path"] = str(path)
    return SessionStarted(
        kind="scrape",
        title=f"recipe {recipe.recipe.name}",
        agent_type="scraper",
        params=params,
        test_context={"url": url, "recipe": recipe.to_json()},
        request=stored,
    )


async def run_recipe(
    recipe: RecipeFile,
    url: str,
    *,
    max_items: int | None = None,
    browser: Browser | None = None,
    wait: float = WAIT_CAP,
    parser: DetailsParser | None = None,
) -> AsyncIterator[Event]:
    """The events of one run of `recipe` on `url`, in a Chromium of its own (`browser`, not
    yet started: a default one if None; `parser`: the model that reads DETAILS_SCHEMA's
    fields when the recipe asks for it)."""
    browser = browser or Browser()
    page: Page | None = None
    try:
        yield PhaseStarted(phase="load", detail=url)
        began = time.monotonic()
        try:
            await browser.start()
            page = await browser.page()
            response = await goto(page, url, timeout=LOAD_TIMEOUT_MS)
        except (BrowserError, PlaywrightError) as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            message = reason if isinstance(exc, BrowserError) else f"cannot load {url}: {reason}"
            yield PhaseFinished(phase="load", ok=False, duration=time.monotonic() - began)
            yield Error(message=message, kind="PageLoadError")
            yield SessionEnded(status="failed", stopped_reason="error", summary=message)
            return
        status = response.status if response else None
        yield PhaseFinished(
            phase="load",
            duration=time.monotonic() - began,
            summary=f'"{await page.title()}" (HTTP {status})' if status else page.url,
        )
        interpreter = RecipeInterpreter(
            page,
            recipe,
            max_items=max_items,
            crashed=lambda: browser.crashed,
            wait=wait,
            parser=parser,
        )
        async for event in extract_phase(interpreter):
            yield event
    finally:
        if page is not None and not browser.crashed:  # a kept browser goes on without it
            with contextlib.suppress(PlaywrightError):
                await page.context.close()
        await browser.close()


async def extract_phase(interpreter: RecipeInterpreter) -> AsyncIterator[Event]:
    """The "list" phase: run the interpreter, then OutputAnalyzed and the SessionEnded."""
    yield PhaseStarted(phase="list", detail=interpreter.recipe.name)
    began = time.monotonic()
    run = PhaseRun(interpreter.run(), RunOutcome)
    async for event in run:
        yield event
    outcome = run.outcome
    failure = _failure(outcome)
    summary = (
        f"{len(outcome.items)} items, {outcome.failed} failed, {outcome.commands} commands executed"
    )
    yield PhaseFinished(
        phase="list", ok=failure is None, duration=time.monotonic() - began, summary=summary
    )
    if failure is not None:
        yield failure
    yield OutputAnalyzed(analysis=analyze_output(outcome.items))
    if failure is not None and failure.kind == "RecipeFailed" and outcome.items:
        kept = f"{len(outcome.items)} items kept; {failure.message}"
        yield SessionEnded(status="partial", stopped_reason="error", summary=kept)
    elif failure is not None:
        yield SessionEnded(status="failed", stopped_reason="error", summary=failure.message)
    else:
        yield SessionEnded(
            status="completed", stopped_reason=outcome.stopped_reason, summary=summary
        )


def _failure(outcome: RunOutcome) -> Error | None:
    """The Error a failed run ends with: on which page of the list it happened (past the
    first), or how many items were kept when Chromium went away."""
    failure = outcome.failure
    if failure is None:
        return None
    message = failure.message
    if failure.kind == "BrowserGone":
        message = f"{message}; {len(outcome.items)} items kept"
    elif outcome.pages > 1 and not message.startswith("page "):
        message = f"page {outcome.pages}: {message}"
    return Error(message=message, kind=failure.kind)
