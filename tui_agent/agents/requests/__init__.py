"""A session as data: one typed request per kind, its fields declared once.

Each kind's fields carry their type, bounds, choices and default, and an `Option` saying how
the CLI's flags and the TUI's form fields show them (both are derived from it: see
`cli/request_options.py` and `tui/request_form.py`). A request is frozen, plain JSON
data (`to_json` / `request_from_json` give it back equal), so it is stored with the session
(`SessionStarted.request`), run again (`tui-agent rerun`) and sent to other processes.

Every problem with a request is one `RequestError` naming its field: `parse_request` turns
pydantic's errors into one, `request_from_inputs` also reads the files a front end was given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, TypeVar

from pydantic import Field, ValidationError
from pydantic_core import ErrorDetails

from tui_agent.agents.requests.base import (
    Option,
    RequestBase,
    RequestError,
    choices_of,
    field_options,
    field_problem,
)
from tui_agent.agents.requests.code import CodeRequest
from tui_agent.agents.requests.exec import ExecRequest
from tui_agent.agents.requests.readers import decode_literal, read
from tui_agent.agents.requests.refine import RefineRequest
from tui_agent.agents.requests.scrape import RecipeRunRequest, ScrapeRequest
from tui_agent.agents.requests.task import NodeRequest, TaskRequest, WorkflowRequest
from tui_agent.agents.requests.toolcode import ToolcodeRequest

Request = Annotated[
    CodeRequest
    | TaskRequest
    | WorkflowRequest
    | ToolcodeRequest
    | ExecRequest
    | ScrapeRequest
    | RecipeRunRequest
    | RefineRequest,
    Field(discriminator="kind"),
]
REQUEST_CLASSES: dict[str, type[RequestBase]] = {
    cls.model_fields["kind"].default: cls
    for cls in (
        CodeRequest,
        TaskRequest,
        WorkflowRequest,
        ToolcodeRequest,
        ExecRequest,
        ScrapeRequest,
        RecipeRunRequest,
        RefineRequest,
    )
}
"""Every kind of request by its `kind`."""
R = TypeVar("R", bound=RequestBase)
_NUMBER_ERRORS = {"int_parsing", "int_type", "int_from_float", "float_parsing", "float_type"}
_BOUND_ERRORS = {"greater_than", "greater_than_equal", "less_than", "less_than_equal"}


def parse_request(cls: type[R], data: Mapping[str, Any]) -> R:
    """A `cls` request from plain data; a RequestError names the field of the first problem."""
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        raise _request_error(cls, exc.errors(include_url=False)[0]) from None


def request_from_json(data: Any) -> RequestBase:
    """The request of whichever kind `data` (a request's `to_json`) says it is."""
    kind = data.get("kind") if isinstance(data, Mapping) else None
    cls = REQUEST_CLASSES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise RequestError("kind", f"{kind!r} is not a kind of session request")
    return parse_request(cls, data)


def request_from_inputs(cls: type[R], inputs: Mapping[str, Any]) -> R:
    """A `cls` request from what a front end was given: each reader field's path is read (and
    kept in its `keeps_path` field; a blank path is no file) and list items are decoded as
    their Option says."""
    data = dict(inputs)
    for name, option in field_options(cls):
        value = data.get(name)
        if option.reader is not None and isinstance(value, str) and not value.strip():
            if cls.model_fields[name].is_required():
                raise RequestError(name, "no file given. Which file? Type its path.")
            del data[name]
        elif option.reader is not None and isinstance(value, str):
            data[name] = read(option.reader, value, name)
            if option.keeps_path is not None:
                data[option.keeps_path] = value
        elif option.items == "json_literal" and isinstance(value, list):
            data[name] = [decode_literal(v) if isinstance(v, str) else v for v in value]
    return parse_request(cls, data)


def _request_error(cls: type[RequestBase], error: ErrorDetails) -> RequestError:
    """One pydantic error as a RequestError in domain words, naming its field."""
    loc = error["loc"]
    if not loc or not isinstance(loc[0], str):
        return RequestError(None, error["msg"])
    name = loc[0]
    kind = error["type"]
    info = cls.model_fields.get(name)
    if info is None:
        return RequestError(name, f"{{{name}}} is not a field of a {cls.__name__}")
    if len(loc) > 1:
        where = ".".join(str(part) for part in loc[1:])
        return RequestError(name, f"{{{name}}} {where}: {error['msg']}")
    choices = ", ".join(map(str, choices_of(info.annotation)))
    problem = field_problem(cls, name)
    if kind == "missing":
        said = f"is required: one of {choices}" if choices else "is required"
    elif kind == "literal_error":
        said = f"must be one of {choices}, not {error['input']!r}"
    elif kind in _BOUND_ERRORS and problem:
        said = problem
    elif kind in _NUMBER_ERRORS:
        said = "must be a whole number" if kind.startswith("int") else "must be a number"
    else:
        said = f"is not usable: {error['msg']}"
    return RequestError(name, f"{{{name}}} {said}")


__all__ = [
    "REQUEST_CLASSES",
    "CodeRequest",
    "ExecRequest",
    "NodeRequest",
    "Option",
    "RecipeRunRequest",
    "RefineRequest",
    "Request",
    "RequestBase",
    "RequestError",
    "ScrapeRequest",
    "TaskRequest",
    "ToolcodeRequest",
    "WorkflowRequest",
    "parse_request",
    "request_from_inputs",
    "request_from_json",
]
