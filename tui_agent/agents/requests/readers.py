"""From what a front end was given to a request field's value: files read, literals decoded.

The CLI and the form take a path where a request holds what the file says (a program, a JSON
context, a recipe, a workflow); each reader raises a RequestError naming its field.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tui_agent.agents.requests.base import Reader, RequestError


def decode_literal(text: str) -> Any:
    """A JSON literal (5, true, [1]) when `text` is one, else the text itself."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def json_object_text(text: str, source: str, field: str) -> dict[str, Any]:
    """The JSON object `text` holds (`source` says where it came from, in errors)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RequestError(
            field,
            f"{source} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
        ) from None
    if not isinstance(data, dict):
        raise RequestError(field, f"{source} must hold a JSON object, not {type(data).__name__}")
    return data


def _text_file(path: Path, field: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RequestError(field, f"no such file: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RequestError(field, f"cannot read {path}: {exc}") from None


def _json_object_file(path: Path, field: str) -> dict[str, Any]:
    what = f"{field} file"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RequestError(field, f"cannot read {what} {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise RequestError(field, f"{what} {path} is not UTF-8 text") from None
    return json_object_text(text, f"{what} {path}", field)


def _recipe_file(path: Path, field: str) -> dict[str, Any]:
    from tui_agent.web.recipe import RecipeError, load_recipe  # Playwright: only for recipes

    try:
        return load_recipe(path).to_json()
    except RecipeError as exc:
        raise RequestError(field, str(exc)) from None


def _workflow_file(path: Path, field: str) -> dict[str, Any]:
    from tui_agent.agents.task.workflow import WorkflowError, load_workflow

    try:
        return load_workflow(path).model_dump(mode="json")
    except WorkflowError as exc:
        raise RequestError(field, str(exc)) from None


READERS: dict[Reader, Callable[[Path, str], Any]] = {
    "text_file": _text_file,
    "json_object_file": _json_object_file,
    "recipe_file": _recipe_file,
    "workflow_file": _workflow_file,
}


def read(reader: Reader, path: str, field: str) -> Any:
    """What the file at `path` holds, read as `reader` says, for request field `field`."""
    return READERS[reader](Path(path).expanduser(), field)
