"""A batch as a form gives it (what it runs, its files, the engine), checked into a plan.

`prepare_batch` reads the files (a recipe and its URLs, a task's or a workflow's rows, an eval's
tasks) into a BatchPlan and picks the engine; every problem is one RequestError naming the
input it is about (`source`, `inputs`, `model`, `api_base`, `engine`, `max_in_flight`), so a
form says it under that field. It reads files and loads the recipe checker: call it off the
UI's loop.
`check_model` refuses a model no item could call (the CLI checks its plans with it too).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from tui_agent.agents.requests import (
    CodeRequest,
    RecipeRunRequest,
    RequestBase,
    RequestError,
    TaskRequest,
    WorkflowRequest,
    request_from_inputs,
)
from tui_agent.batch.engines import DaskEngine, Engine, EngineError, engine_for
from tui_agent.batch.plan import (
    BatchKind,
    BatchPlan,
    PlanError,
    eval_plan,
    input_lines,
    recipe_plan,
    row_plan,
)
from tui_agent.batch.runner import BatchOptions
from tui_agent.config import Settings
from tui_agent.llm.errors import LLMError

R = TypeVar("R", bound=RequestBase)
T = TypeVar("T")
EACH_LINE = "(each line's task)"
"""The task of an eval batch's base request: each line of the tasks file sets its own."""
INPUT_OF = {
    "recipe": "source",
    "task": "source",
    "workflow": "source",
    "model": "model",
    "api_base": "api_base",
}
"""The input a base request's field comes from; any other field (the URL, the context) comes
from the listed file (`inputs`)."""
FIELD_WORDS = {"api_base": "API base"}
"""How a problem names a field whose name does not read as words."""
NO_SOURCE = {
    "recipe": "no recipe file given. Which recipe? Type its path.",
    "task": "the task is empty. What should the code do with each row?",
    "workflow": "no workflow file given. Which workflow? Type its path.",
    "eval": "no tasks file given. Which tasks? A JSON lines file, one task a line.",
}
NO_INPUTS = {
    "recipe": "no URLs file given. Which URLs? A file with one URL a line.",
    "task": "no rows file given. Which rows? JSON lines of objects, or a .csv file.",
    "workflow": "no rows file given. Which rows? JSON lines of objects, or a .csv file.",
}


@dataclass(frozen=True)
class BatchInputs:
    """What a form was given to start a batch (text as typed)."""

    of: BatchKind
    source: str = ""
    """The recipe file, the task's prompt, the workflow file or the tasks file."""
    inputs: str = ""
    """The URLs file (recipe) or the rows file (task, workflow); an eval takes none."""
    model: str = ""
    """The model (empty: the configured one); a recipe runs none."""
    api_base: str = ""
    """The model's server (empty: the configured one)."""
    engine: str = "local"
    max_in_flight: int | None = None


@dataclass(frozen=True)
class BatchStart:
    """A batch ready to run: its plan, the engine it runs on and how."""

    plan: BatchPlan
    engine: Engine
    options: BatchOptions


def prepare_batch(given: BatchInputs, settings: Settings) -> BatchStart:
    """The batch `given` describes, every file read and every item checked."""
    if given.max_in_flight is not None and given.max_in_flight < 1:
        raise RequestError("max_in_flight", "must be at least 1")
    try:
        engine = engine_for(given.engine or "local")
    except EngineError as exc:
        raise RequestError("engine", str(exc)) from None
    plan = _plan(given, settings)
    check_model(plan, settings, engine)
    return BatchStart(plan, engine, BatchOptions(given.max_in_flight))


def check_model(plan: BatchPlan, settings: Settings, engine: Engine) -> None:
    """Refuse, before anything runs, the model of a batch that calls one (task, workflow,
    eval) when litellm cannot tell its provider or, for items run on this machine, the key
    it needs is not set: one RequestError about `model`, not one failure per item. (Workers
    a scheduler elsewhere reaches read their own keys.)"""
    from tui_agent.llm.provider import (
        missing_key_message,
        missing_key_variables,
        resolve_provider,
    )

    model = plan.base.get("model") or settings.model
    if plan.of == "recipe" or not model:
        return
    api_base = plan.base.get("api_base") or settings.api_base
    here = not (isinstance(engine, DaskEngine) and engine.address is not None)
    try:
        resolve_provider(model, api_base)
        missing = missing_key_variables(model, api_base) if here and not api_base else []
    except LLMError as exc:
        raise RequestError("model", str(exc)) from None
    if missing:
        raise RequestError("model", missing_key_message(model, missing))


def _plan(given: BatchInputs, settings: Settings) -> BatchPlan:
    source = given.source.strip()
    if not source:
        raise RequestError("source", NO_SOURCE[given.of])
    model = {"model": given.model.strip()} if given.model.strip() else {}
    if given.api_base.strip():
        model["api_base"] = given.api_base.strip()
    if given.of == "eval":
        if not (model or settings.model):
            raise RequestError("model", "an eval batch needs a model", unset=True)
        code = _base(CodeRequest, {"task": EACH_LINE, **model})
        return _listed("source", lambda: eval_plan(code, Path(source).expanduser()))
    if not given.inputs.strip():
        raise RequestError("inputs", NO_INPUTS[given.of])
    listed = Path(given.inputs.strip()).expanduser()
    if given.of == "recipe":
        first = _listed("inputs", lambda: next(iter(input_lines(listed)), None))
        if first is None:
            raise RequestError("inputs", f"{listed} holds no URLs")
        recipe = _base(RecipeRunRequest, {"recipe": source, "url": first.text})
        allow_file = settings.allow_file_urls
        return _listed("inputs", lambda: recipe_plan(recipe, listed, allow_file=allow_file))
    if given.of == "task":
        task = _base(TaskRequest, {"task": source, **model})
        return _listed("inputs", lambda: row_plan("task", task, listed))
    workflow = _base(WorkflowRequest, {"workflow": source, **model})
    return _listed("inputs", lambda: row_plan("workflow", workflow, listed))


def _base(cls: type[R], data: Mapping[str, Any]) -> R:
    """The batch's base request; a problem with it names the input its field came from."""
    try:
        return request_from_inputs(cls, data)
    except RequestError as exc:
        field = INPUT_OF.get(exc.field or "", "inputs") if exc.field else None
        problem = exc.worded(lambda name: FIELD_WORDS.get(name, name.replace("_", " ")))
        raise RequestError(field, problem, unset=exc.unset) from None


def _listed(field: str, read: Callable[[], T]) -> T:
    """`read()`, a problem with the file it reads said as one about input `field`."""
    try:
        return read()
    except PlanError as exc:
        raise RequestError(field, str(exc)) from None
