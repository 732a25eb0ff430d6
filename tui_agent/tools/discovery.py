"""What `discover_code_files` tells the model: each package, its functions with signatures and
descriptions, and the TypedDicts they take."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from tui_agent.tools.generate import Generated
from tui_agent.tools.wrappers import FunctionSpec

DESCRIPTION_LIMIT = 400


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= DESCRIPTION_LIMIT else text[: DESCRIPTION_LIMIT - 1] + "…"


def _function(spec: FunctionSpec) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "function": spec.name,
        "signature": spec.signature(),
        "description": _short(spec.tool.description),
    }
    if spec.definitions:
        entry["types"] = [_typed_dict(text) for text in spec.definitions]
    return entry


def _typed_dict(source: str) -> str:
    """`Name = {'key': type, ...}` from a generated TypedDict definition."""
    name = source.split("=", 1)[0].strip()
    fields = re.findall(r"^\s+('[^']*'|\"[^\"]*\"): (.+),$", source, flags=re.MULTILINE)
    body = ", ".join(f"{key}: {value}" for key, value in fields)
    return f"{name} = TypedDict({{{body}}})"


def _usage(packages: Sequence[Generated], workspace: Generated) -> str:
    """How to call a function, with the first real one."""
    package = next((p for p in packages if p.functions), workspace)
    spec = package.functions[0]
    arguments = ", ".join(f"{p.name}=..." for p in spec.parameters if p.default is None)
    return (
        f"from {package.server.package} import {spec.name}  # <server>_tools, one function "
        "per tool\n"
        f"output = {spec.name}({arguments})  # keyword arguments; returns str\n"
        "print(output)\n"
        "if output.startswith('Error:'): ...  # a tool error; ToolCallFailed: no answer"
    )


def discovery(packages: Sequence[Generated], workspace: Generated) -> dict[str, Any]:
    """The JSON object `discover_code_files` answers with."""
    return {
        "servers": [
            {
                "name": package.server.name,
                "package": package.server.package,
                "description": _short(package.server.description),
                "tools": [_function(spec) for spec in package.functions],
            }
            for package in packages
        ],
        "workspace_tools": {
            "package": workspace.server.package,
            "tools": [_function(spec) for spec in workspace.functions],
        },
        "usage": _usage(packages, workspace),
    }


def discovery_text(packages: Sequence[Generated], workspace: Generated) -> str:
    return json.dumps(discovery(packages, workspace), indent=1, ensure_ascii=False)
