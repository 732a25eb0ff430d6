"""A code session held open between turns, in a process of its own, for a test to kill.

Usage: conversation_process.py DB API_BASE MODEL SANDBOX WORKSPACE TASK. Records the session
through the launch path with a Conversation, prints `SESSION <id>` once started and `WAITING`
when its first turn has ended, then waits for a message that never comes (the test kills it).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tui_agent.agents.launch import prepare
from tui_agent.agents.requests import CodeRequest
from tui_agent.agents.step_loop import Conversation
from tui_agent.config import Settings
from tui_agent.events import Event, TurnEnded
from tui_agent.recorder import SessionRecorder
from tui_agent.session import SessionState
from tui_agent.store import Store


async def main(db: str, api_base: str, model: str, sandbox: str, workspace: str, task: str) -> None:
    settings = Settings(model=model, api_base=api_base, db=Path(db), sandbox=sandbox)  # type: ignore[arg-type]
    request = CodeRequest(task=task, workspace=Path(workspace))
    launch = prepare(request, settings, conversation=Conversation())
    print(f"SESSION {launch.session_id}", flush=True)

    def heard(event: Event, _state: SessionState) -> None:
        if isinstance(event, TurnEnded):
            print("WAITING", flush=True)

    async with await Store.open(settings.db) as store:
        await SessionRecorder(store, launch.session_id, [heard]).run(launch.started, launch.events)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:7]))
