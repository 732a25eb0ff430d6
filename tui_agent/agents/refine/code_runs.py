"""Running a session's code again: the version in use, its test context and the earlier steps
it relies on, and the re-run of an accepted version."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from tui_agent.agents.browsing import browser_for
from tui_agent.agents.refine.errors import RefinementError
from tui_agent.agents.refine.run_settings import RunSettings
from tui_agent.agents.streaming import StepRun
from tui_agent.analysis import analyze_output
from tui_agent.analysis.shapes import OutputAnalysis
from tui_agent.config import Settings
from tui_agent.events import (
    CodeProposed,
    Event,
    ItemsExtracted,
    Log,
    OutputAnalyzed,
    PhaseFinished,
    PhaseStarted,
)
from tui_agent.sandbox.base import Sandbox, SandboxError
from tui_agent.sandbox.choose import open_sandbox
from tui_agent.sandbox.wire import ExecuteRequest, ExecuteResult, items_of
from tui_agent.session import SessionState
from tui_agent.session_questions import code_in_force
from tui_agent.web.browser import BrowserError

DEFAULT_TIMEOUT = 30.0


@dataclass(frozen=True)
class CodeSource:
    """The code in use and how to run it again: its items, its analysis and the code of the
    earlier steps whose globals it may rely on (CodeAct sessions)."""

    code: str
    items: list[Any]
    analysis: OutputAnalysis | None
    prelude: list[str]
    entrypoint: str
    timeout: float


def code_source(state: SessionState) -> CodeSource:
    """The session's code in force (`code_in_force`); RefinementError when no code of it
    produced items."""
    in_force = code_in_force(state)
    if in_force is None:
        raise RefinementError(
            f"session {state.session_id} has no code that produced items; nothing to refine"
        )
    code, origin = in_force.code, in_force.step
    items = state.items or _step_items(state, origin)
    analysis = state.analysis if state.items else None
    if analysis is None and items:
        analysis = analyze_output(items)
    prelude = [
        step.code
        for index, step in sorted(state.steps.items())
        if index < origin and step.code and step.execution and step.execution.success
    ]
    params = state.params
    return CodeSource(
        code=code,
        items=list(items),
        analysis=analysis,
        prelude=prelude,
        entrypoint=params.get("entrypoint") or "main",
        timeout=float(params.get("timeout") or DEFAULT_TIMEOUT),
    )


def _step_items(state: SessionState, index: int) -> list[Any]:
    step = state.steps.get(index)
    execution = step.execution if step is not None else None
    return items_of(execution.result) if execution is not None else []


def run_context(state: SessionState, run: RunSettings) -> dict[str, Any]:
    """The session's test context with the URL as checked (`run.url`) in place of its own."""
    context = dict(state.test_context)
    context.pop("url", None)
    if run.url is not None:
        context["url"] = run.url
    return context


def execute_request(source: CodeSource, context: dict[str, Any], code: str) -> ExecuteRequest:
    """`code` as a request with the session's test context (args, context, url, html)."""
    return ExecuteRequest(
        code=code,
        args=list(context.get("args") or []),
        context=context.get("context"),
        url=context.get("url"),
        html=context.get("html"),
        entrypoint=source.entrypoint,
        timeout=source.timeout,
    )


async def load_page(
    context: dict[str, Any], settings: Settings, timeout: float
) -> AsyncIterator[Event]:
    """When the context has a url and no html, render it in Chromium and put the html in
    `context` (as `exec --url` did), with a "load page" phase."""
    url = context.get("url")
    if not url or context.get("html"):
        return
    yield PhaseStarted(phase="load page", detail=url)
    began = time.monotonic()
    async with browser_for(settings, url) as browser:
        page = await browser.render(url, timeout=timeout)
    context["html"] = page.html
    yield PhaseFinished(
        phase="load page",
        duration=time.monotonic() - began,
        summary=f"{page.title or page.url} ({len(page.html):,} characters of HTML)",
    )


async def run_prelude(sandbox: Sandbox, source: CodeSource) -> str | None:
    """Run the earlier steps' code in a fresh interpreter; the first failure, if any."""
    await sandbox.reset()
    for code in source.prelude:
        result = await sandbox.execute(ExecuteRequest(code=code, timeout=source.timeout))
        if not result.success:
            return failure(result)
    return None


def failure(result: ExecuteResult) -> str:
    """One line saying why a run failed."""
    if result.error is not None:
        return f"{result.error.type}: {result.error.message}"
    return result.killed_reason or "it failed"


async def rerun_code(
    state: SessionState, code: str, *, settings: Settings, run: RunSettings
) -> AsyncIterator[Event]:
    """Run an accepted version with the test context as a new step, with the page and network
    of `run`; its items replace the session's (ItemsExtracted replace=True, OutputAnalyzed),
    or a Log says why they did not."""
    source = code_source(state)
    context = run_context(state, run)
    step = max(state.steps, default=0) + 1
    try:
        async for event in load_page(context, settings, source.timeout):
            yield event
        sandbox = open_sandbox(settings.sandbox, workspace=settings.workspace, network=run.network)
        async with sandbox:
            problem = await run_prelude(sandbox, source) if source.prelude else None
            if problem:
                yield Log(level="warning", message=f"an earlier step failed again: {problem}")
            yield CodeProposed(step=step, code=code)
            step_run = StepRun(sandbox, execute_request(source, context, code), step)
            async for event in step_run.events():
                yield event
    except (SandboxError, BrowserError) as exc:
        yield Log(level="error", message=f"the accepted version could not be re-run: {exc}")
        return
    result = step_run.result
    assert result is not None
    analysis = result.analysis or analyze_output(result.result)
    if not result.success or not analysis.is_structured:
        why = failure(result) if not result.success else "its output is not a list of records"
        yield Log(
            level="error",
            message=f"the accepted version failed on re-run ({why}); the items are unchanged",
        )
        return
    yield ItemsExtracted(step=step, items=result.items, replace=True)
    yield OutputAnalyzed(step=step, analysis=analysis)
