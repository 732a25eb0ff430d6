"""Settings precedence: flags > TUI_AGENT_* environment > config.toml > defaults."""

from pathlib import Path

import pytest

from tui_agent.config import ConfigError, load_settings


@pytest.fixture
def config_file(tmp_path, monkeypatch):
    path = tmp_path / "config.toml"
    monkeypatch.setenv("TUI_AGENT_CONFIG_FILE", str(path))
    for name in ("TUI_AGENT_MODEL", "TUI_AGENT_DB", "TUI_AGENT_SANDBOX"):
        monkeypatch.delenv(name, raising=False)
    return path


def test_defaults_without_a_file(config_file):
    settings = load_settings()
    assert settings.model is None and settings.sandbox == "auto"
    assert settings.db.name == "sessions.db"


def test_file_then_env_then_flags(config_file, monkeypatch, tmp_path):
    config_file.write_text('model = "from-file"\nsandbox = "bubblewrap"\ndb = "/tmp/f.db"\n')
    assert load_settings().model == "from-file"
    assert load_settings().db == Path("/tmp/f.db")
    monkeypatch.setenv("TUI_AGENT_MODEL", "from-env")
    settings = load_settings()
    assert settings.model == "from-env" and settings.sandbox == "bubblewrap"
    assert load_settings(model="from-flag", db=tmp_path / "x.db").model == "from-flag"


def test_broken_file_is_one_clear_error(config_file):
    config_file.write_text("model = [unclosed\n")
    with pytest.raises(ConfigError, match=r"config file .*config.toml cannot be read"):
        load_settings()


def test_bad_value_names_the_setting(config_file):
    config_file.write_text('sandbox = "vm"\n')
    with pytest.raises(ConfigError, match="'sandbox'"):
        load_settings()
