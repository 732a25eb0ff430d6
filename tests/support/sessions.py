"""Sessions recorded for real and refined, for the tests that need one.

Settings that reach a scripted model, an exec or recipe session recorded into SQLite, a
refinement run into a stored session, and a copy of a recorded database for one test.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from support.scripted_model import ScriptedModel
from tui_agent.agents.execute import exec_started, run_exec
from tui_agent.agents.launch import Launch, prepare
from tui_agent.agents.recipe_run import recipe_started, run_recipe
from tui_agent.agents.refine import Refinement, start_refinement
from tui_agent.agents.requests import RequestBase, request_from_inputs
from tui_agent.analysis.shapes import FieldFeedback
from tui_agent.config import Settings
from tui_agent.events import Event, FeedbackSubmitted
from tui_agent.recorder import SessionRecorder
from tui_agent.sandbox.choose import open_sandbox
from tui_agent.sandbox.wire import ExecuteRequest
from tui_agent.session import SessionState
from tui_agent.store import Store
from tui_agent.web.recipe import RecipeFile

MODEL = "gpt-4o-mini"
"""Served by the scripted server; a name litellm has a price for, so budgets can be kept."""


def scripted_settings(
    server: ScriptedModel, tmp_path: Path, sandbox: str, **extra: Any
) -> Settings:
    """Settings reaching `server` as MODEL, with `sandbox` and a store in `tmp_path`."""
    return Settings(
        model=server.model(MODEL),
        api_base=server.api_base,
        db=tmp_path / "sessions.db",
        sandbox=sandbox,  # type: ignore[arg-type]
        workspace=tmp_path / "workspace",
        **extra,
    )


def launched(cls: type[RequestBase], settings: Settings, **inputs: Any) -> Launch:
    """A session of a `cls` request of `inputs` (as a front end gives them: a reader field
    names its file), checked and prepared on `settings` the way every front end does."""
    return prepare(request_from_inputs(cls, inputs), settings)


async def record_exec(
    settings: Settings, request: ExecuteRequest, title: str, **options: Any
) -> SessionState:
    """An exec session of `request` (`options`: exec_started's), run in the settings'
    sandbox and recorded in their database."""
    started = exec_started(request, title, **options)
    async with await Store.open(settings.db) as store:
        network = bool(options.get("network"))
        sandbox = open_sandbox(settings.sandbox, workspace=settings.workspace, network=network)
        async with sandbox:
            return await SessionRecorder(store).run(started, run_exec(sandbox, request))


async def record_recipe(store: Store, recipe: RecipeFile, url: str, max_items: int) -> SessionState:
    """A scrape session of `recipe` on `url`, run in Chromium and recorded in `store`."""
    started = recipe_started(recipe, url, max_items)
    agent = run_recipe(recipe, url, max_items=max_items)
    return await SessionRecorder(store).run(started, agent)


async def refine_stored(
    store: Store, session_id: str, feedback: list[FieldFeedback], **options: Any
) -> tuple[SessionRecorder, Refinement, list[Event]]:
    """Record the feedback and run a refinement (`options`: start_refinement's) into the
    stored session, as the CLI does: the recorder, the refinement and its events as stored."""
    recorder = await SessionRecorder.resume(store, session_id)
    await recorder.emit(FeedbackSubmitted(feedback=feedback))
    refinement = start_refinement(recorder.state, feedback, **options)
    events = [await recorder.emit(event) async for event in refinement.run()]
    return recorder, refinement, events


def copy_database(db: Path, folder: Path) -> Path:
    """A copy of the SQLite file `db` (with its -wal and -shm files) in `folder`."""
    for path in db.parent.glob(db.name + "*"):
        shutil.copy(path, folder / path.name)
    return folder / db.name
