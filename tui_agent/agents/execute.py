"""The `exec` agent: run one program in a sandbox and record its logs, result and items.

The program gets its `context` as given; the secrets in it (`tui_agent.redaction`) are masked
in everything recorded or shown (the SessionStarted's copy of the context included, so a
re-run from the store gets placeholders, not the secrets)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from tui_agent.agents.streaming import StepRun
from tui_agent.agents.workspace_files import with_written_files, workspace_of
from tui_agent.analysis.shapes import AgentType
from tui_agent.events import (
    CodeProposed,
    Event,
    ExecutionFinished,
    ItemsExtracted,
    OutputAnalyzed,
    PhaseFinished,
    PhaseStarted,
    SessionEnded,
    SessionStarted,
)
from tui_agent.redaction import SecretMask, masked_start
from tui_agent.sandbox.base import Sandbox
from tui_agent.sandbox.wire import ExecuteRequest
from tui_agent.web.browser import Browser


def exec_started(
    request: ExecuteRequest,
    title: str,
    model: str | None = None,
    agent_type: AgentType | None = None,
    network: bool = False,
    stored: dict[str, Any] | None = None,
) -> SessionStarted:
    """The SessionStarted of an exec session, with what is needed to run it again (its
    refinements run with the same network access) and the `stored` request it started from.

    The agent type defaults to "scraper" when the code gets a page (url or html), else
    "generic". Secrets in the context are masked (the request's copy too)."""
    test_context: dict[str, Any] = {"args": request.args}
    if request.context is not None:
        test_context["context"] = request.context
    if request.url:
        test_context["url"] = request.url
    if request.html is not None:
        test_context["html"] = request.html
    if agent_type is None:
        agent_type = "scraper" if request.url or request.html is not None else "generic"
    started = SessionStarted(
        kind="exec",
        title=title,
        model=model,
        agent_type=agent_type,
        params={
            "timeout": request.timeout,
            "entrypoint": request.entrypoint,
            "network": network,
        },
        test_context=test_context,
        request=stored,
    )
    return masked_start(started, SecretMask.of(request.context))


async def run_exec(
    sandbox: Sandbox, request: ExecuteRequest, browser: Browser | None = None
) -> AsyncGenerator[Event, None]:
    """Events of one run: (page load,) code, execution, items + analysis, end.

    With a `url` and no `html`, the page is rendered in Chromium on the host (`browser`, not
    yet started: a default one if None) and its HTML is passed in, so the sandbox itself
    needs no network.
    """
    if request.url and request.html is None:
        yield PhaseStarted(phase="load page", detail=request.url)
        began = time.monotonic()
        async with browser or Browser() as active:
            page = await active.render(request.url, timeout=request.timeout)
        request = request.model_copy(update={"html": page.html, "url": page.url})
        yield PhaseFinished(
            phase="load page",
            duration=time.monotonic() - began,
            summary=f"{page.title or page.url} ({len(page.html):,} characters of HTML)",
        )
    yield CodeProposed(step=1, code=request.code)
    run = StepRun(sandbox, request, step=1)
    async for event in with_written_files(run.events(), workspace_of(sandbox)):
        yield event
    result = run.result
    assert result is not None
    if result.success and result.result is not None:
        yield ItemsExtracted(step=1, items=result.items)
        if result.analysis is not None:
            yield OutputAnalyzed(step=1, analysis=result.analysis)
    if result.success:
        yield SessionEnded(status="completed")
    else:
        reason = result.killed_reason or (result.error.type if result.error else "error")
        yield SessionEnded(status="failed", stopped_reason=reason)


async def run_sandboxed(
    sandbox: Sandbox, request: ExecuteRequest, browser: Browser | None = None
) -> AsyncIterator[Event]:
    """`run_exec` in `sandbox` (started here, closed however the run ends), every event
    masked by the secrets of the context and of what the run wrote."""
    secrets = SecretMask.of(request.context)
    async with sandbox, contextlib.aclosing(run_exec(sandbox, request, browser)) as events:
        async for event in events:
            if isinstance(event, ExecutionFinished):
                secrets.learn(event.context)
            yield secrets.masked_event(event)
