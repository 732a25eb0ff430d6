"""Settings: command-line flags > `TUI_AGENT_*` environment > config.toml > defaults."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import platformdirs
from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from tui_agent.errors import UserError

APP_NAME = "tui-agent"
IsolatedSandboxName = Literal["auto", "docker", "bubblewrap"]
"""The sandbox backends that isolate the code they run ("auto": docker, else bubblewrap)."""
SandboxName = Literal[IsolatedSandboxName, "local"]
ReplyFormChoice = Literal["auto", "json", "fenced"]
"""How the CodeAct model writes its steps (llm/reply_forms.py); auto: by where the model runs."""


def default_db_path() -> Path:
    """`<user data dir>/tui-agent/sessions.db` (e.g. ~/.local/share/tui-agent/sessions.db)."""
    return platformdirs.user_data_path(APP_NAME, appauthor=False) / "sessions.db"


class ConfigError(UserError):
    """A config file or setting that cannot be used (one clear line)."""


def api_base_problem(url: str) -> str | None:
    """What is wrong with `url` as a model server's address (None: an http(s) URL, or empty
    for the provider's own server)."""
    if not url:
        return None
    try:
        parts = urlsplit(url)
        usable = parts.scheme in ("http", "https") and bool(parts.hostname)
        usable = usable and parts.port != 0 and not any(c.isspace() for c in url)
    except ValueError:  # a port that is not a number, or out of range
        usable = False
    return None if usable else "must be an http:// or https:// URL, e.g. http://localhost:11434"


def config_file_path() -> Path:
    """`TUI_AGENT_CONFIG_FILE`, else config.toml in the platform's user config dir."""
    override = os.environ.get("TUI_AGENT_CONFIG_FILE")
    if override:
        return Path(override)
    return Path(platformdirs.user_config_dir(APP_NAME)) / "config.toml"


class _TomlSource(PydanticBaseSettingsSource):
    """Reads the optional TOML config file; a broken file is a ConfigError."""

    def __init__(self, settings_cls: type[BaseSettings]) -> None:
        super().__init__(settings_cls)
        path = config_file_path()
        self._data: dict[str, Any] = {}
        if path.is_file():
            try:
                self._data = tomllib.loads(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
                raise ConfigError(f"config file {path} cannot be read: {exc}") from exc

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return self._data.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return {k: v for k, v in self._data.items() if k in self.settings_cls.model_fields}


class Settings(BaseSettings):
    """Everything configurable; see README for the config file format."""

    model_config = SettingsConfigDict(env_prefix="TUI_AGENT_", extra="ignore")

    model: str | None = None
    db: Path = default_db_path()
    sandbox: SandboxName = "auto"
    workspace: Path | None = None
    """The folder mounted at /workspace, shared by every session; None: a fresh one per
    session (sandbox/folders/workspaces.py)."""
    workspace_quota_mb: int = Field(default=1024, ge=0)
    chromium: str | None = None
    allow_file_urls: bool = False
    """Chromium may load file:// pages, beneath the start page's folder (--allow-file-urls)."""
    browser_sandbox: bool = True
    """Chromium's own sandbox, as `browser_user` when tui-agent runs as root; off only with
    --no-browser-sandbox (TUI_AGENT_BROWSER_SANDBOX=false)."""
    browser_user: str = "nobody"
    """The unprivileged user Chromium runs as when tui-agent runs as root."""
    api_base: str | None = None
    """The model server's URL (None: the provider's own)."""
    context_tokens: int | None = Field(default=None, ge=1)
    """Input tokens the model takes, for servers litellm does not know (a conversation's
    history is fitted into them, and an Ollama model is sent it as `num_ctx`); None:
    litellm's model info."""
    temperature: float | None = Field(default=None, ge=0)
    """The model's sampling temperature; None: the server's default (never sent)."""
    max_tokens: int | None = Field(default=None, ge=1)
    """Tokens per reply at most; None: the server's default."""
    top_p: float | None = Field(default=None, gt=0, le=1)
    """Nucleus sampling's probability mass; None: the server's default."""
    reply_format: ReplyFormChoice = "auto"
    """How the CodeAct model writes its steps: a JSON action, or a Thought: line and a
    ```python block (fenced); auto: fenced for a model served by the user, else JSON."""
    mcp_config: Path | None = None
    """The MCP servers' config file of tool code sessions (TUI_AGENT_MCP_CONFIG)."""

    @field_validator("api_base")
    @classmethod
    def _api_base_url(cls, value: str | None) -> str | None:
        problem = api_base_problem(value or "")
        if problem:
            raise ValueError(problem)
        return value or None

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, _TomlSource(settings_cls))


def load_settings(**overrides: Any) -> Settings:
    """Settings with command-line `overrides` (None values are ignored); a value that cannot
    be used is a ConfigError naming its flag, or its variable and the config file."""
    given = {key: value for key, value in overrides.items() if value is not None}
    try:
        return Settings(**given)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        said = str(first.get("ctx", {}).get("error", "")) or first["msg"]
        if where in given:  # given on the command line
            raise ConfigError(f"--{where.replace('_', '-')}: {said}") from exc
        sources = f"TUI_AGENT_{where.upper()} or {config_file_path()}"
        raise ConfigError(f"setting {where!r} ({sources}): {said}") from exc
