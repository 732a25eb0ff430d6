"""The MCP server config file, in the ecosystem's usual shape.

    {"mcpServers": {
        "weather": {"command": "python3", "args": ["weather.py"], "env": {"UNITS": "metric"}},
        "notes": {"url": "http://127.0.0.1:8000/mcp", "headers": {"Authorization": "Bearer x"}}
    }}

A server with a `command` is started and spoken to over its stdin and stdout; one with a `url`
is reached over streamable HTTP. Each server becomes the package `<name>_tools`, its name made a
Python identifier ("google-sheets" -> google_sheets_tools).
"""

from __future__ import annotations

import json
import keyword
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from tui_agent.errors import UserError

WORKSPACE_SERVER = "workspace"
"""The name the workspace tools answer to; no configured server may take it."""


class McpConfigError(UserError):
    """An MCP config file that cannot be used (one line: which file, what is wrong)."""


class StdioServer(BaseModel):
    """A server started as a subprocess, spoken to over its stdin and stdout."""

    model_config = ConfigDict(extra="ignore")

    type: Literal["stdio"] = "stdio"
    command: str = Field(min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None

    def describe(self) -> str:
        return " ".join([self.command, *self.args])


class HttpServer(BaseModel):
    """A server reached over streamable HTTP at `url`."""

    model_config = ConfigDict(extra="ignore")

    type: Literal["http", "streamable-http", "streamableHttp"] = "http"
    url: str
    headers: dict[str, str] = Field(default_factory=dict)

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str) -> str:
        if not re.match(r"^https?://[^/\s]+", url):
            raise ValueError(f"url must start with http:// or https://, not {url!r}")
        return url

    def describe(self) -> str:
        """The URL without any user:password in it (it is shown and recorded)."""
        return re.sub(r"//[^/@\s]*@", "//", self.url)


ServerConfig = StdioServer | HttpServer


@dataclass(frozen=True)
class ServerEntry:
    """One configured server: its name in the file, its package stem and how to reach it."""

    name: str
    stem: str
    """The Python name the server goes by: its package is `<stem>_tools`."""
    config: ServerConfig

    @property
    def package(self) -> str:
        return f"{self.stem}_tools"


@dataclass(frozen=True)
class McpConfig:
    """The servers of one config file, in the file's order."""

    path: Path
    servers: tuple[ServerEntry, ...]

    def select(self, names: list[str] | None) -> McpConfig:
        """Only the servers named (by name or package stem); McpConfigError for any unknown."""
        if not names:
            return self
        known = {entry.name: entry for entry in self.servers}
        known.update({entry.stem: entry for entry in self.servers})
        unknown = [name for name in names if name not in known]
        if unknown:
            listed = ", ".join(entry.name for entry in self.servers)
            raise McpConfigError(
                f"no server {unknown[0]!r} in {self.path} (it has: {listed or 'none'})"
            )
        chosen = {known[name].name for name in names}
        return McpConfig(self.path, tuple(e for e in self.servers if e.name in chosen))


def python_stem(name: str) -> str:
    """A server name as a Python identifier: lower case, runs of other characters as `_`."""
    stem = re.sub(r"[^a-z0-9_]+", "_", name.lower()).strip("_")
    if stem and stem[0].isdigit():
        stem = f"s_{stem}"
    if keyword.iskeyword(stem):
        stem += "_"
    return stem


def load_mcp_config(path: Path) -> McpConfig:
    """The servers of the config file at `path`; McpConfigError says what is wrong."""
    path = Path(path).expanduser()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise McpConfigError(f"MCP config {path} does not exist") from None
    except OSError as exc:
        raise McpConfigError(f"cannot read MCP config {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise McpConfigError(f"MCP config {path} is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise McpConfigError(
            f"MCP config {path} is not valid JSON: {exc.msg} at line {exc.lineno} "
            f"column {exc.colno}"
        ) from None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise McpConfigError(
            f'MCP config {path} needs an "mcpServers" object: '
            '{"mcpServers": {"NAME": {"command": ..., "args": [...]} or {"url": ...}}}'
        )
    if not servers:
        raise McpConfigError(f'MCP config {path} lists no server under "mcpServers"')
    entries: list[ServerEntry] = []
    stems: dict[str, str] = {}
    for name, raw in servers.items():
        config = _server(path, name, raw)
        if config is None:
            continue
        stem = python_stem(name)
        if not stem:
            raise McpConfigError(f"server name {name!r} in {path} has no letters or digits")
        if stem == WORKSPACE_SERVER:
            raise McpConfigError(
                f"server name {name!r} in {path} is taken by the workspace tools; rename it"
            )
        if stem in stems:
            raise McpConfigError(
                f"servers {stems[stem]!r} and {name!r} in {path} would both be {stem}_tools; "
                "rename one"
            )
        stems[stem] = name
        entries.append(ServerEntry(name, stem, config))
    if not entries:
        raise McpConfigError(f"every server in MCP config {path} is disabled")
    return McpConfig(path, tuple(entries))


def _server(path: Path, name: str, raw: Any) -> ServerConfig | None:
    """One server's entry (None when it is marked disabled)."""
    where = f"server {name!r} in {path}"
    if not isinstance(raw, dict):
        raise McpConfigError(f"{where} must be an object with a command or a url")
    if raw.get("disabled") is True:
        return None
    kind = raw.get("type")
    if kind == "sse":
        raise McpConfigError(f"{where} uses the SSE transport; give its streamable HTTP url")
    model: type[StdioServer] | type[HttpServer]
    if "url" in raw and "command" not in raw:
        model = HttpServer
    elif "command" in raw:
        model = StdioServer
    else:
        raise McpConfigError(f'{where} needs a "command" (stdio) or a "url" (streamable HTTP)')
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        raise McpConfigError(f"{where}: {field}: {first['msg']}") from None
