"""Reading workflow files (the format: `tui_agent.agents.requests.workflow`): one line naming
the file and the first problem when one cannot be run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from tui_agent.agents.requests.workflow import Workflow
from tui_agent.errors import UserError


class WorkflowError(UserError):
    """A workflow file that cannot be run (one line naming the file and the problem)."""


def _describe(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "the file"
    message = first["msg"].removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        message = "unknown key (check its spelling)"
    if first["type"] == "literal_error" and first["loc"][-1] == "executor":
        message = f'executor {first.get("input")!r} is not supported; use "cached"'
    return f"{where}: {message}"


def parse_workflow(data: Any, source: str) -> Workflow:
    """A workflow from decoded JSON; WorkflowError names `source` and the first problem."""
    if not isinstance(data, dict):
        raise WorkflowError(f"workflow {source} must be a JSON object with a 'nodes' list")
    try:
        return Workflow.model_validate(data)
    except ValidationError as exc:
        raise WorkflowError(f"workflow {source}: {_describe(exc)}") from None


def load_workflow(path: Path) -> Workflow:
    """The workflow in the JSON file at `path`."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise WorkflowError(f"cannot read workflow {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise WorkflowError(f"workflow {path} is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise WorkflowError(
            f"workflow {path} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    return parse_workflow(data, str(path))
