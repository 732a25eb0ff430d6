"""Running tui-agent against the real model server of the real-model suite (tests/realmodel)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.reply_recorder import ReplyRecorder

BASE = os.environ.get("TUI_AGENT_TEST_MODEL_BASE", "")
MODEL = os.environ.get("TUI_AGENT_TEST_MODEL", "openai/local")


def tui_agent(
    tmp_path: Path, recorder: ReplyRecorder, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``tui-agent ARGS --model MODEL --api-base PROXY`` as a user would."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TUI_AGENT_")}
    environment.update(
        TUI_AGENT_CONFIG_FILE=str(tmp_path / "none.toml"),
        OPENAI_API_KEY=os.environ.get("OPENAI_API_KEY", "sk-local"),
        COLUMNS="100",
        **(env or {}),
    )
    return subprocess.run(
        [
            *(sys.executable, "-m", "tui_agent", "--db", str(tmp_path / "s.db"), *args),
            *("--model", MODEL, "--api-base", recorder.api_base),
        ],
        capture_output=True,
        text=True,
        timeout=1800,
        env=environment,
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
    )
