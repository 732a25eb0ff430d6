"""Sampling settings as a user gives them: flags on `tui-agent code`, the config file for
`tui-agent task`; each model request carries them and each recorded call says them; an
Ollama model also gets its context window. A real process, the scripted model (OpenAI's API
or Ollama's) through litellm, a real sandbox, real SQLite."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from support.requirements import sandbox_backend
from support.scripted_model import ScriptedModel, action_reply, text
from support.scripted_ollama import ScriptedOllama

MODEL = "openai/gpt-4o-mini"
KEYS = ("temperature", "max_tokens", "top_p")
DROPPED = ("TUI_AGENT_MODEL", "TUI_AGENT_API_BASE", "TUI_AGENT_SANDBOX", "TUI_AGENT_DB")


def tui_agent(tmp_path: Path, *args: str, config: str = "") -> subprocess.CompletedProcess[str]:
    dropped = DROPPED + tuple(f"TUI_AGENT_{key.upper()}" for key in KEYS)
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    config_file = tmp_path / "config.toml"
    config_file.write_text(config)
    env["TUI_AGENT_CONFIG_FILE"] = str(config_file)
    env["TUI_AGENT_WORKSPACE"] = str(tmp_path / "workspace")
    return subprocess.run(
        [sys.executable, "-m", "tui_agent", "--db", str(tmp_path / "s.db"), *args],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
    )


def recorded_calls(stdout: str) -> list[dict]:
    events = [json.loads(line) for line in stdout.splitlines()]
    return [event for event in events if event["type"] == "llm_call"]


def sent(server: ScriptedModel) -> list[dict]:
    return [{k: r.body[k] for k in KEYS if k in r.body} for r in server.requests]


def test_code_flags_reach_every_request_and_every_recorded_call(tmp_path):
    replies = [
        action_reply("compute", "execute_code", code="print(6 * 7)"),
        action_reply("done", "provide_answer", final_answer="42"),
    ]
    with ScriptedModel(replies) as server:
        result = tui_agent(
            tmp_path,
            "code", "What is 6 times 7?",
            "--model", MODEL, "--api-base", server.api_base,
            "--sandbox", sandbox_backend(),
            "--temperature", "0.2", "--max-tokens", "300", "--top-p", "0.9",
            "--json",
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    given = {"temperature": 0.2, "max_tokens": 300, "top_p": 0.9}
    assert sent(server) == [given, given]
    calls = recorded_calls(result.stdout)
    assert [call["sampling"] for call in calls] == [given, given]


def test_task_takes_sampling_from_the_config_file_and_sends_nothing_unset(tmp_path):
    code = "```python\n# STAGE: TASK\ncontext['double'] = context['n'] * 2\n```"
    verdict = json.dumps({"valid": True, "reason": "doubled"})
    context = tmp_path / "ctx.json"
    context.write_text(json.dumps({"n": 21}))
    with ScriptedModel([text(code), text(verdict)]) as server:
        result = tui_agent(
            tmp_path,
            "task", "Double n",
            "--context", str(context),
            "--model", MODEL, "--api-base", server.api_base,
            "--sandbox", sandbox_backend(), "--no-cache",
            "--json",
            config="temperature = 0\nmax_tokens = 256\n",
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    given = {"temperature": 0.0, "max_tokens": 256}
    assert sent(server) == [given, given]  # the generator and the validator; no top_p
    assert [call["sampling"] for call in recorded_calls(result.stdout)] == [given, given]


def test_a_bad_temperature_is_one_line_naming_its_flag(tmp_path):
    result = tui_agent(
        tmp_path, "code", "x", "--model", MODEL, "--temperature", "-1", "--sandbox", "docker"
    )
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert "--temperature" in lines[0] and "0 or more" in lines[0]


def test_an_ollama_code_session_sends_its_context_window_and_sampling(tmp_path):
    replies = [
        action_reply("compute", "execute_code", code="print(6 * 7)"),
        action_reply("done", "provide_answer", final_answer="42"),
    ]
    with ScriptedOllama(replies) as server:
        result = tui_agent(
            tmp_path,
            "code", "What is 6 times 7?",
            "--model", server.model("qwen2.5-coder"), "--api-base", server.api_base,
            "--sandbox", sandbox_backend(),
            "--context-tokens", "6000", "--temperature", "0.1",
            "--json",
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    options = [request.body["options"] for request in server.requests]
    assert [(o["num_ctx"], o["temperature"]) for o in options] == [(6000, 0.1), (6000, 0.1)]
    ended = json.loads(result.stdout.splitlines()[-1])
    assert ended["type"] == "session_ended" and ended["status"] == "completed"
