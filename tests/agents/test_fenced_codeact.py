"""CodeAct with a model the user serves: asked for fenced replies (a `Thought:` line and a
```python block, or a `Final answer:` line) without JSON mode, streamed live, written back
in that form, kept on a continued session; a hosted model keeps JSON. Scripted model through
litellm, real sandbox, real SQLite."""

from __future__ import annotations

from typing import Any

import pytest
from codeact_support import record
from support.conversations import User, converse
from support.requirements import require_backend
from support.scripted_model import ScriptedModel, shaped_reply, text
from support.sessions import scripted_settings

from tui_agent.agents.launch import prepare
from tui_agent.agents.launch.resume import continue_session
from tui_agent.agents.requests import CodeRequest
from tui_agent.agents.step_loop import Conversation, FixedChoices
from tui_agent.config import Settings
from tui_agent.events import (
    CodeProposed,
    ExecutionFinished,
    Log,
    SessionStarted,
    Thought,
    ThoughtDelta,
)

DEFINE = "def area(w, h):\n    return w * h\n\nprint(area(3, 4))"


@pytest.fixture
def settings(tmp_path, server: ScriptedModel) -> Settings:
    require_backend("bubblewrap")
    return scripted_settings(server, tmp_path, "bubblewrap")


def fenced(thought: str, code: str | None = None, answer: str | None = None) -> Any:
    action = "execute_code" if code is not None else "provide_answer"
    return shaped_reply("fenced", thought, action, code=code, final_answer=answer)


async def code_session(settings: Settings, **fields: Any):
    launch = prepare(CodeRequest(task="Write area(w, h) and test it.", **fields), settings)
    return await record(settings.db, launch.started, launch.events)


async def test_a_model_at_an_api_base_is_asked_for_fenced_replies_and_read_as_written(
    server: ScriptedModel, settings: Settings
) -> None:
    server.push(
        fenced("Define area, then test it.", code=DEFINE),
        fenced("", answer="area(3, 4) is 12."),
    )
    session = await code_session(settings)
    assert (session.state.status, session.state.final_answer) == ("completed", "area(3, 4) is 12.")
    [started] = session.of(SessionStarted)
    assert started.params["reply_format"] == "fenced"
    system = server.requests[0].messages[0]["content"]
    assert 'a line "Thought: your reasoning", then the complete Python code' in system
    assert "JSON" not in system
    assert all(request.response_format is None for request in server.requests)
    streamed = "".join(e.text for e in session.emitted if isinstance(e, ThoughtDelta))
    assert streamed == "Define area, then test it." == session.of(Thought)[0].text
    [proposed] = session.of(CodeProposed)  # streamed once: the code needed no repair
    assert proposed.code == DEFINE
    [run] = session.of(ExecutionFinished)
    assert [line.text for line in run.logs] == ["12"]
    assert not [e for e in session.of(Log) if "reply read as" in e.message]
    written_back = server.requests[1].messages[2]
    assert written_back == {
        "role": "assistant",
        "content": f"Thought: Define area, then test it.\n```python\n{DEFINE}\n```",
    }


async def test_a_json_reply_is_read_and_a_reask_names_the_fenced_forms(
    server: ScriptedModel, settings: Settings
) -> None:
    server.push(
        shaped_reply("json", "Define it.", "execute_code", code=DEFINE),
        text("{}"),
        fenced("", answer="It is 12."),
    )
    session = await code_session(settings)
    assert (session.state.status, session.state.final_answer) == ("completed", "It is 12.")
    assert session.of(CodeProposed)[0].code == DEFINE
    reask = server.requests[2].messages[-1]["content"]
    assert "Reply again in exactly one of these two forms, and nothing else:\nThought: " in reask
    assert f"```python\n{DEFINE}\n```\nIf it already does what the task asks, answer with a " in (
        reask
    )


async def test_json_is_kept_for_a_user_who_asks_for_it(
    server: ScriptedModel, settings: Settings
) -> None:
    server.push(
        shaped_reply("json", "Define it.", "execute_code", code=DEFINE),
        shaped_reply("json", "Done.", "provide_answer", final_answer="It is 12."),
    )
    session = await code_session(settings, reply_format="json")
    assert session.state.final_answer == "It is 12."
    assert session.of(SessionStarted)[0].params["reply_format"] == "json"
    assert "exactly one JSON object" in server.requests[0].messages[0]["content"]
    assert server.requests[0].response_format == {"type": "json_object"}
    assert server.requests[1].messages[2]["content"].startswith('{"thought": "Define it."')


async def test_a_continued_fenced_session_gets_its_history_back_fenced(
    server: ScriptedModel, settings: Settings
) -> None:
    server.push(fenced("Define area.", code=DEFINE), fenced("", answer="12"))
    launch = prepare(CodeRequest(task="Write area(w, h)."), settings)
    first = await converse(settings.db, launch, User(Conversation(), []))
    server.push(fenced("Call it again.", code="print(area(2, 5))"), fenced("", answer="10"))
    again = continue_session(first.stored, settings, message="And 2 by 5?", choices=FixedChoices())
    session = await converse(settings.db, again, User(Conversation(), []))
    assert session.state.final_answer == "10"
    history = server.requests[-2].messages
    assert 'a "Final answer:" line' in history[0]["content"]
    assert history[2]["content"] == f"Thought: Define area.\n```python\n{DEFINE}\n```"
    assert history[4]["content"] == "Final answer: 12"
    assert history[-1]["content"].endswith("And 2 by 5?")
