"""What a server offers: its tools (name, description, input schema) and their hash."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

GENERATOR_VERSION = 1
"""Bumped when the generated code changes shape, so every package is written anew."""


@dataclass(frozen=True)
class ToolInfo:
    """One tool as its server lists it."""

    name: str
    description: str = ""
    input_schema: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ServerTools:
    """The tools of one server, under the stem its package is named after."""

    name: str
    stem: str
    tools: tuple[ToolInfo, ...]
    description: str = ""

    @property
    def package(self) -> str:
        return f"{self.stem}_tools"

    def digest(self) -> str:
        """Hash of the tool list (names, descriptions, schemas) and the generator's version:
        the package is written again only when it changes."""
        listing = [
            {"name": t.name, "description": t.description, "schema": t.input_schema}
            for t in sorted(self.tools, key=lambda t: t.name)
        ]
        text = json.dumps(
            {"generator": GENERATOR_VERSION, "stem": self.stem, "tools": listing},
            sort_keys=True,
            separators=(",", ":"),
        )
        return hashlib.sha256(text.encode()).hexdigest()


def _path_schema(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


WORKSPACE_TOOLS = ServerTools(
    name="workspace",
    stem="workspace",
    description="Files in the workspace, through the host's folder guards.",
    tools=(
        ToolInfo(
            "read_workspace_file",
            "Read a text file of the workspace. Paths are relative to the workspace "
            "(data/config.json); absolute paths and `..` are refused.",
            {
                "type": "object",
                "properties": {"filepath": _path_schema("the file, relative to the workspace")},
                "required": ["filepath"],
            },
        ),
        ToolInfo(
            "update_workspace_file",
            "Create or replace a text file of the workspace (folders are created as needed); "
            "returns a line saying what was written. Paths are relative to the workspace.",
            {
                "type": "object",
                "properties": {
                    "filepath": _path_schema("the file, relative to the workspace"),
                    "content": {"type": "string", "description": "the whole new text"},
                },
                "required": ["filepath", "content"],
            },
        ),
        ToolInfo(
            "list_workspace",
            "List a folder of the workspace, one entry a line: `name/` for a folder, "
            "`name (N bytes)` for a file.",
            {
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "the folder, relative to the workspace",
                        "default": ".",
                    }
                },
            },
        ),
    ),
)
"""The workspace tools, described like any server's so the same generator writes them."""
