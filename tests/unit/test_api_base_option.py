"""The model server is chosen wherever a model is: `--api-base` before any command (the TUI's
sessions) and after each, `TUI_AGENT_API_BASE`, the requests; an address that is not an
http(s) URL is refused in words naming where it came from."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from tui_agent.agents.launch.rerun import rerun_request
from tui_agent.agents.requests import CodeRequest, RequestError, TaskRequest, request_from_inputs
from tui_agent.cli import build_parser, main
from tui_agent.cli.request_options import shell_line
from tui_agent.cli.sessions import cmd_home
from tui_agent.config import load_settings
from tui_agent.events import SessionStarted

SERVER = "http://127.0.0.1:8765/v1"


def commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Every (sub)command's parser by its path ("", "sessions list", ...)."""
    found = {"": parser}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found |= {f"{name} {k}".strip(): p for k, p in commands(sub).items()}
    return found


def flags(parser: argparse.ArgumentParser) -> set[str]:
    return {flag for action in parser._actions for flag in action.option_strings}


def test_before_any_command_it_opens_the_tui_with_that_server():
    args = build_parser().parse_args(["--api-base", SERVER, "--model", "openai/local"])
    assert args.handler is cmd_home
    settings = load_settings(api_base=args.api_base, model=args.model)
    assert settings.api_base == SERVER  # what the TUI's form and its sessions start from


def test_every_command_that_takes_a_model_takes_a_server():
    found = commands(build_parser())
    with_model = [name for name, parser in found.items() if "--model" in flags(parser)]
    assert {"", "code", "task", "toolcode", "scrape", "rerun", "refine"} <= set(with_model)
    assert [name for name in with_model if "--api-base" not in flags(found[name])] == []


def test_given_after_the_command_it_goes_into_the_request():
    args = build_parser().parse_args(["--api-base", SERVER, "code", "add 2 and 2"])
    assert args.api_base == SERVER
    args = build_parser().parse_args(["code", "--api-base", SERVER, "add 2 and 2"])
    assert args.api_base == SERVER


def test_a_server_that_is_not_an_http_url_is_refused_where_it_was_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
):
    db = str(tmp_path / "s.db")
    assert main(["--db", db, "--api-base", "ftp://127.0.0.1", "sessions", "list"]) == 1
    said = capsys.readouterr().err
    assert said == (
        "tui-agent: --api-base: must be an http:// or https:// URL, e.g. http://localhost:11434\n"
    )
    monkeypatch.setenv("TUI_AGENT_API_BASE", "localhost:11434")
    assert main(["--db", db, "sessions", "list"]) == 1
    assert "setting 'api_base' (TUI_AGENT_API_BASE or " in capsys.readouterr().err
    monkeypatch.setenv("TUI_AGENT_API_BASE", SERVER)
    assert main(["--db", db, "sessions", "list"]) == 0


@pytest.mark.parametrize("given", ["ftp://x", "127.0.0.1:8000", "http://", "http://a b", "x"])
def test_a_request_refuses_an_address_that_is_not_an_http_url(given: str):
    with pytest.raises(RequestError) as refused:
        request_from_inputs(CodeRequest, {"task": "t", "api_base": given})
    assert refused.value.field == "api_base"
    assert shell_line(refused.value, CodeRequest) == (
        "--api-base must be an http:// or https:// URL, e.g. http://localhost:11434"
    )


def test_an_empty_address_is_the_providers_own_server():
    request = request_from_inputs(TaskRequest, {"task": "t", "api_base": ""})
    assert request.resolved(load_settings(api_base=SERVER)).api_base == ""  # not the setting's
    assert (
        request_from_inputs(TaskRequest, {"task": "t"})
        .resolved(load_settings(api_base=SERVER))
        .api_base
        == SERVER
    )


def test_a_rerun_takes_another_server():
    request = CodeRequest(task="t", model="openai/local", api_base=SERVER)
    started = SessionStarted(kind="code", title="t", request=request.to_json())
    other = "https://models.example.com/v1"
    assert rerun_request(started, api_base=other).api_base == other  # type: ignore[attr-defined]
    assert rerun_request(started).api_base == SERVER  # type: ignore[attr-defined]
