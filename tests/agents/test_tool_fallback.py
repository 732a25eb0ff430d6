"""The task executor on a server that cannot do tool calls: it refuses requests that carry
tools (HTTP 400), or it ignores them and the model writes its call as text. Either way the
session goes over to CALL lines once, says so, and the lookup and the task still run. The
scripted model through litellm, a real sandbox, real SQLite."""

from __future__ import annotations

import json
from pathlib import Path

from support.scripted_model import ScriptedModel, text
from support.sessions import scripted_settings
from task_support import code_reply, record_task, verdict

from tui_agent.agents.launch import prepare
from tui_agent.agents.requests import TaskRequest, WorkflowRequest
from tui_agent.agents.task.breaker import CircuitBreaker
from tui_agent.agents.task.workflow import parse_workflow
from tui_agent.config import Settings
from tui_agent.events import Log, ToolResult
from tui_agent.store.task_cache import TaskCache

REFUSAL = "registry.ollama.ai/library/tiny does not support tools"
LOOKUP = {"library": "json", "query": "dumps"}


async def run(settings: Settings, request: TaskRequest | WorkflowRequest):
    launch = prepare(
        request,
        settings,
        session_id="fallback0001",
        cache=TaskCache(settings.db),
        breaker=CircuitBreaker(),
    )
    return await record_task(settings.db, launch)


def fallback_lines(ran) -> list[str]:
    return [e.message for e in ran.of(Log) if "text protocol" in e.message]


async def test_a_server_refusing_tools_gets_call_lines_for_the_rest_of_the_session(
    tmp_path: Path, backend: str
):
    replies = [
        text(f"CALL search_documentation {json.dumps(LOOKUP)}"),
        code_reply("import json\ncontext['text'] = json.dumps(context['data'])"),
        verdict(True, "ok"),
    ]
    with ScriptedModel(replies, refuse_tools=REFUSAL) as server:
        settings = scripted_settings(server, tmp_path, backend)
        ran = await run(settings, TaskRequest(task="Serialise data", context={"data": [1]}))

    assert ran.state.status == "completed" and ran.context["text"] == "[1]"
    refused, *after = server.requests
    assert refused.tools  # the first request offered the tool and was refused
    assert all(request.tools is None for request in after)
    assert "CALL search_documentation" in after[0].messages[0]["content"]
    assert after[1].messages[-1]["content"].startswith("RESULT search_documentation")
    [said] = fallback_lines(ran)
    assert "cannot do tool calls" in said
    [result] = ran.of(ToolResult)
    assert result.ok and "dumps" in result.output


async def test_a_server_ignoring_tools_has_the_call_written_as_text_answered(
    tmp_path: Path, backend: str
):
    call = json.dumps({"name": "search_documentation", "arguments": LOOKUP})
    replies = [
        text(f"I will look it up.\n<tool_call>\n{call}\n</tool_call>"),
        code_reply("import json\ncontext['text'] = json.dumps(context['data'])"),
        verdict(True, "ok"),
    ]
    with ScriptedModel(replies) as server:
        settings = scripted_settings(server, tmp_path, backend)
        ran = await run(settings, TaskRequest(task="Serialise data", context={"data": [1]}))

    assert ran.state.status == "completed" and ran.context["text"] == "[1]"
    assert server.requests[0].tools and server.requests[1].tools is None
    assert "CALL search_documentation" in server.requests[1].messages[0]["content"]
    answer = server.requests[1].messages[-1]["content"]
    assert answer.startswith("RESULT search_documentation") and "dumps" in answer
    [said] = fallback_lines(ran)
    assert "ignored the tools" in said


async def test_the_fall_back_is_said_once_for_the_whole_workflow(tmp_path: Path, backend: str):
    workflow = parse_workflow(
        {"nodes": [{"id": "one", "prompt": "Add one to n"}, {"id": "two", "prompt": "Double n"}]},
        "test",
    )
    replies = [
        code_reply("context['n'] = context['n'] + 1"),
        verdict(True, "added"),
        code_reply("context['n'] = context['n'] * 2"),
        verdict(True, "doubled"),
    ]
    with ScriptedModel(replies, refuse_tools=REFUSAL) as server:
        settings = scripted_settings(server, tmp_path, backend)
        ran = await run(settings, WorkflowRequest(workflow=workflow, context={"n": 1}))

    assert ran.state.status == "completed" and ran.context["n"] == 4
    assert [bool(r.tools) for r in server.requests] == [True, False, False, False, False]
    assert len(fallback_lines(ran)) == 1
